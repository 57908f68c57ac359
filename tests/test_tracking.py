"""Trackers: the same records reach TensorBoard, W&B (offline) and MLflow (file store) under the same names, a
resumed run continues its own history, and a tracker that fails mid-run is dropped without stopping training."""

import logging
import time

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from training.config import load_run_config
from training.tracking import TensorBoardTracker, Trackers, open_trackers, scalars

RECORDS = [
    {"step": 0, "split": "val", "reward": -0.2, "answered": 4},
    {"step": 1, "split": "train", "reward": 0.1, "rewards/length/mean": 0.5, "entropy": 3.2, "replicas_in_sync": True},
    {"step": 2, "split": "train", "reward": 0.3, "rewards/length/mean": 0.6, "entropy": 3.0, "replicas_in_sync": True},
]


def tensorboard_scalars(log_dir) -> dict[str, list[tuple[int, float]]]:
    events = EventAccumulator(str(log_dir))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def test_record_names_are_split_slash_key():
    assert scalars(RECORDS[1]) == {"train/reward": 0.1, "train/rewards/length/mean": 0.5, "train/entropy": 3.2,
                                   "train/replicas_in_sync": 1.0}
    assert scalars(RECORDS[0]) == {"val/reward": -0.2, "val/answered": 4.0}


def test_tensorboard_holds_every_record_and_a_resume_replaces_later_steps(tmp_path):
    cfg = load_run_config(overrides=["tracking.report_to=[tensorboard]"])
    trackers = open_trackers(cfg, tmp_path)
    for record in RECORDS:
        trackers.log_record(record)
    trackers.close()
    seen = tensorboard_scalars(tmp_path / "tb")
    assert seen["train/reward"] == [(1, pytest.approx(0.1)), (2, pytest.approx(0.3))]
    assert seen["val/reward"] == [(0, pytest.approx(-0.2))]

    # Resumed from the checkpoint of step 1: step 2 is trained again and its new values are the ones shown.
    resumed = open_trackers(cfg, tmp_path, resume_step=1)
    resumed.log_record({**RECORDS[2], "reward": 0.9})
    resumed.close()
    assert tensorboard_scalars(tmp_path / "tb")["train/reward"] == [(1, pytest.approx(0.1)), (2, pytest.approx(0.9))]


def test_wandb_offline_writes_the_run_locally(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.delenv("WANDB_MODE", raising=False)
    cfg = load_run_config(overrides=["tracking.report_to=[wandb]"])
    trackers = open_trackers(cfg, tmp_path)
    run = trackers.trackers[0].run
    assert run.settings.mode == "offline" and run.config["grpo"]["lr"] == cfg.grpo.lr
    for record in RECORDS:
        trackers.log_record(record)
    trackers.close()
    assert wandb.run is None  # finished
    files = list((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))  # what `wandb sync` uploads later
    assert len(files) == 1
    names = [name.encode() for name in ("train/reward", "train/rewards/length/mean", "val/reward")]
    deadline = time.monotonic() + 60  # wandb-core, a process of its own, flushes the file after finish() returns
    while not all(name in files[0].read_bytes() for name in names) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert all(name in files[0].read_bytes() for name in names)


def test_mlflow_logs_to_a_file_store_and_a_resume_continues_the_run(tmp_path):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    cfg = load_run_config(overrides=["tracking.report_to=[mlflow]"])
    trackers = open_trackers(cfg, tmp_path)
    for record in RECORDS[:2]:
        trackers.log_record(record)
    trackers.close()
    resumed = open_trackers(cfg, tmp_path, resume_step=1)
    resumed.log_record(RECORDS[2])
    resumed.close()

    client = MlflowClient(tracking_uri=(tmp_path / "mlruns").as_uri())
    run_id = (tmp_path / "mlflow_run_id").read_text().strip()
    history = client.get_metric_history(run_id, "train/reward")
    assert [(m.step, m.value) for m in history] == [(1, 0.1), (2, 0.3)]  # one run across the resume
    run = client.get_run(run_id)
    assert run.data.params["grpo.lr"] == str(cfg.grpo.lr) and run.info.status == "FINISHED"


def test_a_tracker_that_fails_is_dropped_with_one_warning(tmp_path, caplog):
    class Broken:
        name = "broken"

        def log(self, scalars, step):
            raise ConnectionError("server gone")

        def close(self):
            pass

    tensorboard = TensorBoardTracker(tmp_path, {"seed": 1}, None)
    trackers = Trackers([Broken(), tensorboard])
    with caplog.at_level(logging.WARNING, logger="training"):
        for record in RECORDS:
            trackers.log_record(record)
    trackers.close()
    assert [r.getMessage() for r in caplog.records if "broken" in r.getMessage()] == [
        "broken stopped logging (ConnectionError: server gone); metrics.jsonl has everything"]
    assert len(tensorboard_scalars(tmp_path / "tb")["train/reward"]) == 2  # the others carried on
