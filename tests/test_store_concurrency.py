"""Concurrent use: several threads with their own event loops (as the LightningStoreServer's uvicorn
thread and the algorithm's loop do), and several processes on one file (the store claims zero_copy).

Invariants: every rollout is dequeued exactly once, every span lands, span sequence ids never repeat.
"""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import asyncio
import multiprocessing
import threading

import pytest
from agentlightning.types import Span

from al_integration.store import SqliteLightningStore

N_ROLLOUTS = 60
SPANS_EACH = 3


async def work_queue(store: SqliteLightningStore, worker_id: str) -> list[str]:
    """A runner's loop: dequeue, draw sequence ids, add spans, finish; until the queue is empty."""
    taken = []
    while (rollout := await store.dequeue_rollout(worker_id=worker_id)) is not None:
        taken.append(rollout.rollout_id)
        for _ in range(SPANS_EACH):
            sequence_id = await store.get_next_span_sequence_id(
                rollout.rollout_id, rollout.attempt.attempt_id
            )
            span = Span.from_attributes(
                attributes={"worker": worker_id},
                rollout_id=rollout.rollout_id,
                attempt_id=rollout.attempt.attempt_id,
                sequence_id=sequence_id,
                name="work",
            )
            await store.add_span(span)
        await store.update_attempt(rollout.rollout_id, "latest", status="succeeded")
    return taken


async def check_all_done(store: SqliteLightningStore, taken: list[str]) -> None:
    assert len(taken) == N_ROLLOUTS and len(set(taken)) == N_ROLLOUTS  # each dequeued exactly once
    rollouts = (await store.query_rollouts()).items
    assert {r.status for r in rollouts} == {"succeeded"}
    for rollout in rollouts:
        spans = (await store.query_spans(rollout.rollout_id)).items
        assert [s.sequence_id for s in spans] == list(range(1, SPANS_EACH + 1))
        assert len({s.attributes["worker"] for s in spans}) == 1
    assert (await store.statistics())["total_spans"] == N_ROLLOUTS * SPANS_EACH


def test_threads_with_their_own_event_loops_share_one_store(tmp_path):
    store = SqliteLightningStore(tmp_path / "store.sqlite")

    async def enqueue():
        await store.enqueue_many_rollouts([])
        for i in range(N_ROLLOUTS):
            await store.enqueue_rollout(input=i)

    asyncio.run(enqueue())
    results: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def runner(worker_id: str) -> None:
        try:
            results[worker_id] = asyncio.run(work_queue(store, worker_id))
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=runner, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert sum(bool(taken) for taken in results.values()) >= 2  # the work really was shared
    asyncio.run(check_all_done(store, [rid for taken in results.values() for rid in taken]))
    asyncio.run(store.close())


def _process_worker(path: str, worker_id: str, queue) -> None:
    store = SqliteLightningStore(path)
    queue.put(asyncio.run(work_queue(store, worker_id)))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_processes_share_one_file(tmp_path):
    path = str(tmp_path / "store.sqlite")
    store = SqliteLightningStore(path)

    async def enqueue():
        for i in range(N_ROLLOUTS):
            await store.enqueue_rollout(input=i)

    asyncio.run(enqueue())
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    workers = [ctx.Process(target=_process_worker, args=(path, f"p{i}", results)) for i in range(3)]
    for worker in workers:
        worker.start()
    taken = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    asyncio.run(check_all_done(store, [rid for chunk in taken for rid in chunk]))
    asyncio.run(store.close())
