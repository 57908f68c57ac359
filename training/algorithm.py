"""GRPO and evaluation as Agent Lightning algorithms.

Both run in the algorithm process (rank 0 in `--mode distributed`). Each policy replica (one per learner
process) is published as an `agl.LLM` resource, and rollout i of a batch is enqueued with replica
i mod N's resources, so agl's runners spread their requests over all replicas.
`FeedbackGRPO.run` per step: pick tasks, enqueue G rollouts of each (the GRPO group), wait, read each
rollout's triplet and reward back from the store, one policy update (training/policy_update.py: the
learner step and the new weights into every replica); validation with fixed-seed sampling before
training, every `val_every` steps and at the end; a checkpoint every `checkpoint_every` steps and when
interrupted.

Rollouts that governance does not answer (escalate / reject) carry no triplet and never enter a group
(see agents/feedback_agent.py); the task pool is pre-governed so that no group is wasted on them.
"""

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import agentlightning as agl

from training.config import RunConfig
from training.outputs import MetricsLog, ProgressReporter, ValResult, summarize_rewards, val_result
from training.policy_update import PolicyUpdate
from training.rollouts import RolloutResult, enqueue, read_result, wait_all

logger = logging.getLogger("training")


def llm_resource(endpoint: str, model: str, sampling: dict[str, Any]) -> agl.LLM:
    return agl.LLM(endpoint=endpoint, model=model, sampling_parameters=sampling)


async def publish(store: agl.LightningStore, endpoints: list[str], model: str, sampling: dict[str, Any]) -> list[str]:
    """One resources version per policy replica; returns their ids."""
    return [(await store.add_resources({"llm": llm_resource(e, model, sampling)})).resources_id for e in endpoints]


async def run_rollouts(algo: agl.Algorithm, tasks: list[dict], *, mode: str, resources_ids: list[str], copies: int,
                       config: agl.RolloutConfig, step: int, on_progress=None) -> list[RolloutResult]:
    store, adapter = algo.get_store(), algo.get_adapter()
    ids = await enqueue(store, tasks, mode=mode, resources_ids=resources_ids, copies=copies, config=config,
                        step=step)
    deadline = (config.timeout_seconds or 300) * config.max_attempts + 60
    finished = await wait_all(store, ids, deadline, on_progress)
    return [await read_result(store, adapter, r) for r in finished]


class EvalAlgorithm(agl.Algorithm):
    """One rollout per task of a split, against an LLM endpoint; the results stay on `self.results`."""

    def __init__(self, tasks: list[dict], llm: agl.LLM, mode: str, rollout_config: agl.RolloutConfig,
                 on_progress: Callable[[int, int], None] | None = None):
        super().__init__()
        self.tasks, self.llm, self.mode, self.rollout_config = tasks, llm, mode, rollout_config
        self.on_progress = on_progress
        self.results: list[RolloutResult] = []

    async def run(self, train_dataset=None, val_dataset=None) -> None:
        resources = await self.get_store().add_resources({"llm": self.llm})
        self.results = await run_rollouts(self, self.tasks, mode=self.mode, resources_ids=[resources.resources_id],
                                          copies=1, config=self.rollout_config, step=0, on_progress=self.on_progress)


@dataclass
class TrainState:
    """What the CLI reads back after `fit`: validation results and counts (the algorithm runs in-process)."""

    val: list[ValResult] = field(default_factory=list)
    last_step: int = 0
    rollouts: int = 0
    interrupted: bool = False


