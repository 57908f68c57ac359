"""End to end: a real agl Trainer (client/server, 4 runners) writes every span and reward to the file.

A fresh Python process then reopens the file (through the `export` CLI) and must find each of the 12
rollouts succeeded, with its own messages in order and its own final reward.
"""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the shared job module, whatever pytest's import mode
from store_trainer_job import MESSAGES_PER_TASK, SPANS_PER_TASK, make_tasks, message_text, run_training  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
N_TASKS = 12


def fresh_process_export(store_path: Path, output: Path) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "al_integration.store", "export", str(store_path), "--output", str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=output.parent,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in output.read_text().splitlines()]


@pytest.mark.slow
def test_trainer_with_four_runners_keeps_every_span_and_reward(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # AgentOps writes agentops.log into the working directory
    store_path = tmp_path / "run" / "store.sqlite"
    store_path.parent.mkdir()
    tasks = make_tasks(N_TASKS, delay_s=0.1)  # slow enough that every runner gets work

    run_training(store_path, tasks)

    with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT COUNT(*) FROM spans").fetchone()[0] == N_TASKS * SPANS_PER_TASK
        names = dict(
            db.execute("SELECT name, COUNT(*) FROM spans WHERE name LIKE 'agentlightning.%' GROUP BY name")
        )
        assert names == {
            "agentlightning.message": N_TASKS * MESSAGES_PER_TASK,
            "agentlightning.annotation": N_TASKS,
        }
        workers = {row[0] for row in db.execute("SELECT json_extract(data, '$.worker_id') FROM attempts")}
        assert len(workers) >= 2  # the rollouts really were spread over several runner processes

    records = fresh_process_export(store_path, tmp_path / "export.jsonl")
    assert len(records) == N_TASKS
    by_task = {r["input"]["task_id"]: r for r in records}
    assert sorted(by_task) == list(range(N_TASKS))
    for task in tasks:
        record = by_task[task["task_id"]]
        assert record["status"] == "succeeded"
        assert record["attempt"]["status"] == "succeeded"
        messages = [
            s["attributes"]["agentlightning.message.body"]
            for s in record["spans"]
            if s["name"] == "agentlightning.message"
        ]
        assert messages == [message_text(task["task_id"], k) for k in range(MESSAGES_PER_TASK)]
        assert record["final_reward"] == pytest.approx(task["reward"])
        assert len(record["spans"]) == SPANS_PER_TASK
        assert [s["sequence_id"] for s in record["spans"]] == sorted(
            s["sequence_id"] for s in record["spans"]
        )
