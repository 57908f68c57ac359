"""The learner's half of a training step: one GRPO update, the new weights into the serving replica, checkpoints.

`FeedbackGRPO` (training/algorithm.py) drives a `PolicyUpdate` in `--mode cpu` and a
`DistributedPolicyUpdate` (training/distributed.py) in `--mode distributed`; both have `apply`, `save`
and `close`, so the algorithm does not know how many processes learn.
"""

import time
from pathlib import Path
from typing import Any

import torch

from policy.server import PolicyEngine
from training.checkpoint import full_state_dict, save_checkpoint
from training.grpo import GRPOLearner, Sample


class PolicyUpdate:
    """This process's learner and the policy replica it serves."""

    def __init__(self, learner: GRPOLearner, engine: PolicyEngine, tokenizer, run_dir: Path, config: dict[str, Any]):
        self.learner, self.engine, self.tokenizer = learner, engine, tokenizer
        self.run_dir, self.config = run_dir, config

    def apply(self, samples: list[Sample], advantages: torch.Tensor | None = None, loss_scale: float | None = None,
              micro_batches: int = 0) -> dict[str, float]:
        """One learner step (see `GRPOLearner.step`), then every later request to the replica sees the new
        weights. Adds the time of each (`timing/learner_s`, `timing/weight_sync_s`)."""
        started = time.monotonic()
        metrics = self.learner.step(samples, advantages, loss_scale, micro_batches)
        learned = time.monotonic()
        self.engine.load_weights(full_state_dict(self.learner.model))
        return {**metrics, "timing/learner_s": learned - started, "timing/weight_sync_s": time.monotonic() - learned}

    def save(self, step: int, metrics: dict[str, Any]) -> None:
        save_checkpoint(self.run_dir, step, self.learner.model, self.tokenizer, self.learner.optimizer, self.config,
                        metrics)

    def close(self) -> None:
        """Nothing to release alone; the distributed variant releases the other ranks here."""
