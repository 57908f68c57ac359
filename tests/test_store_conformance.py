"""The same store scenarios against agl's InMemoryLightningStore and our SqliteLightningStore.

Every assertion holds for both: if the SQLite store drifts from agl's reference semantics (queue
order, retries, sequence ids, resource versions, query filters, waiting, statistics), one
parametrisation fails and the other passes.
"""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import asyncio
import time

import pytest
from agentlightning.store.memory import InMemoryLightningStore
from agentlightning.types import PromptTemplate, RolloutConfig, Span

from al_integration.store import SqliteLightningStore


@pytest.fixture(params=["memory", "sqlite"])
def make_store(request, tmp_path):
    """A factory, so scenarios can pass agl's options (scan debounce) to either store."""
    opened = []

    def factory(**options):
        if request.param == "memory":
            store = InMemoryLightningStore(**options)
        else:
            store = SqliteLightningStore(tmp_path / "store.sqlite", **options)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        if isinstance(store, SqliteLightningStore):
            asyncio.run(store.close())


def run(coro):
    return asyncio.run(coro)


def span(rollout_id, attempt_id, sequence_id, name, **attributes):
    return Span.from_attributes(
        attributes=attributes,
        rollout_id=rollout_id,
        attempt_id=attempt_id,
        sequence_id=sequence_id,
        name=name,
        start_time=1000.0 + sequence_id,
        end_time=1000.5 + sequence_id,
    )


def test_queue_is_fifo_and_dequeue_creates_first_attempt(make_store):
    async def scenario(store):
        enqueued = [await store.enqueue_rollout(input={"i": i}, mode="train") for i in range(5)]
        assert [r.status for r in enqueued] == ["queuing"] * 5
        dequeued = [await store.dequeue_rollout(worker_id="w1") for _ in range(5)]
        assert [r.rollout_id for r in dequeued] == [r.rollout_id for r in enqueued]
        assert [r.input for r in dequeued] == [{"i": i} for i in range(5)]
        assert all(r.status == "preparing" and r.attempt.sequence_id == 1 for r in dequeued)
        assert dequeued[0].attempt.worker_id == "w1"
        assert await store.dequeue_rollout() is None
        batch = await store.enqueue_many_rollouts([])
        assert list(batch) == []

    run(scenario(make_store()))


def test_failed_attempts_are_retried_until_max_attempts(make_store):
    async def scenario(store):
        config = RolloutConfig(max_attempts=3, retry_condition=["failed"])
        rollout = await store.enqueue_rollout(input="task", config=config)
        statuses = []
        for expected_sequence in (1, 2, 3):
            attempted = await store.dequeue_rollout()
            assert attempted.rollout_id == rollout.rollout_id
            assert attempted.attempt.sequence_id == expected_sequence
            await store.update_attempt(rollout.rollout_id, attempted.attempt.attempt_id, status="failed")
            statuses.append((await store.get_rollout_by_id(rollout.rollout_id)).status)
        assert statuses == ["requeuing", "requeuing", "failed"]
        assert await store.dequeue_rollout() is None
        attempts = await store.query_attempts(rollout.rollout_id)
        assert [a.sequence_id for a in attempts] == [1, 2, 3]
        assert [a.status for a in attempts] == ["failed"] * 3
        latest = await store.get_latest_attempt(rollout.rollout_id)
        assert latest.sequence_id == 3
        desc = await store.query_attempts(rollout.rollout_id, sort_order="desc", limit=2)
        assert [a.sequence_id for a in desc] == [3, 2] and desc.total == 3

    run(scenario(make_store()))


def test_succeeded_attempt_finishes_rollout_and_frees_worker(make_store):
    async def scenario(store):
        rollout = await store.enqueue_rollout(input="task")
        attempted = await store.dequeue_rollout(worker_id="w7")
        worker = await store.get_worker_by_id("w7")
        assert worker.status == "busy" and worker.current_rollout_id == rollout.rollout_id
        await store.update_attempt(rollout.rollout_id, "latest", status="succeeded")
        finished = await store.get_rollout_by_id(rollout.rollout_id)
        assert finished.status == "succeeded" and finished.end_time is not None
        assert finished.attempt.attempt_id == attempted.attempt.attempt_id
        assert (await store.get_worker_by_id("w7")).status == "idle"
        workers = await store.query_workers(status_in=["idle"])
        assert [w.worker_id for w in workers] == ["w7"]

    run(scenario(make_store()))


