"""The learner's half of a training step: one GRPO update, the new weights into the serving replica, checkpoints.

`FeedbackGRPO` (training/algorithm.py) drives a `PolicyUpdate` in `--mode cpu` and a
`DistributedPolicyUpdate` (training/distributed.py) in `--mode distributed`; both have `apply`, `save`
and `close`, so the algorithm does not know how many processes learn. Under LoRA only the adapters travel
to the replica after an update; the replica keeps its own frozen copy of the base.
"""

from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from safetensors import safe_open

from policy.lora import is_lora, merged_copy, trainable_state, unwrap
from policy.server import PolicyEngine
from training.checkpoint import full_state_dict, save_checkpoint, weights_sha256
from training.grpo import GRPOLearner, Sample


class PolicyUpdate:
    """This process's learner and the policy replica it serves."""

    def __init__(self, learner: GRPOLearner, engine: PolicyEngine, tokenizer, run_dir: Path, config: dict[str, Any]):
        self.learner, self.engine, self.tokenizer = learner, engine, tokenizer
        self.run_dir, self.config = run_dir, config

    def apply(self, samples: list[Sample], advantages: torch.Tensor | None = None, loss_scale: float | None = None,
              micro_batches: int = 0) -> dict[str, float]:
        """One learner step (see `GRPOLearner.step`), then every later request to the replica sees the new
        weights."""
        metrics = self.learner.step(samples, advantages, loss_scale, micro_batches)
        model = self.learner.model
        self.engine.load_weights(trainable_state(full_state_dict(model), model), partial=True)
        return metrics

    def save(self, step: int, metrics: dict[str, Any]) -> None:
        main = not dist.is_initialized() or dist.get_rank() == 0
        merged = merged_copy(self.engine.model) if main and is_lora(self.learner.model) else None
        save_checkpoint(self.run_dir, step, self.learner.model, self.tokenizer, self.learner.optimizer, self.config,
                        metrics, merged=merged)

    def close(self) -> None:
        """Nothing to release alone; the distributed variant releases the other ranks here."""


def start_fingerprint(model: torch.nn.Module, saved: Path) -> str:
    """sha256 of the weights a run starts from as a checkpoint's `model/` stores them (merged under LoRA), over
    the tensor names of the safetensors file `saved` (tied weights appear once there), so a resumed run can
    show it starts exactly from its checkpoint."""
    plain = merged_copy(model) if is_lora(model) else unwrap(model)
    keys = None
    if saved.is_file():
        with safe_open(saved, "pt") as f:
            keys = list(f.keys())
    return weights_sha256(plain.state_dict(), keys)
