"""Read a finished (or running) store file: the `inspect` summary, the JSONL export, the dashboard server.

Everything goes through agl's store API on a read-only `SqliteLightningStore`, so the figures are
what agl itself reports (final reward = `agl.find_final_reward` over the latest attempt's spans).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from agentlightning.emitter.reward import find_final_reward
from agentlightning.store.client_server import LightningStoreServer
from agentlightning.types import Rollout

from al_integration.store.guard import ReadOnlyGuard
from al_integration.store.store import SqliteLightningStore

PAGE = 500


async def iter_rollouts(store: SqliteLightningStore) -> AsyncIterator[Rollout]:
    """Every rollout in insertion order, a page at a time."""
    offset = 0
    while True:
        page = await store.query_rollouts(limit=PAGE, offset=offset)
        for rollout in page.items:
            yield rollout
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return


async def rollout_record(store: SqliteLightningStore, rollout: Rollout) -> dict[str, Any]:
    """One export line: the rollout (with its latest attempt), that attempt's spans and its final reward."""
    spans = (await store.query_spans(rollout.rollout_id, "latest")).items
    record = rollout.model_dump(mode="json")
    record["final_reward"] = find_final_reward(spans)
    record["spans"] = [span.model_dump(mode="json") for span in spans]
    return record


async def summarize(store: SqliteLightningStore) -> dict[str, Any]:
    """`{"rollouts", "spans", "by_status", "reward": {"mean", "min", "max", "count"}}`."""
    by_status: Counter[str] = Counter()
    rewards: list[float] = []
    async for rollout in iter_rollouts(store):
        by_status[rollout.status] += 1
        reward = find_final_reward((await store.query_spans(rollout.rollout_id, "latest")).items)
        if reward is not None:
            rewards.append(float(reward))
    stats = await store.statistics()
    return {
        "rollouts": stats["total_rollouts"],
        "spans": stats["total_spans"],
        "by_status": dict(sorted(by_status.items())),
        "reward": {
            "mean": sum(rewards) / len(rewards) if rewards else None,
            "min": min(rewards) if rewards else None,
            "max": max(rewards) if rewards else None,
            "count": len(rewards),
        },
    }


async def export_jsonl(
    store: SqliteLightningStore, output: Path, on_rollout: Callable[[int, int], None] | None = None
) -> int:
    """Write one JSON line per rollout to `output` (atomically: a temp file renamed at the end)."""
    total = (await store.query_rollouts(limit=0)).total
    tmp = output.with_name(output.name + ".tmp")
    count = 0
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            async for rollout in iter_rollouts(store):
                fh.write(json.dumps(await rollout_record(store, rollout), ensure_ascii=False) + "\n")
                count += 1
                if on_rollout is not None:
                    on_rollout(count, total)
        os.replace(tmp, output)
    finally:
        tmp.unlink(missing_ok=True)
    return count


def dashboard_server(store: SqliteLightningStore, port: int) -> LightningStoreServer:
    """agl's own HTTP server (and bundled dashboard at `/`) over the file, bound to 127.0.0.1 only; a request
    that would write answers 403 JSON (`ReadOnlyGuard`)."""
    server = LightningStoreServer(store, host="127.0.0.1", port=port, launch_mode="asyncio")
    server.app.add_middleware(ReadOnlyGuard)
    return server
