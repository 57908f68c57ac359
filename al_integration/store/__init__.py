"""A persistent Agent Lightning LightningStore on one SQLite file (see docs/store.md).

`SqliteLightningStore(path)` is a drop-in for agl's `InMemoryLightningStore`, e.g.
`agl.Trainer(store=SqliteLightningStore("runs/x/store.sqlite"), strategy=..., n_runners=4)`.
"""

from al_integration.store.database import SCHEMA_VERSION, StoreFileError
from al_integration.store.store import SqliteLightningStore

__all__ = ["SCHEMA_VERSION", "SqliteLightningStore", "StoreFileError"]
