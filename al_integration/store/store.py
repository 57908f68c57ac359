"""`SqliteLightningStore`: agl's collection-based LightningStore persisted in one SQLite file.

All store semantics (queue, attempts, retries, timeouts, span sequence ids, resources) are agl's own
`CollectionBasedLightningStore`; this class plugs in the SQLite collections and adds two things:
- every write operation of the LightningStore contract runs as ONE SQLite transaction (agl splits
  e.g. `dequeue_rollout` into a queue pop and an attempt insert; a crash between them would strand the
  rollout), which is also faster (one commit per operation);
- `wait_for_rollouts` polls every `poll_interval_s` (agl's generic one polls every 10 s) and runs
  agl's health check while waiting, so timeouts fire even when the algorithm is the only caller.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agentlightning.store.base import LightningStoreCapabilities, LightningStoreStatistics, is_finished
from agentlightning.store.collection_based import CollectionBasedLightningStore
from agentlightning.types import Rollout
from agentlightning.utils.metrics import MetricsBackend

from al_integration.store.database import SCHEMA_VERSION, SqliteDatabase
from al_integration.store.sqlite_collections import SqliteLightningCollections

# The contract's write operations; each becomes a single transaction (nested atomic() blocks join it).
WRITE_OPERATIONS = (
    "start_rollout",
    "enqueue_rollout",
    "enqueue_many_rollouts",
    "dequeue_rollout",
    "dequeue_many_rollouts",
    "start_attempt",
    "add_resources",
    "update_resources",
    "add_span",
    "add_many_spans",
    "add_otel_span",
    "get_next_span_sequence_id",
    "get_many_span_sequence_ids",
    "update_rollout",
    "update_attempt",
    "update_worker",
)


def _one_transaction(operation: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(operation)
    async def wrapper(self: SqliteLightningStore, *args: Any, **kwargs: Any) -> Any:
        async with self.db.transaction(write=True):
            return await operation(self, *args, **kwargs)

    return wrapper


def _reopen(path: str, options: dict[str, Any]) -> SqliteLightningStore:
    return SqliteLightningStore(path, **options)


class SqliteLightningStore(CollectionBasedLightningStore[SqliteLightningCollections]):
    """A persistent LightningStore on one SQLite file (WAL), safe across threads, loops and processes.

    Args:
        path: the store file; created with the schema if missing or empty.
        read_only: open for reading only (inspect / export / serve a finished run); agl's health check,
            which may time out stale rollouts, is skipped.
        synchronous: SQLite `synchronous` pragma. "NORMAL" survives process crashes and SIGKILL;
            "FULL" also survives a power cut.
        busy_timeout_s: how long a write waits for another process holding the file's write lock.
        max_bytes: optional cap on the database size (a write beyond it fails as "full").
        poll_interval_s: how often `wait_for_rollouts` re-reads the rollouts.
        scan_debounce_seconds: agl's debounce of the unhealthy-rollout scan (timeouts, heartbeats).
        tracker: agl metrics backend, as for the other stores.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        synchronous: str = "NORMAL",
        busy_timeout_s: float = 30.0,
        max_bytes: int | None = None,
        poll_interval_s: float = 0.2,
        scan_debounce_seconds: float = 10.0,
        tracker: MetricsBackend | None = None,
    ) -> None:
        self._options: dict[str, Any] = dict(
            read_only=read_only,
            synchronous=synchronous,
            busy_timeout_s=busy_timeout_s,
            max_bytes=max_bytes,
            poll_interval_s=poll_interval_s,
            scan_debounce_seconds=scan_debounce_seconds,
        )
        self.db = SqliteDatabase(
            path,
            read_only=read_only,
            synchronous=synchronous,
            busy_timeout_s=busy_timeout_s,
            max_bytes=max_bytes,
        )
        self.path = self.db.path
        self.read_only = read_only
        self._poll_interval_s = poll_interval_s
        super().__init__(
            collections=SqliteLightningCollections(self.db, tracker=tracker),
            tracker=tracker,
            scan_debounce_seconds=scan_debounce_seconds,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as (path, options): a spawned process opens its own connection to the same file."""
        return _reopen, (str(self.path), self._options)

    def __repr__(self) -> str:
        return f"SqliteLightningStore({str(self.path)!r}{', read_only=True' if self.read_only else ''})"

    @property
    def capabilities(self) -> LightningStoreCapabilities:
        # zero_copy: every process that opens the file sees the same single copy of the data.
        return LightningStoreCapabilities(
            thread_safe=True, async_safe=True, zero_copy=True, otlp_traces=False
        )

    async def statistics(self) -> LightningStoreStatistics:
        return {
            **(await super().statistics()),
            "path": str(self.path),
            "schema_version": SCHEMA_VERSION,
            "file_bytes": self.db.file_bytes(),
        }  # type: ignore[typeddict-unknown-key]

    def ring_on_enqueue(self, ring: Callable[[], None]) -> None:
        """Call `ring()` whenever rollouts enter the queue (enqueued, or requeued for a retry), so runners can wait
        for it instead of polling (`al_integration.runner.QueueBell`). A runner that dequeues at once still waits
        for the enqueuing transaction: every operation holds the store's write lock."""
        self.collections.rollout_queue.on_enqueue = ring

    async def close(self) -> None:
        """Close this process's connection (the last one to close folds the WAL into the file)."""
        self.db.close()

    async def _scan_for_unhealthy_rollouts(self) -> None:
        if self.read_only:  # a read-only view must not time out or requeue anything
            return
        await super()._scan_for_unhealthy_rollouts()

    async def wait_for_rollouts(
        self, *, rollout_ids: list[str], timeout: float | None = None
    ) -> list[Rollout]:
        """Wait until the rollouts finish or `timeout` passes; return the finished ones in input order.

        Rollout ids the store does not know are dropped at once, as agl's other stores do.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        finished: dict[str, Rollout] = {}
        pending = list(dict.fromkeys(rollout_ids))
        first = True
        while True:
            await self._scan_for_unhealthy_rollouts()
            async with self.collections.atomic(mode="r", labels=["rollouts"]) as collections:
                found = await collections.rollouts.query(filter={"rollout_id": {"within": pending}})
            by_id = {rollout.rollout_id: rollout for rollout in found.items}
            if first:
                pending = [rid for rid in pending if rid in by_id]
                first = False
            for rid, rollout in by_id.items():
                if is_finished(rollout):
                    finished[rid] = rollout
            pending = [rid for rid in pending if rid not in finished]
            now = time.monotonic()
            if not pending or (deadline is not None and now >= deadline):
                break
            await asyncio.sleep(
                self._poll_interval_s if deadline is None else min(self._poll_interval_s, deadline - now)
            )
        return [finished[rid] for rid in rollout_ids if rid in finished]


for _name in WRITE_OPERATIONS:
    setattr(SqliteLightningStore, _name, _one_transaction(getattr(CollectionBasedLightningStore, _name)))