def test_timed_out_attempt_is_requeued_by_the_health_check(make_store):
    async def scenario(store):
        config = RolloutConfig(timeout_seconds=0.2, max_attempts=2, retry_condition=["timeout"])
        rollout = await store.enqueue_rollout(input="slow", config=config)
        first = await store.dequeue_rollout()
        await store.add_span(span(rollout.rollout_id, first.attempt.attempt_id, 1, "work"))
        assert (await store.get_rollout_by_id(rollout.rollout_id)).status == "running"
        await asyncio.sleep(0.3)
        await store.query_rollouts()  # any public call runs agl's health check
        attempts = await store.query_attempts(rollout.rollout_id)
        assert [a.status for a in attempts] == ["timeout"]
        assert (await store.get_rollout_by_id(rollout.rollout_id)).status == "requeuing"
        second = await store.dequeue_rollout()
        assert second.rollout_id == rollout.rollout_id and second.attempt.sequence_id == 2

    run(scenario(make_store(scan_debounce_seconds=0)))


def test_start_rollout_and_start_attempt(make_store):
    async def scenario(store):
        started = await store.start_rollout(input={"q": 1}, mode="val", metadata={"k": "v"})
        assert started.status == "preparing" and started.attempt.sequence_id == 1
        again = await store.start_attempt(started.rollout_id)
        assert again.attempt.sequence_id == 2
        stored = await store.get_rollout_by_id(started.rollout_id)
        assert stored.metadata == {"k": "v"} and stored.mode == "val"
        assert stored.attempt.attempt_id == again.attempt.attempt_id
        updated = await store.update_rollout(started.rollout_id, status="cancelled", metadata={"k": "w"})
        assert updated.status == "cancelled" and updated.metadata == {"k": "w"}
        assert await store.get_rollout_by_id("ro-missing") is None

    run(scenario(make_store()))


def test_span_sequence_ids_increase_per_rollout(make_store):
    async def scenario(store):
        a = await store.start_rollout(input="a")
        b = await store.start_rollout(input="b")
        ids_a = [await store.get_next_span_sequence_id(a.rollout_id, a.attempt.attempt_id) for _ in range(3)]
        ids_b = [await store.get_next_span_sequence_id(b.rollout_id, b.attempt.attempt_id) for _ in range(2)]
        assert ids_a == [1, 2, 3] and ids_b == [1, 2]
        await store.add_span(span(a.rollout_id, a.attempt.attempt_id, 10, "explicit"))
        assert await store.get_next_span_sequence_id(a.rollout_id, a.attempt.attempt_id) == 11
        many = await store.get_many_span_sequence_ids(
            [(a.rollout_id, a.attempt.attempt_id), (b.rollout_id, "x"), (a.rollout_id, "x")]
        )
        assert list(many) == [12, 3, 13]
        duplicate = span(a.rollout_id, a.attempt.attempt_id, 10, "explicit")
        first = (await store.query_spans(a.rollout_id)).items[0]
        duplicate.span_id = first.span_id
        assert await store.add_span(duplicate) is None  # same primary key: skipped, not stored twice
        assert (await store.query_spans(a.rollout_id)).total == 1

    run(scenario(make_store()))


def test_spans_round_trip_and_query_filters_sort_pagination(make_store):
    async def scenario(store):
        r = await store.start_rollout(input="q")
        attempt_id = r.attempt.attempt_id
        names = ["llm.call", "tool.search", "llm.call", "agentlightning.message", "tool.fetch"]
        added = await store.add_many_spans(
            [span(r.rollout_id, attempt_id, i + 1, name, idx=i) for i, name in enumerate(names)]
        )
        assert len(added) == 5
        spans = await store.query_spans(r.rollout_id)
        assert [s.sequence_id for s in spans] == [1, 2, 3, 4, 5]
        assert (
            spans.items[2].attributes == {"idx": 2} and spans.items[2].model_dump() == added[2].model_dump()
        )
        assert [s.sequence_id for s in await store.query_spans(r.rollout_id, name="llm.call")] == [1, 3]
        tools = await store.query_spans(r.rollout_id, "latest", name_contains="tool.")
        assert [s.name for s in tools] == ["tool.search", "tool.fetch"]
        either = await store.query_spans(
            r.rollout_id, name="llm.call", name_contains="fetch", filter_logic="or"
        )
        assert [s.sequence_id for s in either] == [1, 3, 5]
        page = await store.query_spans(
            r.rollout_id, sort_by="sequence_id", sort_order="desc", limit=2, offset=1
        )
        assert [s.sequence_id for s in page] == [4, 3] and page.total == 5
        assert (await store.query_spans(r.rollout_id, attempt_id="at-other")).total == 0
        assert (await store.query_spans("ro-none", "latest")).total == 0
        assert (await store.query_spans(r.rollout_id, span_id=added[1].span_id)).items[
            0
        ].name == "tool.search"

    run(scenario(make_store()))


