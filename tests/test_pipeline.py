"""End to end: `eval` and `oneclick --smoke` (stopped after step 1, resumed to step 2) through the real stack.

Each run is a subprocess of the CLI: the embedded Mubit engine, the policy server, an agl Trainer with
runner processes, the SQLite store. The default policy is built once (cached under .cache/policy).
"""

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from safetensors.torch import load_file

from training.checkpoint import weights_sha256

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent


def cli(*args: str, timeout: int = 900) -> dict:
    proc = subprocess.run([sys.executable, "-m", "training.train_feedback", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def store_rollouts(db: Path) -> list[dict]:
    """Read back through the store's own export CLI, in a fresh process."""
    exported = db.parent.parent / f"{db.parent.name}-rollouts.jsonl"
    proc = subprocess.run([sys.executable, "-m", "al_integration.store", "export", str(db), "--output", str(exported)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in exported.read_text().splitlines() if line.strip()]


def credited_outcomes(db: Path) -> int:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:  # read-only: leaves the files as they are
        return conn.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0]


def test_eval_writes_store_mubit_summary_and_no_pii(tmp_path, assert_no_raw_pii):
    out = tmp_path / "eval"
    summary = cli("eval", "--split", "val", "--limit", "16", "--output-dir", str(out))
    assert summary["split"] == "val" and summary["n"] == 16
    assert set(summary["reward_by_component"]) >= {"length", "tone", "integrity", "overselling", "acknowledgment"}
    assert (out / "report.md").read_text().startswith("# Evaluation on val")
    rollouts = store_rollouts(out / "store.db")
    assert len(rollouts) == 16
    assert all(r["status"] == "succeeded" and r["final_reward"] is not None for r in rollouts)
    llm_spans = [s for r in rollouts for s in r["spans"] if s["name"] == "openai.chat.completion"]
    assert len(llm_spans) == 16
    assert all(s["attributes"].get("prompt_token_ids") and s["attributes"].get("response_token_ids")
               for s in llm_spans)
    assert credited_outcomes(out / "mubit.db") > 0
    assert_no_raw_pii(out)


def test_oneclick_smoke_stop_and_resume(tmp_path, assert_no_raw_pii):
    out = tmp_path / "run"
    first = cli("oneclick", "--smoke", "--steps", "1", "--output-dir", str(out))
    assert first["steps"] == 1
    ckpt = out / "checkpoints" / (out / "checkpoints" / "latest").read_text().strip()
    weights = weights_sha256(load_file(ckpt / "model" / "model.safetensors"))

    second = cli("oneclick", "--resume", str(out), "--steps", "2")
    assert second["steps"] == 2 and second["resumed_from_step"] == 1
    assert second["start_weights_sha256"] == weights  # exactly the checkpointed weights
    for name in ["store.db", "mubit.db", "metrics.jsonl", "summary.json", "report.md", "reward_curve.png"]:
        assert (out / name).is_file(), name
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["split"] == "train"] == [1, 2]  # continues from step k + 1
    for r in records:
        if r["split"] == "train":
            assert {"reward_mean", "reward_std", "loss", "kl", "tokens_per_s", "rollouts_per_s",
                    "elapsed_seconds", "reward/length"} <= set(r)
    summary = json.loads((out / "summary.json").read_text())
    required = {"val_reward_before", "val_reward_after", "steps", "wall_seconds", "rollouts", "mubit_outages"}
    assert required <= set(summary)
    rollouts = store_rollouts(out / "store.db")
    train = [r for r in rollouts if r["mode"] == "train"]
    assert len(train) == 2 * 2 * 2  # 2 steps x 2 tasks x group of 2
    assert all(r["final_reward"] is not None for r in train)
    assert credited_outcomes(out / "mubit.db") >= len(train)
    assert_no_raw_pii(out)
