"""Runners that wake when rollouts are enqueued, instead of polling the store over HTTP.

agl 0.3.0's `LitAgentRunner` asks the store server for work every `poll_interval` while idle. With one runner
per rollout of a GRPO step (32), idle polling is ~150 HTTP requests a second into the algorithm process, all
through the learner's update, and a rollout still waits half a poll interval on average before a runner takes it.

`QueueBell` is a counter in shared memory, made before agl forks its runner processes: the store rings it
whenever its rollout queue gains items (`SqliteLightningStore.ring_on_enqueue`); a `QueueBellRunner` watches it
(a memory read every 50 ms, no request) and asks the store only after a ring, or after
`poll_interval` without one (so rollouts enqueued some other way, e.g. through another store server, are still
taken). Runners on other hosts share no memory with the store: they keep agl's plain runner.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from typing import Any

from agentlightning import LitAgentRunner, Tracer
from agentlightning.execution.events import ExecutionEvent

# How often an idle runner reads the bell: 16 idle runners at 10 ms took ~0.3 of a core from the learner on 2
# cores; at 50 ms a rollout waits 25 ms more on average, against tens of seconds of generation.
WATCH_INTERVAL_S = 0.05


class QueueBell:
    """A ring counter in shared memory; any change means "the queue may have rollouts"."""

    def __init__(self) -> None:
        self._rings = multiprocessing.RawValue("Q", 0)  # one aligned word: reads and writes are atomic

    def ring(self) -> None:
        self._rings.value += 1

    @property
    def rings(self) -> int:
        return self._rings.value


class QueueBellRunner(LitAgentRunner):
    """`LitAgentRunner` whose idle wait ends at the next ring of `bell` (or after `poll_interval`)."""

    def __init__(self, tracer: Tracer, *, bell: QueueBell, **kwargs: Any) -> None:
        super().__init__(tracer, **kwargs)
        self.bell = bell
        self._rings_seen = bell.rings

    async def _sleep_until_next_poll(self, event: ExecutionEvent | None = None) -> None:
        deadline = time.monotonic() + self._poll_interval
        while self.bell.rings == self._rings_seen and time.monotonic() < deadline:
            if event is not None and event.is_set():
                return
            await asyncio.sleep(WATCH_INTERVAL_S)
        # Read before the next dequeue: a ring after this read wakes the next wait, none is missed.
        self._rings_seen = self.bell.rings
