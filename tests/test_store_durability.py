"""Durability: a training job killed with SIGKILL mid-run loses nothing it had committed, and reusing the
file finishes the interrupted rollouts through agl's own timeout + retry semantics.
"""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentlightning.emitter.reward import find_final_reward

from al_integration.store import SqliteLightningStore

sys.path.insert(0, str(Path(__file__).parent))  # the shared job module, whatever pytest's import mode
from store_trainer_job import MESSAGES_PER_TASK, free_port, make_tasks, run_training  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
N_TASKS = 40
ROLLOUT_TIMEOUT_S = 3.0


def snapshot(path: Path) -> dict[str, dict]:
    """Everything committed so far, read by another process through SQLite's WAL (as `inspect` does)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10) as db:
        return {
            "rollouts": dict(db.execute("SELECT rollout_id, status FROM rollouts")),
            "attempts": dict(db.execute("SELECT rollout_id || '/' || attempt_id, status FROM attempts")),
            "spans": dict(
                db.execute("SELECT rollout_id || '/' || attempt_id || '/' || span_id, data FROM spans")
            ),
        }


def wait_for_mid_run(path: Path, job: subprocess.Popen, deadline_s: float) -> dict[str, dict]:
    """Poll until some rollouts succeeded while others are still running, then return that snapshot."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert job.poll() is None, "the training job exited before it could be killed"
        if path.exists():
            try:
                state = snapshot(path)
            except sqlite3.OperationalError:  # schema not created yet
                state = None
            if state:
                statuses = list(state["rollouts"].values())
                if statuses.count("succeeded") >= 8 and {"running", "preparing"} & set(statuses):
                    return state
        time.sleep(0.05)
    raise AssertionError("the job never reached the middle of its run")


@pytest.mark.slow
def test_sigkill_mid_run_keeps_committed_work_and_reuse_finishes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store_path = tmp_path / "store.sqlite"
    command = [sys.executable, str(REPO / "tests" / "store_trainer_job.py"), str(store_path)]
    command += ["--tasks", str(N_TASKS), "--delay", "0.15", "--port", str(free_port())]
    command += ["--rollout-timeout", str(ROLLOUT_TIMEOUT_S)]
    job = subprocess.Popen(
        command,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        before = wait_for_mid_run(store_path, job, deadline_s=120)
    finally:
        os.killpg(job.pid, signal.SIGKILL)  # the algorithm/server process and all 4 runners, mid-write
        job.wait(timeout=30)
    interrupted = {rid for rid, status in before["rollouts"].items() if status in ("running", "preparing")}
    assert interrupted

    # 1. Every rollout, attempt and span committed before the kill is in the reopened file, unchanged.
    after = snapshot(store_path)
    with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert set(before["rollouts"]) <= set(after["rollouts"])
    assert set(before["attempts"]) <= set(after["attempts"])
    assert {key: after["spans"].get(key) for key in before["spans"]} == before["spans"]
    assert all(
        after["rollouts"][rid] == "succeeded" for rid, s in before["rollouts"].items() if s == "succeeded"
    )

    # 2. Reusing the file: agl's health check times out the interrupted attempts and requeues them;
    #    a new Trainer run over the same file finishes every rollout.
    time.sleep(max(0.0, ROLLOUT_TIMEOUT_S - 1.0))
    run_training(store_path, [], rollout_timeout_s=ROLLOUT_TIMEOUT_S)

    async def check() -> None:
        store = SqliteLightningStore(store_path, read_only=True)
        try:
            rollouts = (await store.query_rollouts()).items
            assert len(rollouts) == N_TASKS
            assert {r.status for r in rollouts} == {"succeeded"}
            expected_reward = {t["task_id"]: t["reward"] for t in make_tasks(N_TASKS)}
            for rollout in rollouts:
                spans = (await store.query_spans(rollout.rollout_id, "latest")).items
                assert sum(s.name == "agentlightning.message" for s in spans) == MESSAGES_PER_TASK
                assert find_final_reward(spans) == pytest.approx(expected_reward[rollout.input["task_id"]])
                attempts = (await store.query_attempts(rollout.rollout_id)).items
                if rollout.rollout_id in interrupted:
                    assert attempts[0].status == "timeout" and attempts[-1].status == "succeeded"
                    assert len(attempts) >= 2
        finally:
            await store.close()

    asyncio.run(check())
