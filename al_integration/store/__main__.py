"""`python -m al_integration.store ...`: see `al_integration/store/cli.py`."""

from al_integration.store.cli import main
from common.cli import run_cli

run_cli(main)
