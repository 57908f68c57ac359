"""Checkpoints that resume a run exactly: HF-format weights, optimizer, RNG states, step and config.

Layout: `DIR/checkpoints/step-000010/{model/, optimizer.pt, rng.pt, state.json}` plus `DIR/checkpoints/latest`
(the name of the newest complete checkpoint). Under LoRA the checkpoint also holds `adapter/` (peft's
format: what a resume loads onto the base), and `model/` is the merged model (base + adapters folded in), a
plain Hugging Face directory that transformers and vLLM load as it is. Each checkpoint is written into a
temporary folder and renamed into place, and `latest` is replaced atomically, so a crash mid-save never
leaves a broken one.

Weights and optimizer state are stored whole (unsharded) and keyed by parameter name, through
`torch.distributed.checkpoint.state_dict`: the same files come out of a plain model, DDP and FSDP, and load
into any of them, so a checkpoint of `--mode cpu` resumes under `--mode distributed` and back. Under
torch.distributed every rank calls `save_checkpoint` (FSDP gathers the shards) and rank 0 writes.
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
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_optimizer_state_dict,
)


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


def full_state_dict(model: torch.nn.Module, *, cpu: bool = False) -> dict[str, torch.Tensor]:
    """The whole model's weights by parameter name, unwrapped from DDP and gathered from FSDP shards (a
    collective then: every rank calls it). `cpu=True`: copies on the CPU, on rank 0 only."""
    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=cpu))


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
                    config: dict[str, Any], metrics: dict[str, Any] | None = None, keep: int = 2,
                    merged: torch.nn.Module | None = None) -> Path:
    """Write checkpoint `step` and point `latest` at it; keep only the newest `keep` checkpoints. Under LoRA,
    `merged` is the plain model to store as `model/` (rank 0), and the adapter goes to `adapter/`."""
    weights = full_state_dict(model, cpu=True)
    optimizer_state = get_optimizer_state_dict(model, optimizer,
                                               options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if dist.is_initialized() and dist.get_rank() != 0:
        return Path(run_dir) / "checkpoints" / f"step-{step:06d}"
    root = Path(run_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    name = f"step-{step:06d}"
    tmp = root / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    unwrapped = getattr(model, "module", model)  # DistributedDataParallel keeps the model in .module
    if merged is not None:  # LoRA: the adapter for resuming, the merged model for everyone else
        unwrapped.save_pretrained(tmp / "adapter", state_dict=weights, safe_serialization=True)
        merged.save_pretrained(tmp / "model", safe_serialization=True)
    else:
        unwrapped.save_pretrained(tmp / "model", state_dict=weights, safe_serialization=True)
    if tokenizer is not None:
        for folder in ("model", "adapter"):
            if (tmp / folder).is_dir():
                tokenizer.save_pretrained(tmp / folder)
    torch.save(optimizer_state, tmp / "optimizer.pt")
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


def restore_training_state(ckpt: Checkpoint, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Load optimizer and RNG states into `model`'s optimizer, plain, DDP or FSDP (the weights are loaded
    from `ckpt.model_dir` by the caller)."""
    state = torch.load(ckpt.path / "optimizer.pt", map_location="cpu", weights_only=True)
    if any(isinstance(key, int) for key in state.get("state", {})):  # optimizer.state_dict() of older checkpoints
        optimizer.load_state_dict(state)
    else:
        set_optimizer_state_dict(model, optimizer, state, options=StateDictOptions(full_state_dict=True))
    set_rng_state(torch.load(ckpt.path / "rng.pt", weights_only=False))
