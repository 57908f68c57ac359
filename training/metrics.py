"""What a step's rollouts measure, under TRL's GRPOTrainer names (the learner's own metrics: training/grpo.py).

    reward, reward_std, rewards/<component>/mean, rewards/<component>/std     over rollouts that produced a reply
    frac_reward_zero_std, adv_abs_mean                                        over the GRPO groups of the batch
    completions/{mean,min,max}_length, completions/clipped_ratio,
    completions/{mean,min,max}_terminated_length                              over the replies' token counts

Every metric's meaning and what a healthy run shows: docs/training.md.
"""

import statistics

from rewards import COMPONENTS, GATES
from training.grpo import Sample, group_advantages
from training.rollouts import RolloutResult


def reward_metrics(results: list[RolloutResult]) -> dict[str, float]:
    """The reward and each component's mean and std over rollouts that produced a reply; {} when none did."""
    scored = [r for r in results if r.answered and r.reward is not None]
    if not scored:
        return {}
    rewards = [r.reward for r in scored]
    metrics = {"reward": statistics.fmean(rewards), "reward_std": statistics.pstdev(rewards)}
    for name in (*COMPONENTS, *GATES):
        values = [r.components.get(name, 0.0) for r in scored]
        metrics[f"rewards/{name}/mean"] = statistics.fmean(values)
        metrics[f"rewards/{name}/std"] = statistics.pstdev(values)
    return metrics


def group_metrics(samples: list[Sample], adv_eps: float) -> dict[str, float]:
    """How much signal the batch carries: the share of GRPO groups whose rewards are all equal (their
    advantages are 0, so they teach nothing), and the mean absolute advantage."""
    if not samples:
        return {}
    groups: dict[str, list[float]] = {}
    for s in samples:
        groups.setdefault(s.group_id, []).append(s.reward)
    flat = sum(1 for rewards in groups.values() if len(rewards) < 2 or max(rewards) == min(rewards))
    advantages = group_advantages([s.reward for s in samples], [s.group_id for s in samples], adv_eps)
    return {"frac_reward_zero_std": flat / len(groups), "adv_abs_mean": float(advantages.abs().mean())}


def completion_metrics(results: list[RolloutResult]) -> dict[str, float]:
    """Reply lengths in tokens; `clipped_ratio` is the share cut at max_tokens (finish reason `length`), and the
    terminated lengths are those of the replies that ended on their own (0 when none did, as TRL logs it)."""
    replies = [r for r in results if r.sample is not None]
    if not replies:
        return {}
    lengths = [len(r.sample.response_ids) for r in replies]
    terminated = [n for n, r in zip(lengths, replies, strict=True) if r.finish_reason != "length"]
    return {
        "completions/mean_length": statistics.fmean(lengths),
        "completions/min_length": float(min(lengths)),
        "completions/max_length": float(max(lengths)),
        "completions/clipped_ratio": 1 - len(terminated) / len(lengths),
        "completions/mean_terminated_length": statistics.fmean(terminated) if terminated else 0.0,
        "completions/min_terminated_length": float(min(terminated, default=0)),
        "completions/max_terminated_length": float(max(terminated, default=0)),
    }
