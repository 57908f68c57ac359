"""The store file: reopening, bad files refused untouched, read-only and full files, pickling and fork."""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import asyncio
import hashlib
import multiprocessing
import pickle
import sqlite3
from pathlib import Path

import pytest
from agentlightning.types import PromptTemplate, Span

from al_integration.store import SCHEMA_VERSION, SqliteLightningStore, StoreFileError


def run(coro):
    return asyncio.run(coro)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def make_span(rollout, sequence_id: int, **attributes) -> Span:
    return Span.from_attributes(
        attributes=attributes or {"k": sequence_id},
        rollout_id=rollout.rollout_id,
        attempt_id=rollout.attempt.attempt_id,
        sequence_id=sequence_id,
        name="work",
    )


def test_reopened_store_continues_where_it_stopped(tmp_path):
    path = tmp_path / "store.sqlite"

    async def first():
        store = SqliteLightningStore(path)
        await store.add_resources({"p": PromptTemplate(template="x", engine="f-string")})
        queued = [await store.enqueue_rollout(input=i) for i in range(3)]
        running = await store.dequeue_rollout()
        await store.add_span(make_span(running, 1))
        await store.close()
        return [r.rollout_id for r in queued]

    async def second(ids):
        store = SqliteLightningStore(path)
        assert (await store.dequeue_rollout()).rollout_id == ids[1]  # the queue kept its order
        rollout = await store.get_rollout_by_id(ids[0])
        assert rollout.status == "running"
        assert await store.get_next_span_sequence_id(ids[0], rollout.attempt.attempt_id) == 2
        assert (await store.get_latest_resources()).resources["p"].template == "x"
        stats = await store.statistics()
        assert stats["schema_version"] == SCHEMA_VERSION and stats["file_bytes"] > 0
        await store.close()

    run(second(run(first())))
    assert "store.sqlite-wal" not in siblings(path)  # a clean close folds the log into the file


def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 50)
    before = digest(path)
    with pytest.raises(StoreFileError, match="not a SQLite database"):
        SqliteLightningStore(path)
    assert digest(path) == before and siblings(path) == ["notes.sqlite"]


def test_another_programs_database_is_refused_untouched(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO accounts (name) VALUES ('alice')")
    db.close()
    before = digest(path)
    with pytest.raises(StoreFileError, match="not an Agent Lightning SQLite store"):
        SqliteLightningStore(path)
    assert digest(path) == before and siblings(path) == ["other.db"]


def test_another_schema_version_is_refused_untouched(tmp_path):
    path = tmp_path / "store.sqlite"
    run(SqliteLightningStore(path).close())
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    before = digest(path)
    with pytest.raises(StoreFileError, match=f"schema version {SCHEMA_VERSION + 1}"):
        SqliteLightningStore(path)
    assert digest(path) == before


def test_missing_paths_are_clear_errors(tmp_path):
    with pytest.raises(StoreFileError, match="does not exist"):
        SqliteLightningStore(tmp_path / "missing.sqlite", read_only=True)
    with pytest.raises(StoreFileError, match="directory .* does not exist"):
        SqliteLightningStore(tmp_path / "no" / "such" / "dir.sqlite")
    with pytest.raises(StoreFileError, match="is a directory"):
        SqliteLightningStore(tmp_path)


def test_read_only_files(tmp_path):
    path = tmp_path / "store.sqlite"

    async def fill():
        store = SqliteLightningStore(path)
        await store.enqueue_rollout(input="kept")
        await store.close()

    run(fill())
    path.chmod(0o444)
    try:
        with pytest.raises(StoreFileError, match="read-only"):
            SqliteLightningStore(path)

        async def read():
            store = SqliteLightningStore(path, read_only=True)
            assert [r.input for r in await store.query_rollouts()] == ["kept"]
            with pytest.raises(StoreFileError, match="read-only"):
                await store.enqueue_rollout(input="refused")
            await store.close()

        run(read())
    finally:
        path.chmod(0o644)


def test_a_full_file_is_a_clear_error_and_keeps_what_was_committed(tmp_path):
    async def scenario():
        store = SqliteLightningStore(tmp_path / "store.sqlite", max_bytes=192 * 1024)
        rollout = await store.start_rollout(input="big")
        stored = 0
        with pytest.raises(StoreFileError, match="full"):
            for i in range(1, 1000):
                await store.add_span(make_span(rollout, i, blob="x" * 4000))
                stored += 1
        assert 0 < stored < 999
        assert (
            await store.query_spans(rollout.rollout_id)
        ).total == stored  # the failed write was rolled back
        await store.close()

    run(scenario())


def test_pickled_store_reopens_the_same_file(tmp_path):
    async def scenario():
        store = SqliteLightningStore(tmp_path / "store.sqlite", poll_interval_s=0.05)
        rollout = await store.enqueue_rollout(input="shared")
        clone = pickle.loads(pickle.dumps(store))
        assert clone.path == store.path and clone._poll_interval_s == 0.05
        assert (await clone.get_rollout_by_id(rollout.rollout_id)).input == "shared"
        await clone.close()
        await store.close()

    run(scenario())


def _child_enqueues(store: SqliteLightningStore) -> None:
    asyncio.run(store.enqueue_rollout(input="from the child"))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_forked_child_uses_its_own_connection(tmp_path):
    """agl forks runner processes after the store is open: the child must not reuse the parent's handle."""

    async def scenario():
        store = SqliteLightningStore(tmp_path / "store.sqlite")
        await store.enqueue_rollout(input="from the parent")  # the parent's connection is open now
        child = multiprocessing.get_context("fork").Process(target=_child_enqueues, args=(store,))
        child.start()
        child.join(timeout=60)
        assert child.exitcode == 0
        assert [r.input for r in await store.query_rollouts()] == ["from the parent", "from the child"]
        await store.close()

    run(scenario())


def test_a_failed_operation_leaves_nothing_half_done(tmp_path, monkeypatch):
    """Each write operation is one transaction: agl's dequeue pops the queue, then creates the attempt;
    if anything fails later in the operation, the rollout must still be queued (agl's in-memory store
    would leave it "preparing" and out of the queue)."""

    async def scenario():
        store = SqliteLightningStore(tmp_path / "store.sqlite")
        rollout = await store.enqueue_rollout(input="precious")

        async def broken_worker_sync(*args, **kwargs):
            raise RuntimeError("crash after the attempt was created")

        monkeypatch.setattr(store, "_sync_workers_with_attempts", broken_worker_sync)
        with pytest.raises(RuntimeError, match="crash"):
            await store.dequeue_rollout(worker_id="w1")
        monkeypatch.undo()
        assert (await store.get_rollout_by_id(rollout.rollout_id)).status == "queuing"
        assert (await store.query_attempts(rollout.rollout_id)).total == 0
        retried = await store.dequeue_rollout(worker_id="w1")
        assert retried.rollout_id == rollout.rollout_id and retried.attempt.sequence_id == 1

        with pytest.raises(ValueError, match="not found"):
            await store.add_span(make_span(retried, 7).model_copy(update={"rollout_id": "ro-missing"}))
        assert not await store.collections.span_sequence_ids.has("ro-missing")  # its counter bump rolled back
        await store.close()

    run(scenario())
