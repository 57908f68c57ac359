"""Glue to Agent Lightning and Mubit: store, policy server, Mubit engine and hook.

Importing any of our packages applies the offline defaults first (see `offline.py`).
"""

from al_integration.offline import apply_offline_defaults

apply_offline_defaults()
