"""Experiment trackers: each metrics record also goes to TensorBoard (by default), W&B and MLflow, under one name.

A record of metrics.jsonl, `{"step": 3, "split": "train", "reward": 0.41, "rewards/length/mean": 0.2, ...}`, is
logged at step 3 as `train/reward`, `train/rewards/length/mean`, ... in every tracker (numbers only; a boolean
as 0 / 1). `tracking.report_to` in the run config picks them, as TRL's `report_to` does:

    tensorboard   event files in <run>/tb/ (torch.utils.tensorboard); view: tensorboard --logdir <run>/tb
    wandb         offline by default (files in <run>/wandb/, `wandb sync` later); online with wandb_mode: online
    mlflow        a file store in <run>/mlruns unless tracking.mlflow_tracking_uri or $MLFLOW_TRACKING_URI names one

W&B and MLflow are optional extras (`pip install -e '.[wandb]'` / `'.[mlflow]'`), imported only when asked for.
On resume, TensorBoard drops what an earlier process logged past the checkpoint (as metrics.jsonl does), W&B
reuses the run's id (online it continues the run; offline, wandb ignores `resume` and writes a new offline-run-*
folder under the same id) and MLflow continues the run id kept in <run>/mlflow_run_id. A tracker that fails mid-run is
dropped with one warning: a long run never dies for a dashboard.
"""

import hashlib
import logging
import os
import re
import time
from pathlib import Path
from typing import Any, Protocol

from training.config import RunConfig

logger = logging.getLogger("training")


class TrackerError(ValueError):
    """A tracker asked for that cannot start (package missing, bad URI); one line."""


class Tracker(Protocol):
    name: str

    def log(self, scalars: dict[str, float], step: int) -> None: ...

    def close(self) -> None: ...


def scalars(record: dict[str, Any]) -> dict[str, float]:
    """A metrics record's numbers under their tracker names: `<split>/<key>`."""
    split = record.get("split", "train")
    return {f"{split}/{key}": float(value) for key, value in record.items()
            if key not in ("step", "split") and isinstance(value, int | float)}


def _flat(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict):
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


class TensorBoardTracker:
    name = "tensorboard"

    def __init__(self, run_dir: Path, config: dict[str, Any], resume_step: int | None):
        from torch.utils.tensorboard import SummaryWriter

        # purge_step: TensorBoard hides events an earlier process wrote at or after it (a resumed run's steps)
        self.writer = SummaryWriter(str(run_dir / "tb"), purge_step=None if resume_step is None else resume_step + 1)
        rows = "\n".join(f"| `{k}` | `{v}` |" for k, v in _flat(config).items())
        self.writer.add_text("config", "| setting | value |\n| --- | --- |\n" + rows, global_step=resume_step or 0)

    def log(self, scalars: dict[str, float], step: int) -> None:
        for tag, value in scalars.items():
            self.writer.add_scalar(tag, value, step)
        self.writer.flush()  # a run is watched while it trains

    def close(self) -> None:
        self.writer.close()


def _stable_id(run_dir: Path) -> str:
    """One id per run directory, so that a resumed run continues the same W&B run."""
    digest = hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9_-]', '-', run_dir.name)[:48]}-{digest}"


class WandbTracker:
    name = "wandb"

    def __init__(self, run_dir: Path, config: dict[str, Any], run_name: str, project: str, mode: str):
        try:
            import wandb
        except ImportError:
            raise TrackerError("tracking.report_to has wandb, but the wandb package is not installed "
                               "(pip install -e '.[wandb]')") from None
        settings = wandb.Settings(console="off", disable_git=True, save_code=False, x_disable_stats=True,
                                  silent=True)
        self.run = wandb.init(project=project, name=run_name, id=_stable_id(run_dir), resume="allow",
                              dir=str(run_dir), mode=os.environ.get("WANDB_MODE") or mode, config=config,
                              settings=settings)

    def log(self, scalars: dict[str, float], step: int) -> None:
        self.run.log(scalars, step=step)

    def close(self) -> None:
        self.run.finish()


class MlflowTracker:
    name = "mlflow"

    def __init__(self, run_dir: Path, config: dict[str, Any], run_name: str, experiment: str, uri: str | None):
        try:
            from mlflow.entities import Param
            from mlflow.tracking import MlflowClient
        except ImportError:
            raise TrackerError("tracking.report_to has mlflow, but the mlflow package is not installed "
                               "(pip install -e '.[mlflow]')") from None
        uri = uri or os.environ.get("MLFLOW_TRACKING_URI")
        if uri is None:  # MLflow 3 keeps its file store only on request (it prefers a database: sqlite:///...)
            uri = (run_dir / "mlruns").resolve().as_uri()
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        self.client = MlflowClient(tracking_uri=uri)
        id_file = run_dir / "mlflow_run_id"
        if id_file.is_file():
            self.run_id = id_file.read_text().strip()
            self.client.update_run(self.run_id, status="RUNNING")
            return
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else self.client.create_experiment(experiment)
        self.run_id = self.client.create_run(experiment_id, run_name=run_name).info.run_id
        id_file.write_text(self.run_id + "\n")
        params = [Param(k, str(v)[:500]) for k, v in _flat(config).items()]
        for i in range(0, len(params), 100):  # MLflow takes at most 100 params per call
            self.client.log_batch(self.run_id, params=params[i : i + 100])

    def log(self, scalars: dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self.client.log_batch(self.run_id, metrics=[Metric(k, v, now, step) for k, v in scalars.items()])

    def close(self) -> None:
        self.client.set_terminated(self.run_id)


class Trackers:
    """Every tracker of `tracking.report_to`, fed the same records."""

    def __init__(self, trackers: list[Tracker]):
        self.trackers = trackers

    def log_record(self, record: dict[str, Any]) -> None:
        values = scalars(record)
        for tracker in list(self.trackers):
            try:
                tracker.log(values, int(record.get("step", 0)))
            except Exception as e:  # noqa: BLE001 - any tracker failure: drop the tracker, keep training
                logger.warning("%s stopped logging (%s: %s); metrics.jsonl has everything", tracker.name,
                               type(e).__name__, e)
                self.trackers.remove(tracker)

    def close(self) -> None:
        for tracker in self.trackers:
            try:
                tracker.close()
            except Exception as e:  # noqa: BLE001
                logger.warning("%s did not close cleanly (%s)", tracker.name, e)


def open_trackers(cfg: RunConfig, run_dir: Path, resume_step: int | None = None) -> Trackers:
    """The trackers the config asks for; raises TrackerError when one cannot start (before training does)."""
    t = cfg.tracking
    config = cfg.model_dump(mode="json")
    run_name = t.run_name or run_dir.resolve().name
    opened: list[Tracker] = []
    try:
        for name in dict.fromkeys(t.report_to):
            if name == "tensorboard":
                opened.append(TensorBoardTracker(run_dir, config, resume_step))
            elif name == "wandb":
                opened.append(WandbTracker(run_dir, config, run_name, t.project, t.wandb_mode))
            elif name == "mlflow":
                opened.append(MlflowTracker(run_dir, config, run_name, t.project, t.mlflow_tracking_uri))
    except TrackerError:
        Trackers(opened).close()
        raise
    except Exception as e:  # noqa: BLE001 - a tracker's own start-up error, in one line
        Trackers(opened).close()
        raise TrackerError(f"tracking: {name} could not start: {type(e).__name__}: {str(e).splitlines()[0]}") from None
    return Trackers(opened)
