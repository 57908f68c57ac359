"""`--mode distributed` on CPU with gloo: the sharded learner equals one process; the CLI run writes the
oneclick outputs once, spreads rollouts over the replicas, its checkpoint resumes in `--mode cpu`, and
Ctrl-C stops every rank with a checkpoint."""

import json
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import psutil
import pytest
import torch

from training.config import load_run_config
from training.distributed import shard
from training.grpo import GRPOConfig, Sample, group_advantages

REPO = Path(__file__).resolve().parent.parent


def batch(n: int) -> list[Sample]:
    return [Sample(f"task-{i // 3}", [1, 2], [3 + i], reward=float(i % 3 == 0)) for i in range(n)]


def learner(**settings) -> GRPOConfig:
    return GRPOConfig.model_validate({**load_run_config().grpo.model_dump(), **settings})


def test_shards_partition_the_batch_with_whole_batch_advantages():
    samples = batch(9)
    parts = [shard(samples, rank, 2, learner(micro_batch_size=2, loss_type="grpo")) for rank in range(2)]
    assert [len(p.samples) for p in parts] == [5, 4]
    assert sorted(id(s) for p in parts for s in p.samples) == sorted(id(s) for s in samples)
    whole = group_advantages([s.reward for s in samples], [s.group_id for s in samples])
    assert torch.equal(parts[0].advantages, whole[0::2]) and torch.equal(parts[1].advantages, whole[1::2])
    assert all(p.loss_scale == 2 / 9 for p in parts)  # DDP averages 2 ranks: 2/9 per sample = 1/9 overall
    assert all(p.micro_batches == 3 for p in parts)  # 5 samples in micro-batches of 2: every rank runs 3


def test_dapo_shards_divide_by_the_whole_batchs_tokens():
    samples = [Sample("t", [1], [2] * n, reward=float(n)) for n in (1, 2, 3, 4, 5)]  # 15 response tokens
    parts = [shard(samples, rank, 2, learner(loss_type="dapo")) for rank in range(2)]
    assert all(p.loss_scale == 2 / 15 for p in parts)


def test_a_rank_without_samples_joins_with_zero_weight():
    empty = shard(batch(1), rank=1, world_size=2, config=learner(micro_batch_size=8))
    assert len(empty.samples) == 1 and empty.loss_scale == 0.0 and empty.micro_batches == 1


@pytest.mark.parametrize("wrapper, loss_type", [("ddp", "dapo"), ("fsdp", "grpo"), ("ddp", "dr_grpo")])
def test_two_gloo_ranks_take_the_single_process_step(tmp_path, wrapper, loss_type):
    """2 ranks x 2 steps: identical weights on both ranks after each step, and step 1's gradient (after the
    all-reduce) equal to one process's gradient on the same batch, for each loss type's normaliser."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
           str(REPO / "tests" / "distributed_learner_check.py"), str(tmp_path), f"--{wrapper}", "--loss-type",
           loss_type]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rank0, rank1, single = (torch.load(tmp_path / f"{name}.pt") for name in ("rank0", "rank1", "single"))
    for step in (1, 2):
        weights = f"weights_{step}"
        assert rank0[weights].keys() == rank1[weights].keys() == single[weights].keys()
        for name, value in rank0[weights].items():
            assert torch.equal(value, rank1[weights][name]), f"step {step}: {name} differs between the ranks"
            assert torch.allclose(value, single[weights][name], atol=1e-4), f"step {step}: {name}"
    for name, grad in single["grads"].items():
        assert grad.abs().sum() > 0, name
        assert torch.allclose(rank0["grads"][name], grad, rtol=1e-4, atol=1e-7), name


def cli(*args: str) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-m", "training.train_feedback", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def replica_endpoints(db: Path) -> dict[str, set[str]]:
    """Per rollout mode, the policy endpoints its rollouts were sent to (read-only)."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        endpoint = {rid: json.loads(data)["resources"]["llm"]["endpoint"]
                    for rid, data in conn.execute("SELECT resources_id, data FROM resources")}
        used: dict[str, set[str]] = {}
        for data, in conn.execute("SELECT data FROM rollouts"):
            rollout = json.loads(data)
            used.setdefault(rollout["mode"], set()).add(endpoint[rollout["resources_id"]])
    return used


@pytest.mark.slow
def test_oneclick_distributed_smoke_then_resume_in_cpu_mode(tmp_path, assert_no_raw_pii):
    out = tmp_path / "run"
    summary, log = cli("oneclick", "--mode", "distributed", "--device", "cpu", "--nproc", "2", "--smoke",
                       "--output-dir", str(out))
    assert summary["world_size"] == 2 and summary["device"] == "cpu" and summary["mode"] == "distributed"
    assert summary["backend"] == "gloo" and summary["steps"] == 2
    assert json.loads((out / "summary.json").read_text()) == summary
    assert "world size 2, backend gloo, rank 0 on cpu" in log and "rank 1 on cpu" in log
    assert log.count("run finished") == 1  # rank 0 alone writes the outputs
    for name in ["store.db", "mubit.db", "metrics.jsonl", "report.md", "reward_curve.png"]:
        assert (out / name).is_file(), name
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [(r["split"], r["step"]) for r in records] == [("val", 0), ("train", 1), ("train", 2), ("val", 2)]
    assert all(r["replicas_in_sync"] for r in records if r["split"] == "train")
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["latest", "step-000001", "step-000002"]
    used = replica_endpoints(out / "store.db")
    assert len(used["train"]) == 2 and len(used["val"]) == 2  # the runners' requests went to both replicas

    resumed, _ = cli("oneclick", "--resume", str(out), "--steps", "3")  # a distributed checkpoint, --mode cpu
    assert resumed["mode"] == "cpu" and resumed["world_size"] == 1
    assert resumed["resumed_from_step"] == 2 and resumed["steps"] == 3
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["split"] == "train"] == [1, 2, 3]
    assert_no_raw_pii(out)


@pytest.mark.slow
def test_ctrl_c_checkpoints_and_stops_every_rank(tmp_path):
    """Ctrl-C (twice) reaches the launcher only: rank 0 checkpoints and releases rank 1, the run exits 130."""
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "training.train_feedback", "oneclick", "--mode", "distributed",
                             "--nproc", "2", "--smoke", "--steps", "50", "--output-dir", str(out)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    metrics = out / "metrics.jsonl"
    deadline = time.monotonic() + 300
    while not (metrics.is_file() and '"step": 2, "split": "train"' in metrics.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended or stalled before step 2"
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)  # a second Ctrl-C must not break the checkpoint
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] and summary["world_size"] == 2
    latest = (out / "checkpoints" / "latest").read_text().strip()
    assert latest == f"step-{summary['steps']:06d}"
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(out) in " ".join(p.info["cmdline"] or [])]