def test_query_rollouts_filters_sort_and_pagination(make_store):
    async def scenario(store):
        ids = []
        for i in range(6):
            ids.append((await store.enqueue_rollout(input=i, mode="train" if i % 2 else "val")).rollout_id)
            time.sleep(0.002)  # distinct start times
        for _ in range(2):
            attempted = await store.dequeue_rollout()
            await store.update_attempt(attempted.rollout_id, "latest", status="succeeded")
        everything = await store.query_rollouts()
        assert [r.rollout_id for r in everything] == ids and everything.total == 6
        done = await store.query_rollouts(status_in=["succeeded"])
        assert sorted(r.rollout_id for r in done) == sorted(ids[:2])
        assert all(r.attempt.status == "succeeded" for r in done)
        newest = await store.query_rollouts(sort_by="start_time", sort_order="desc", limit=3, offset=1)
        assert [r.rollout_id for r in newest] == ids[4:1:-1] and newest.total == 6
        picked = await store.query_rollouts(rollout_id_in=[ids[5], ids[0], "ro-missing"])
        assert sorted(r.rollout_id for r in picked) == sorted([ids[0], ids[5]])
        by_fragment = await store.query_rollouts(rollout_id_contains=ids[3][3:9])
        assert [r.rollout_id for r in by_fragment] == [ids[3]]
        either = await store.query_rollouts(
            status_in=["succeeded"], rollout_id_in=[ids[5]], filter_logic="or"
        )
        assert sorted(r.rollout_id for r in either) == sorted([ids[0], ids[1], ids[5]])
        by_status = await store.query_rollouts(sort_by="status", limit=2)
        assert [r.status for r in by_status] == ["queuing", "queuing"]
        assert (await store.query_rollouts(limit=0)).total == 6

    run(scenario(make_store()))


def test_resource_versions(make_store):
    async def scenario(store):
        assert await store.get_latest_resources() is None
        first = await store.add_resources({"prompt": PromptTemplate(template="v1 {x}", engine="f-string")})
        assert first.version == 1
        updated = await store.update_resources(
            first.resources_id, {"prompt": PromptTemplate(template="v2 {x}", engine="f-string")}
        )
        assert updated.resources_id == first.resources_id and updated.version == 2
        latest = await store.get_latest_resources()
        assert latest.resources["prompt"].template == "v2 {x}" and latest.version == 2
        named = await store.update_resources(
            "rs-named", {"prompt": PromptTemplate(template="n", engine="f-string")}
        )
        assert named.version == 1 and (await store.get_latest_resources()).resources_id == "rs-named"
        assert (await store.get_resources_by_id(first.resources_id)).version == 2
        listed = await store.query_resources(sort_by="update_time", sort_order="asc")
        assert [r.resources_id for r in listed] == [first.resources_id, "rs-named"]
        rollout = await store.enqueue_rollout(input="uses latest")
        assert rollout.resources_id == "rs-named"

    run(scenario(make_store()))


def test_wait_for_rollouts(make_store):
    async def scenario(store):
        a = await store.enqueue_rollout(input="a")
        b = await store.enqueue_rollout(input="b")
        assert await store.wait_for_rollouts(rollout_ids=[a.rollout_id], timeout=0) == []

        async def finish_later():
            await asyncio.sleep(0.3)
            for _ in range(2):
                attempted = await store.dequeue_rollout()
                await store.update_attempt(attempted.rollout_id, "latest", status="succeeded")

        finisher = asyncio.create_task(finish_later())
        started = time.monotonic()
        done = await store.wait_for_rollouts(
            rollout_ids=[b.rollout_id, a.rollout_id, "ro-unknown"], timeout=5
        )
        assert time.monotonic() - started < 3
        assert [r.rollout_id for r in done] == [b.rollout_id, a.rollout_id]
        assert all(r.status == "succeeded" for r in done)
        await finisher

    run(scenario(make_store()))


def test_statistics_count_everything(make_store):
    async def scenario(store):
        await store.add_resources({"p": PromptTemplate(template="x", engine="f-string")})
        r = await store.start_rollout(input="x", worker_id="w1")
        await store.add_span(span(r.rollout_id, r.attempt.attempt_id, 1, "s"))
        await store.enqueue_rollout(input="y")
        stats = await store.statistics()
        assert {
            k: stats[k]
            for k in ("total_rollouts", "total_attempts", "total_spans", "total_resources", "total_workers")
        } == {
            "total_rollouts": 2,
            "total_attempts": 1,
            "total_spans": 1,
            "total_resources": 1,
            "total_workers": 1,
        }
        assert stats["name"] == type(store).__name__

    run(scenario(make_store()))
