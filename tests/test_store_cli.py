"""`python -m al_integration.store inspect | export | serve` on a store file with known contents."""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import asyncio
import contextlib
import json
import sys
import urllib.request
from pathlib import Path

import pytest
from agentlightning.store.client_server import LightningStoreClient
from agentlightning.types import Span
from typer.testing import CliRunner

from al_integration.store import SqliteLightningStore
from al_integration.store.cli import app
from al_integration.store.report import dashboard_server

sys.path.insert(0, str(Path(__file__).parent))  # the shared job module, whatever pytest's import mode
from store_trainer_job import free_port  # noqa: E402

REWARDS = [0.5, -0.25, 1.0]


def reward_span(rollout, sequence_id: int, value: float) -> Span:
    return Span.from_attributes(
        attributes={"agentlightning.reward.0.name": "primary", "agentlightning.reward.0.value": value},
        rollout_id=rollout.rollout_id,
        attempt_id=rollout.attempt.attempt_id,
        sequence_id=sequence_id,
        name="agentlightning.annotation",
    )


def message_span(rollout, sequence_id: int, text: str) -> Span:
    return Span.from_attributes(
        attributes={"agentlightning.message.body": text},
        rollout_id=rollout.rollout_id,
        attempt_id=rollout.attempt.attempt_id,
        sequence_id=sequence_id,
        name="agentlightning.message",
    )


@pytest.fixture
def store_file(tmp_path):
    """3 succeeded rollouts (2 messages + a reward each; the first rewarded twice), 1 failed, 1 queued."""
    path = tmp_path / "store.sqlite"

    async def fill():
        store = SqliteLightningStore(path)
        for i, reward in enumerate(REWARDS):
            rollout = await store.start_rollout(input={"task": i})
            await store.add_many_spans(
                [
                    message_span(rollout, 1, f"m{i}a"),
                    message_span(rollout, 2, f"m{i}b"),
                    reward_span(rollout, 3, reward),
                ]
            )
            if i == 0:  # the final reward is the last reward span
                await store.add_span(reward_span(rollout, 4, -9.0))
                await store.add_span(reward_span(rollout, 5, reward))
            await store.update_attempt(rollout.rollout_id, "latest", status="succeeded")
        failed = await store.start_rollout(input={"task": "bad"})
        await store.update_attempt(failed.rollout_id, "latest", status="failed")
        await store.enqueue_rollout(input={"task": "later"})
        await store.close()

    asyncio.run(fill())
    return path


def test_inspect_json(store_file):
    result = CliRunner().invoke(app, ["inspect", str(store_file), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["rollouts"] == 5 and summary["spans"] == 3 * 3 + 2
    assert summary["by_status"] == {"failed": 1, "queuing": 1, "succeeded": 3}
    assert summary["reward"] == {
        "mean": pytest.approx(sum(REWARDS) / 3), "min": -0.25, "max": 1.0, "count": 3}  # fmt: skip


def test_inspect_table(store_file):
    result = CliRunner().invoke(app, ["inspect", str(store_file)])
    assert result.exit_code == 0, result.output
    for text in ("succeeded", "queuing", "0.4167", "-0.2500", "1.0000"):
        assert text in result.stdout


def test_export_writes_one_rollout_a_line(store_file, tmp_path):
    output = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["export", str(store_file), "--output", str(output)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["input"]["task"] for r in lines] == [0, 1, 2, "bad", "later"]
    assert [r["final_reward"] for r in lines] == [*REWARDS, None, None]
    assert [s["attributes"].get("agentlightning.message.body") for s in lines[1]["spans"]] == [
        "m1a",
        "m1b",
        None,
    ]
    assert lines[0]["status"] == "succeeded" and lines[0]["attempt"]["status"] == "succeeded"
    assert lines[4]["spans"] == [] and "attempt" not in lines[4]


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_bad_files_are_one_line_errors(tmp_path, command):
    not_a_store = tmp_path / "notes.txt"
    not_a_store.write_text("hello\n" * 100)
    for path, message in [
        (tmp_path / "missing.sqlite", "does not exist"),
        (not_a_store, "not a SQLite database"),
    ]:
        args = [command, str(path)] + (["--output", str(tmp_path / "o.jsonl")] if command == "export" else [])
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        assert result.stderr.startswith("error: ") and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_export_to_a_missing_directory(store_file, tmp_path):
    result = CliRunner().invoke(
        app, ["export", str(store_file), "--output", str(tmp_path / "no" / "x.jsonl")]
    )
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_serve_refuses_a_busy_port(store_file):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", str(store_file), "--port", str(port)])
    assert result.exit_code == 2 and f"port {port}" in result.stderr


@contextlib.asynccontextmanager
async def served(path):
    """What `serve` runs (agl's LightningStoreServer over the read-only file, on 127.0.0.1), and a client."""
    port = free_port()
    store = SqliteLightningStore(path, read_only=True)
    server = dashboard_server(store, port)
    await server.start()
    client = LightningStoreClient(f"http://127.0.0.1:{port}")
    try:
        yield client, f"http://127.0.0.1:{port}"
    finally:
        await client.close()
        await server.stop()
        await store.close()


def test_served_file_answers_agl_clients_and_the_dashboard(store_file):
    async def scenario():
        async with served(store_file) as (client, root):
            rollouts = await client.query_rollouts(status_in=["succeeded"])
            assert sorted(r.input["task"] for r in rollouts) == [0, 1, 2]
            spans = await client.query_spans(rollouts.items[1].rollout_id, "latest")
            assert [s.name for s in spans][:2] == ["agentlightning.message"] * 2
            assert (await client.statistics())["total_rollouts"] == 5
            page = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{root}/").read())
            assert b"<html" in page.lower()

    asyncio.run(scenario())


def test_served_file_refuses_writes_with_403_json_and_stays_unchanged(store_file):
    """`serve` is read-only: a write answers 403 JSON (agl's server would answer 500 with a traceback)."""
    import aiohttp
    import requests

    before = store_file.read_bytes()

    async def scenario():
        async with served(store_file) as (client, root):
            base = f"{root}/v1/agl"
            writes = [("post", "/queues/rollouts/enqueue", {"rollouts": [{"input": {"task": "curl"}}]}),
                      ("post", "/rollouts", {"input": {"task": "x"}}),
                      ("post", "/resources", {"llm": {"resource_type": "llm", "endpoint": "e", "model": "m"}})]
            for method, path, body in writes:
                answer = await asyncio.to_thread(requests.request, method, base + path, json=body, timeout=10)
                assert answer.status_code == 403, answer.text
                assert answer.headers["content-type"].startswith("application/json")
                assert "read-only" in answer.json()["detail"] and "Traceback" not in answer.text
            with pytest.raises(aiohttp.ClientResponseError) as refused:
                await client.enqueue_rollout(input={"task": "from a client"})
            assert refused.value.status == 403
            searched = await asyncio.to_thread(requests.post, base + "/rollouts/search", json={}, timeout=10)
            assert searched.status_code == 200 and searched.json()["total"] == 5  # reads still answer
            assert (await client.statistics())["total_rollouts"] == 5

    asyncio.run(scenario())
    assert store_file.read_bytes() == before


def test_a_locked_store_is_named_locked_not_a_non_database(store_file):
    import sqlite3

    holder = sqlite3.connect(store_file, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO store_meta (key, value) VALUES ('held', 'by another process')")
        result = CliRunner().invoke(app, ["inspect", str(store_file)])
    finally:
        holder.close()
    assert result.exit_code == 2
    assert "locked by another process" in result.stderr and "not a SQLite database" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