class FeedbackGRPO(agl.Algorithm):
    def __init__(self, cfg: RunConfig, *, update: PolicyUpdate, endpoints: list[str], model_name: str,
                 train_tasks: list[dict], val_tasks: list[dict], metrics: MetricsLog, progress: ProgressReporter,
                 start_step: int = 0, elapsed_before: float = 0.0, validated_at_start: bool = False):
        super().__init__()
        self.cfg, self.update, self.endpoints, self.model_name = cfg, update, endpoints, model_name
        self.train_tasks, self.val_tasks = train_tasks, val_tasks
        self.metrics, self.progress = metrics, progress
        self.start_step, self.elapsed_before = start_step, elapsed_before
        self.validated_at_start = validated_at_start  # a resumed run already validated its checkpointed step
        self.state = TrainState(last_step=start_step)
        self._started = time.monotonic()
        self._order: list[int] = []

    # -- task sampling: seeded epochs over the pool, from the global `random` state (checkpointed) ----------
    def _next_tasks(self) -> list[dict]:
        picked = []
        while len(picked) < self.cfg.rollouts.tasks_per_step:
            if not self._order:
                self._order = random.sample(range(len(self.train_tasks)), len(self.train_tasks))
            picked.append(self.train_tasks[self._order.pop()])
        return picked

    def _rollout_config(self) -> agl.RolloutConfig:
        r = self.cfg.rollouts
        return agl.RolloutConfig(timeout_seconds=r.timeout_seconds, max_attempts=r.max_attempts,
                                 retry_condition=["timeout", "unresponsive"])

    async def run(self, train_dataset=None, val_dataset=None) -> None:
        cfg, store = self.cfg, self.get_store()
        sampling = {"temperature": cfg.sampling.temperature, "top_p": cfg.sampling.top_p,
                    "max_tokens": cfg.sampling.max_tokens, "logprobs": True, "seed": cfg.seed}
        train_ids = await publish(store, self.endpoints, self.model_name, sampling)
        self._val_resources_ids = await publish(store, self.endpoints, self.model_name,
                                                {**sampling, "seed": cfg.val_seed})
        started = self._started = time.monotonic()
        step = self.start_step
        last_saved = self.start_step
        try:
            if not self.validated_at_start:
                await self._validate(step, started)
            for step in range(self.start_step + 1, cfg.steps + 1):
                await self._train_step(step, train_ids, started)
                self.state.last_step = step
                if step % cfg.val_every == 0 or step == cfg.steps:
                    await self._validate(step, started)
                if step % cfg.checkpoint_every == 0 or step == cfg.steps:
                    self._save(step)
                    last_saved = step
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.state.interrupted = True
            if self.state.last_step > last_saved:
                self._save(self.state.last_step)
            self.progress.phase(f"interrupted after step {self.state.last_step}: checkpoint saved; continue with "
                                "--resume")
            raise

    async def _train_step(self, step: int, resources_ids: list[str], started: float) -> None:
        cfg = self.cfg
        self.progress.phase(f"step {step}: rollouts")
        t0 = time.monotonic()
        results = await run_rollouts(self, self._next_tasks(), mode="train", resources_ids=resources_ids,
                                     copies=cfg.rollouts.group_size, config=self._rollout_config(), step=step)
        t1 = time.monotonic()
        self.state.rollouts += len(results)
        samples = [r.sample for r in results if r.sample is not None]
        self.progress.phase(f"step {step}: update on {len(samples)} samples")
        learn = self.update.apply(samples) if samples else {}  # every later rollout sees the new policy
        t2 = time.monotonic()
        mean, std, comps = summarize_rewards(results)
        response_tokens = sum(len(s.response_ids) for s in samples)
        record = {
            "step": step, "split": "train", "reward_mean": mean, "reward_std": std,
            **{f"reward/{k}": v for k, v in comps.items()}, **learn,
            "samples": len(samples), "rollouts": len(results), "response_tokens": response_tokens,
            "tokens_per_s": response_tokens / max(t1 - t0, 1e-9), "rollouts_per_s": len(results) / max(t1 - t0, 1e-9),
            "step_seconds": t2 - t0, "rollout_seconds": t1 - t0, "update_seconds": t2 - t1,
            "elapsed_seconds": self.elapsed_before + time.monotonic() - started,
        }
        self.metrics.append(record)
        self.progress.step(step, cfg.steps, f"reward {mean:+.3f}  loss {learn.get('loss', 0):+.3f}  "
                                            f"{(t2 - t0):.1f} s/step")

    async def _validate(self, step: int, started: float) -> None:
        if not self.val_tasks:
            return
        self.progress.phase(f"validation at step {step}")
        results = await run_rollouts(self, self.val_tasks, mode="val", resources_ids=self._val_resources_ids,
                                     copies=1, config=self._rollout_config(), step=step)
        val = val_result(step, results)
        self.state.val.append(val)
        self.metrics.append({"step": step, "split": "val", "reward_mean": val.reward_mean,
                             **{f"reward/{k}": v for k, v in val.components.items()}, "answered": val.answered,
                             "elapsed_seconds": self.elapsed_before + time.monotonic() - started})
        self.progress.phase(f"validation at step {step}: reward {val.reward_mean:+.3f} over {val.answered} replies")

    def _save(self, step: int) -> None:
        self.update.save(step, {"elapsed_seconds": self.elapsed_before + time.monotonic() - self._started})
