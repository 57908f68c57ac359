"""Faults during real `oneclick --smoke` runs (the tiny policy, the whole stack in a subprocess): a runner
killed mid-step while Mubit is down, the trainer SIGKILLed mid-step and resumed, the checkpoint directory
made unwritable mid-run."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import psutil
import pytest

from training.checkpoint import latest_checkpoint

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
UNFINISHED = ("queuing", "preparing", "running", "requeuing")


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "training.train_feedback", "oneclick", "--smoke", *args], cwd=REPO,
                            env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def query(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    if not db.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
            return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


def wait_for(condition, proc: subprocess.Popen, timeout: float = 300, what: str = "") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        if proc.poll() is not None:
            raise AssertionError(f"the run ended (rc {proc.returncode}) before {what}: {proc.stderr.read()[-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def running_train_rollout(db: Path, step: int | None = None) -> tuple[str, str] | None:
    """(rollout id, worker id) of a train rollout a runner is executing (of `step`, if given)."""
    rows = query(db, "SELECT a.rollout_id, a.worker_id, r.data FROM attempts a JOIN rollouts r USING (rollout_id) "
                     "WHERE r.mode = 'train' AND a.status IN ('preparing', 'running') AND a.worker_id IS NOT NULL")
    for rollout_id, worker_id, data in rows:
        if step is None or json.loads(data)["metadata"]["step"] == step:
            return rollout_id, worker_id
    return None


def runner_processes(proc: subprocess.Popen) -> list[psutil.Process]:
    """The agl runner processes the trainer forked (same command line), in worker order."""
    parent = psutil.Process(proc.pid)
    runners = [child for child in parent.children() if child.cmdline() == parent.cmdline()]
    return sorted(runners, key=lambda child: (child.create_time(), child.pid))


def gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_killed_runner_is_retried_and_a_run_without_mubit_says_so(tmp_path, assert_no_raw_pii):
    """Issue 17, cases 4 and 7: one of 2 runners is SIGKILLed mid-step while the Mubit endpoint is down."""
    mubit = tmp_path / "mubit.yaml"
    mubit.write_text((REPO / "configs" / "mubit.yaml").read_text().replace("endpoint: null",
                                                                           "endpoint: http://127.0.0.1:9"))
    config = tmp_path / "run.yaml"
    config.write_text((REPO / "configs" / "oneclick.yaml").read_text()
                      .replace("config: configs/mubit.yaml", f"config: {mubit}"))
    out = tmp_path / "run"
    proc = start("--config", str(config), "--output-dir", str(out),
                 env={"MUBIT_API_KEY": "k", "MUBIT_RETRY_BASE_MS": "10"})
    victim, worker = wait_for(lambda: running_train_rollout(out / "store.db"), proc, what="a train rollout ran")
    runners = runner_processes(proc)
    killed = runners[int(worker.rsplit("-", 1)[1])]
    killed.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=600)

    assert proc.returncode == 0, err[-3000:]
    attempts = query(out / "store.db", "SELECT status FROM attempts WHERE rollout_id = ? ORDER BY sequence_id",
                     (victim,))
    assert [status for (status,) in attempts] == ["unresponsive", "succeeded"]  # handed back at once, run again
    assert f"runner {worker.rsplit('-', 1)[1]} (pid {killed.pid}) died with exit code -9" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2 and not summary["interrupted"]
    for name in ("report.md", "reward_curve.png", "metrics.jsonl"):
        assert (out / name).is_file(), name
    expected = (f"Mubit memory was unavailable for {summary['mubit_rollouts']} of {summary['mubit_rollouts']} "
                "rollouts and the seed lessons could not be loaded: the results are not comparable")
    assert summary["comparable"] is False and summary["warning"].startswith(expected)
    assert (out / "report.md").read_text().splitlines()[2].startswith(f"> **Warning:** {expected}")
    last_log = [line for line in err.splitlines() if "run finished" in line][-1]
    assert f"WARNING: {expected}" in last_log
    assert_no_raw_pii(out)


def test_a_sigkilled_trainer_leaves_no_runner_and_resume_cancels_its_leftover_rollouts(tmp_path, assert_no_raw_pii):
    """Issue 17, cases 5 and 6: SIGKILL of the trainer in step 2 (after the step-1 checkpoint), then --resume."""
    out = tmp_path / "run"
    proc = start("--output-dir", str(out))
    wait_for(lambda: running_train_rollout(out / "store.db", step=2), proc, what="a step-2 rollout ran")
    runners = runner_processes(proc)
    assert runners
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while not all(gone(r) for r in runners) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(gone(r) for r in runners), "runner processes outlived the SIGKILLed trainer"
    stale = {rid for (rid,) in query(out / "store.db", "SELECT rollout_id FROM rollouts WHERE status IN "
                                                       f"({', '.join('?' * len(UNFINISHED))})", UNFINISHED)}
    assert stale, "the kill left no unfinished rollout behind (nothing to test)"
    attempts_before = dict(query(out / "store.db", "SELECT rollout_id, COUNT(*) FROM attempts GROUP BY rollout_id"))

    resumed_at = time.time()
    again = subprocess.run([sys.executable, "-m", "training.train_feedback", "oneclick", "--resume", str(out)],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    summary = json.loads(again.stdout.strip().splitlines()[-1])
    assert summary["resumed_from_step"] == 1 and summary["steps"] == 2
    statuses = dict(query(out / "store.db", "SELECT rollout_id, status FROM rollouts"))
    assert {statuses[rid] for rid in stale} == {"cancelled"}
    attempts_after = dict(query(out / "store.db", "SELECT rollout_id, COUNT(*) FROM attempts GROUP BY rollout_id"))
    assert all(attempts_after.get(rid, 0) == attempts_before.get(rid, 0) for rid in stale)  # never run again
    assert not [rid for rid, status in statuses.items() if status in UNFINISHED]
    new_resources = {rid for (rid,) in query(out / "store.db", "SELECT resources_id FROM resources WHERE "
                                                               "create_time >= ?", (resumed_at,))}
    ran_after = query(out / "store.db", "SELECT r.resources_id FROM attempts a JOIN rollouts r USING (rollout_id) "
                                        "WHERE a.start_time >= ?", (resumed_at,))
    assert ran_after and {resources for (resources,) in ran_after} <= new_resources  # only the live policy
    assert "cancelled" in again.stderr and "left unfinished in the store by an earlier run" in again.stderr
    assert_no_raw_pii(out)


def test_a_checkpoint_directory_that_becomes_unwritable_stops_the_run_in_one_line(tmp_path, make_unwritable):
    """Issue 17, case 3: after the step-1 checkpoint, checkpoints/ stops taking writes."""
    out = tmp_path / "run"
    proc = start("--output-dir", str(out))
    wait_for(lambda: (out / "checkpoints" / "latest").is_file(), proc, what="the first checkpoint")
    with make_unwritable(out / "checkpoints"):
        _, err = proc.communicate(timeout=600)
    assert proc.returncode == 2, err[-3000:]
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: {out}/checkpoints: checkpoint of step 2 could not be written (")
    assert last.endswith(f"{out}/checkpoints/latest still names step-000001")
    assert latest_checkpoint(out).step == 1  # the previous checkpoint is whole and resumable
