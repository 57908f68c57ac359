"""End to end: `eval` and `oneclick --smoke` (stopped after step 1, resumed to step 2) through the real stack,
then what the run shows: its TensorBoard events, its resolved config, and the TensorBoard page in a browser.

Each run is a subprocess of the CLI: the embedded Mubit engine, the policy server, an agl Trainer with
runner processes, the SQLite store. The default policy is built once (cached under .cache/policy).
"""

import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import httpx
import pytest
import yaml
from safetensors.torch import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

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
    from policy.pretrained import ensure_pretrained_policy

    out = tmp_path / "eval"
    # The converted SmolLM2 itself: its 4-minute warm start is tested on a tiny model (tests/test_warm_start.py).
    model = ensure_pretrained_policy()
    summary = cli("eval", "--model", str(model), "--split", "val", "--limit", "8", "--output-dir", str(out))
    assert summary["split"] == "val" and summary["n"] == 8
    assert set(summary["reward_by_component"]) >= {"length", "tone", "integrity", "overselling", "acknowledgment"}
    assert (out / "report.md").read_text().startswith("# Evaluation on val")
    rollouts = store_rollouts(out / "store.db")
    assert len(rollouts) == 8
    assert all(r["status"] == "succeeded" and r["final_reward"] is not None for r in rollouts)
    llm_spans = [s for r in rollouts for s in r["spans"] if s["name"] == "openai.chat.completion"]
    assert len(llm_spans) == 8
    assert all(s["attributes"].get("prompt_token_ids") and s["attributes"].get("response_token_ids")
               for s in llm_spans)
    assert credited_outcomes(out / "mubit.db") > 0
    assert_no_raw_pii(out)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> tuple[Path, dict, dict, str]:
    """`oneclick --smoke` stopped after step 1 with an lr override on the command line, then resumed to step 2
    with no override: the run directory, both summaries and the step-1 checkpoint's weights hash."""
    out = tmp_path_factory.mktemp("smoke") / "run"
    first = cli("oneclick", "--smoke", "--steps", "1", "--output-dir", str(out), "grpo.lr=2e-4")
    ckpt = out / "checkpoints" / (out / "checkpoints" / "latest").read_text().strip()
    weights = weights_sha256(load_file(ckpt / "model" / "model.safetensors"))
    second = cli("oneclick", "--resume", str(out), "--steps", "2")
    return out, first, second, weights


def test_oneclick_smoke_stop_and_resume(smoke_run, assert_no_raw_pii):
    out, first, second, weights = smoke_run
    assert first["steps"] == 1
    assert second["steps"] == 2 and second["resumed_from_step"] == 1
    assert second["start_weights_sha256"] == weights  # exactly the checkpointed weights
    for name in ["store.db", "mubit.db", "metrics.jsonl", "summary.json", "report.md", "reward_curve.png",
                 "config.yaml"]:
        assert (out / name).is_file(), name
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["split"] == "train"] == [1, 2]  # continues from step k + 1
    for r in records:
        if r["split"] == "train":
            assert {"reward", "reward_std", "loss", "kl", "entropy", "tokens_per_s", "rollouts_per_s",
                    "elapsed_seconds", "rewards/length/mean", "timing/step_s"} <= set(r)
    summary = json.loads((out / "summary.json").read_text())
    required = {"val_reward_before", "val_reward_after", "steps", "wall_seconds", "rollouts", "mubit_outages",
                "skipped_updates"}
    assert required <= set(summary) and summary["skipped_updates"] == 0
    rollouts = store_rollouts(out / "store.db")
    train = [r for r in rollouts if r["mode"] == "train"]
    assert len(train) == 2 * 2 * 2  # 2 steps x 2 tasks x group of 2
    assert all(r["final_reward"] is not None for r in train)
    assert all(r["metadata"]["reward"] == r["final_reward"] for r in rollouts)  # shown by agl's dashboard
    assert credited_outcomes(out / "mubit.db") >= len(train)
    assert_no_raw_pii(out)


