"""An embedded, Mubit-compatible memory engine that speaks the hosted HTTP contract.

The hosted Mubit service cannot be reached from a training host and no self-hostable server exists,
so this package serves the control-plane routes that `mubit-sdk` and `mubit_agent_lightning` call,
over one SQLite file. Start it with `python -m al_integration.mubit_local serve --db PATH` or
in-process with `EmbeddedMubit(db_path).start()`. See docs/mubit.md.
"""

from al_integration.mubit_local.ranking import RankingWeights
from al_integration.mubit_local.server import EmbeddedMubit, serve_forever
from al_integration.mubit_local.storage import MemoryStore

__all__ = ["EmbeddedMubit", "MemoryStore", "RankingWeights", "serve_forever"]
