"""Runners wait for the store's queue bell instead of polling: the store rings it whenever rollouts enter the queue
(enqueued or requeued for a retry), and a runner in another process wakes at the ring."""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import asyncio
import multiprocessing
import time

from agentlightning.execution.events import ThreadingEvent
from agentlightning.tracer.dummy import DummyTracer
from agentlightning.types import RolloutConfig

from al_integration.runner import QueueBell, QueueBellRunner
from al_integration.store import SqliteLightningStore


def test_the_store_rings_when_rollouts_enter_its_queue(tmp_path):
    store = SqliteLightningStore(tmp_path / "store.db")
    rings = []
    store.ring_on_enqueue(lambda: rings.append(time.monotonic()))

    async def scenario():
        rollout = await store.enqueue_rollout(input="task", config=RolloutConfig(max_attempts=2,
                                                                                 retry_condition=["failed"]))
        assert len(rings) == 1
        attempted = await store.dequeue_rollout()
        assert len(rings) == 1 and await store.dequeue_rollout() is None
        await store.update_attempt(rollout.rollout_id, attempted.attempt.attempt_id, status="failed")
        assert len(rings) == 2  # requeued for its second attempt
        assert (await store.dequeue_rollout()).rollout_id == rollout.rollout_id
        await store.close()

    asyncio.run(scenario())


def _ring_later(bell: QueueBell, delay: float) -> None:
    time.sleep(delay)
    bell.ring()


def test_an_idle_runner_wakes_at_a_ring_from_another_process():
    bell = QueueBell()
    runner = QueueBellRunner(DummyTracer(), bell=bell, poll_interval=30.0)
    ringer = multiprocessing.get_context("fork").Process(target=_ring_later, args=(bell, 0.3))
    ringer.start()
    started = time.monotonic()
    asyncio.run(runner._sleep_until_next_poll())
    woke_after = time.monotonic() - started
    ringer.join()
    assert 0.25 <= woke_after < 5.0 and bell.rings == 1


def test_without_a_ring_a_runner_polls_after_its_interval_and_stops_when_told():
    runner = QueueBellRunner(DummyTracer(), bell=QueueBell(), poll_interval=0.3)
    started = time.monotonic()
    asyncio.run(runner._sleep_until_next_poll())
    assert 0.3 <= time.monotonic() - started < 3.0

    runner = QueueBellRunner(DummyTracer(), bell=QueueBell(), poll_interval=30.0)
    stop = ThreadingEvent()
    stop.set()
    started = time.monotonic()
    asyncio.run(runner._sleep_until_next_poll(stop))
    assert time.monotonic() - started < 1.0
