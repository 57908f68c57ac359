"""Checkpoints that resume a run exactly: HF-format weights, optimizer, RNG states, step and config.

Layout: `DIR/checkpoints/step-000010/{model/, optimizer.pt, rng.pt, state.json}` plus `DIR/checkpoints/latest`
(the name of the newest complete checkpoint). Each checkpoint is written into a temporary folder and
renamed into place, and `latest` is replaced atomically, so a crash mid-save never leaves a broken one.
"""

import hashlib
import json
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch


class CheckpointError(ValueError):
    """A checkpoint folder that cannot be resumed from; the message names the path."""


@dataclass
class Checkpoint:
    path: Path
    step: int
    config: dict[str, Any]
    metrics: dict[str, Any]

    @property
    def model_dir(self) -> Path:
        return self.path / "model"


def weights_sha256(state: dict[str, torch.Tensor], keys: list[str] | None = None) -> str:
    """A fingerprint of model weights (over `keys`, default all), to check a resume starts from a checkpoint."""
    digest = hashlib.sha256()
    for name in sorted(keys if keys is not None else state):
        digest.update(name.encode())
        digest.update(state[name].detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(run_dir: Path, step: int, model, tokenizer, optimizer: torch.optim.Optimizer,
                    config: dict[str, Any], metrics: dict[str, Any] | None = None, keep: int = 2) -> Path:
    """Write checkpoint `step` and point `latest` at it; keep only the newest `keep` checkpoints."""
    root = Path(run_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    name = f"step-{step:06d}"
    tmp = root / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    unwrapped = getattr(model, "module", model)  # DistributedDataParallel keeps the model in .module
    unwrapped.save_pretrained(tmp / "model", safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(tmp / "model")
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    torch.save(rng_state(), tmp / "rng.pt")
    (tmp / "state.json").write_text(json.dumps({"step": step, "config": config, "metrics": metrics or {}}, indent=2))
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    latest_tmp = root / ".latest.tmp"
    latest_tmp.write_text(name)
    os.replace(latest_tmp, root / "latest")
    for old in sorted(p for p in root.glob("step-*") if p.is_dir())[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(run_dir: Path) -> Checkpoint:
    """The newest complete checkpoint of a run directory (or of a `checkpoints/` folder, or a checkpoint itself)."""
    path = Path(run_dir)
    if (path / "state.json").is_file():
        ckpt = path
    else:
        root = path / "checkpoints" if (path / "checkpoints").is_dir() else path
        pointer = root / "latest"
        if not pointer.is_file():
            raise CheckpointError(f"{path}: no checkpoint to resume from (expected {root}/latest)")
        ckpt = root / pointer.read_text().strip()
    try:
        state = json.loads((ckpt / "state.json").read_text())
        return Checkpoint(ckpt, int(state["step"]), state["config"], state.get("metrics", {}))
    except (OSError, ValueError, KeyError) as e:
        raise CheckpointError(f"{ckpt}: unreadable checkpoint state ({e})") from None


def restore_training_state(ckpt: Checkpoint, optimizer: torch.optim.Optimizer) -> None:
    """Load optimizer and RNG states (the weights are loaded from `ckpt.model_dir` by the caller)."""
    optimizer.load_state_dict(torch.load(ckpt.path / "optimizer.pt", map_location="cpu", weights_only=True))
    set_rng_state(torch.load(ckpt.path / "rng.pt", weights_only=False))