TRL_METRICS = [
    "reward", "reward_std", "rewards/length/mean", "rewards/length/std", "rewards/coherence/mean", "rewards/role/mean",
    "frac_reward_zero_std", "entropy", "kl", "loss", "grad_norm", "learning_rate", "update_skipped",
    "completions/mean_length", "completions/min_length", "completions/max_length", "completions/clipped_ratio",
    "completions/mean_terminated_length", "clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean",
    "clip_ratio/low_min", "clip_ratio/high_max", "sampling/sampling_logp_difference/mean",
    "sampling/sampling_logp_difference/max", "timing/rollouts_s", "timing/learner_s", "timing/weight_sync_s",
    "timing/step_s",
]


def test_tensorboard_events_hold_the_metrics_of_metrics_jsonl(smoke_run):
    out, *_ = smoke_run
    events = EventAccumulator(str(out / "tb"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {f"train/{name}" for name in TRL_METRICS} <= tags and {"val/reward", "val/rewards/tone/mean"} <= tags
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    train = {r["step"]: r for r in records if r["split"] == "train"}
    for name in ("reward", "entropy", "kl", "completions/mean_length"):  # the same values under the same names
        assert [(e.step, e.value) for e in events.Scalars(f"train/{name}")] == [
            (step, pytest.approx(train[step][name], rel=1e-5, abs=1e-7)) for step in (1, 2)], name
    for step in (1, 2):
        r = train[step]
        assert r["sampling/sampling_logp_difference/mean"] < 1e-3  # the server samples with the learner's weights
        assert 0 < r["entropy"] < 8 and 0 <= r["completions/clipped_ratio"] <= 1
        assert r["completions/max_length"] <= 48  # configs/oneclick.yaml smoke.max_tokens


def test_an_override_changes_the_run_and_resume_keeps_it(smoke_run):
    """`grpo.lr=2e-4` on the first command line is the optimizer's lr at both steps (the resumed process read it
    back from <run>/config.yaml) and stays in the resolved config."""
    out, *_ = smoke_run
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert resolved["grpo"]["lr"] == 2e-4 and resolved["steps"] == 2
    events = EventAccumulator(str(out / "tb"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("train/learning_rate")] == [
        (1, pytest.approx(2e-4)), (2, pytest.approx(2e-4))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RUN_COLOUR = (255, 112, 67)  # TensorBoard's line colour for the first run (#ff7043)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium (apt-get install chromium)")
def test_tensorboard_shows_the_reward_curve_in_a_browser(smoke_run):
    """TensorBoard serves the run's tb/ on 127.0.0.1; headless Chromium screenshots the scalars page filtered to
    the reward; the two reward charts (train, val) hold the run's line, in TensorBoard's run colour."""
    import numpy as np
    from matplotlib.image import imread

    out, *_ = smoke_run
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(out / "tb"), "--host",
                               "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/data/runs", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        shot = out.parent / "tensorboard.png"
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                            "--no-first-run", "--disable-background-networking", "--disable-component-update",
                            "--disable-sync", f"--user-data-dir={profile}", f"--screenshot={shot}",
                            "--window-size=1400,900", "--virtual-time-budget=20000",
                            f"http://127.0.0.1:{port}/#scalars&tagFilter=%5E(train%7Cval)%2Freward%24"
                            "&_smoothingWeight=0"], capture_output=True, timeout=120, check=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    pixels = (imread(shot)[..., :3] * 255).round().astype(int)
    assert pixels.shape == (900, 1400, 3)
    charts = pixels[180:420, 360:1100]  # the "Tags matching" group: train/reward and val/reward side by side
    line = (np.abs(charts - RUN_COLOUR) <= 25).all(axis=-1)
    assert line.sum() > 100, f"no reward line in {shot}"
    # At least one chart holds the run's line: TensorBoard's "ignore outliers" scaling (on by default, not
    # settable from the URL) can push a smoke run's two train points off their chart, which is then empty.
    assert max(line[:, :370].sum(), line[:, 370:].sum()) > 100, f"both reward charts are empty in {shot}"
