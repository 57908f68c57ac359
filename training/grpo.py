"""GRPO: group-normalised advantages, the clipped policy-gradient loss, and the learner that applies them.

One update from a batch of finished rollouts:

    A_i      = (r_i - mean(r_group)) / (std(r_group) + eps)              per GRPO group (same task)
    ratio_t  = exp(logp_new(t) - logp_behaviour(t))                      on the sampled response tokens
    L_pg     = -min(ratio_t * A_i, clip(ratio_t, 1 - eps_clip, 1 + eps_clip) * A_i)
    L_kl     = exp(logp_ref - logp_new) - (logp_ref - logp_new) - 1      (k3 estimator, to the warm start)
    l_it     = L_pg + beta * L_kl                                         per token t of response i

    loss_type "dapo"     sum_i sum_t l_it / (response tokens in the batch)        TRL's default; no length bias
              "grpo"     mean_i [ mean_t l_it ]                  a long reply's tokens weigh less than a short one's
              "dr_grpo"  mean_i [ sum_t l_it / max_tokens ]      Dr. GRPO: a constant normaliser

Logprobs are of the raw model (temperature 1), as the policy server reports the behaviour logprobs (like
vLLM): the ratio compares like with like whatever the sampling temperature. The learner also measures what
practitioners read first (TRL's names): the policy's entropy on the response tokens, the clip ratios, and how
far its logprobs are from the server's before the update (`sampling/sampling_logp_difference/*`: near 0 unless
the server runs other weights or another temperature). A step whose gradient norm is not finite is skipped.

The learner is plain torch on one `nn.Module`, so DistributedDataParallel or FSDP can wrap the model
without changes here (training/distributed.py): gradients are accumulated over micro-batches (with DDP's
`no_sync` on all but the last), advantages can be given for the whole batch when this process holds only a
shard of it, and `loss_scale` makes the wrapper's gradient average equal the single-process gradient.
"""

import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from training.config import GRPOConfig

__all__ = ["GRPOConfig", "GRPOLearner", "Sample", "group_advantages", "grpo_loss", "loss_normaliser",
           "response_logprobs"]
logger = logging.getLogger("training")


@dataclass
class Sample:
    """One rollout's LLM call as the learner sees it (from agl's triplet adapter)."""

    group_id: str  # rollouts of one task form a GRPO group
    prompt_ids: list[int]
    response_ids: list[int]
    reward: float
    behaviour_logprobs: list[float] | None = None  # per response token, from the serving policy


def group_advantages(rewards: list[float], group_ids: list[str], eps: float = 1e-6) -> torch.Tensor:
    """(r - group mean) / (group std + eps); a group whose rewards are all equal carries no signal (zeros)."""
    r = torch.tensor(rewards, dtype=torch.float64)
    adv = torch.zeros_like(r)
    for gid in dict.fromkeys(group_ids):
        idx = torch.tensor([i for i, g in enumerate(group_ids) if g == gid])
        group = r[idx]
        if len(group) > 1 and group.std() > 0:
            adv[idx] = (group - group.mean()) / (group.std() + eps)
    return adv.float()


def loss_normaliser(samples: list[Sample], loss_type: str) -> float:
    """What `grpo_loss`'s sum is divided by over the WHOLE batch: its response tokens for dapo, its
    sequences otherwise."""
    if loss_type == "dapo":
        return float(max(sum(len(s.response_ids) for s in samples), 1))
    return float(max(len(samples), 1))


class ResponseLogprobs(NamedTuple):
    logprobs: torch.Tensor  # [batch, max_response_len], padded positions 0
    mask: torch.Tensor  # 1 on response tokens
    entropy: torch.Tensor | None  # per-token entropy of the model's distribution (no gradient), when asked


def response_logprobs(model: nn.Module, samples: list[Sample], pad_id: int, device: torch.device,
                      entropy: bool = False) -> ResponseLogprobs:
    """Per-token log-probabilities of each sample's response tokens under `model`, from the raw logits."""
    seqs = [s.prompt_ids + s.response_ids for s in samples]
    width = max(len(s) for s in seqs)
    input_ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, seq in enumerate(seqs):  # right padding: positions stay 0..n-1 for every row
        input_ids[i, : len(seq)] = torch.tensor(seq)
        attention[i, : len(seq)] = 1
    input_ids, attention = input_ids.to(device), attention.to(device)
    all_logp = F.log_softmax(model(input_ids=input_ids, attention_mask=attention).logits[:, :-1].float(), dim=-1)
    token_logp = torch.gather(all_logp, 2, input_ids[:, 1:, None]).squeeze(-1)
    token_entropy = None
    if entropy:
        with torch.no_grad():
            token_entropy = -(all_logp.exp() * all_logp).sum(-1)

    max_resp = max(len(s.response_ids) for s in samples)
    out = torch.zeros((len(samples), max_resp), device=device)
    mask = torch.zeros((len(samples), max_resp), device=device)
    ent = torch.zeros((len(samples), max_resp), device=device) if entropy else None
    for i, s in enumerate(samples):
        start = len(s.prompt_ids) - 1  # logits at position p predict token p + 1
        n = len(s.response_ids)
        out[i, :n] = token_logp[i, start : start + n]
        mask[i, :n] = 1
        if ent is not None:
            ent[i, :n] = token_entropy[i, start : start + n]
    return ResponseLogprobs(out, mask, ent)


def grpo_loss(new_logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None, advantages: torch.Tensor,
              mask: torch.Tensor, clip_eps: float, kl_coef: float, loss_type: str = "dapo",
              max_completion_length: int | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The batch's loss as a SUM in `loss_type`'s units (the caller divides by `loss_normaliser` of the whole
    batch), and token sums of KL and of the clip indicators (TRL's: a low clip is a ratio below 1 - eps on a
    negative advantage, a high clip above 1 + eps on a positive one; only those stop the gradient)."""
    ratio = torch.exp(new_logp - old_logp)
    adv = advantages[:, None]
    surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    per_token = -surrogate
    kl = torch.zeros_like(new_logp)
    if ref_logp is not None:
        delta = ref_logp - new_logp
        kl = torch.exp(delta) - delta - 1
        per_token = per_token + kl_coef * kl
    lengths = mask.sum(dim=1).clamp(min=1)
    if loss_type == "grpo":
        loss = ((per_token * mask).sum(dim=1) / lengths).sum()
    elif loss_type == "dapo":
        loss = (per_token * mask).sum()
    elif loss_type == "dr_grpo":
        if not max_completion_length:
            raise ValueError("loss_type dr_grpo needs max_completion_length (the sampling max_tokens)")
        loss = (per_token * mask).sum() / max_completion_length
    else:
        raise ValueError(f"unknown loss_type {loss_type!r} (grpo, dapo or dr_grpo)")
    low = ((ratio < 1 - clip_eps) & (adv < 0)).float() * mask
    high = ((ratio > 1 + clip_eps) & (adv > 0)).float() * mask
    stats = {
        "kl": (kl * mask).sum().detach(),
        "clip_ratio/low": low.sum().detach(),
        "clip_ratio/high": high.sum().detach(),
        "clip_ratio/region": (low + high).sum().detach(),
        "clip_ratio/low_min": (low.sum(dim=1) / lengths).min().detach(),
        "clip_ratio/high_max": (high.sum(dim=1) / lengths).max().detach(),
    }
    return loss, stats


@contextlib.contextmanager
def _accumulating(model: nn.Module):
    """Backward without the gradient all-reduce (DDP's `no_sync`, FSDP2's `set_requires_gradient_sync`): the
    gradients of all micro-batches are reduced once, on the last one."""
    if hasattr(model, "no_sync"):
        with model.no_sync():
            yield
    elif hasattr(model, "set_requires_gradient_sync"):
        model.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            model.set_requires_gradient_sync(True)
    else:
        yield


class GRPOLearner:
    """Owns the policy's optimizer and applies one GRPO update per call to `step`."""

    def __init__(self, model: nn.Module, ref_model: nn.Module | None, config: GRPOConfig, pad_token_id: int,
                 device: torch.device | str = "cpu", autocast_dtype: torch.dtype | None = None,
                 reference_mode: Callable[[], contextlib.AbstractContextManager] | None = None,
                 max_completion_length: int | None = None):
        """`ref_model`: the KL reference as a separate model (full fine-tuning); or `reference_mode`: a context
        in which `model` itself computes the reference (LoRA: the base with its adapters disabled).
        `max_completion_length`: dr_grpo's normaliser, the sampling max_tokens."""
        self.model = model  # may be wrapped in DistributedDataParallel or sharded by FSDP
        self.ref_model = ref_model
        self.reference_mode = reference_mode
        self.config = config
        self.pad_token_id = pad_token_id
        self.device = torch.device(device)
        self.autocast_dtype = autocast_dtype  # bf16 on GPUs that support it; logprobs are still taken in fp32
        self.max_completion_length = max_completion_length
        if config.loss_type == "dr_grpo" and not max_completion_length:
            raise ValueError("loss_type dr_grpo needs max_completion_length (the sampling max_tokens)")
        trainable = [p for p in model.parameters() if p.requires_grad]  # the adapters alone under LoRA
        self.optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=config.weight_decay)
        if ref_model is not None:
            ref_model.requires_grad_(False).eval()

    def step(self, samples: list[Sample], advantages: torch.Tensor | None = None, loss_scale: float | None = None,
             micro_batches: int = 0) -> dict[str, float]:
        """One optimizer step on `samples`. Returns the logged metrics (token means over `samples`).

        Alone, `samples` is the whole batch. Under DDP / FSDP it is this rank's shard (training/distributed.py
        `shard`): `advantages` then come from the whole batch (a group may span ranks), `loss_scale` is
        world_size / `loss_normaliser` of the whole batch (the wrapper averages gradients over ranks), and
        `micro_batches` is the count every rank runs, since FSDP gathers parameters in each forward: passes past
        this rank's own repeat its first micro-batch with weight 0. A rank with no sample passes one with
        `loss_scale` 0: its passes still join the collectives and add nothing.
        """
        cfg = self.config
        if advantages is None:
            advantages = group_advantages([s.reward for s in samples], [s.group_id for s in samples], cfg.adv_eps)
        scale = 1.0 / loss_normaliser(samples, cfg.loss_type) if loss_scale is None else loss_scale
        autocast = torch.autocast(self.device.type, dtype=self.autocast_dtype or torch.bfloat16,
                                  enabled=self.autocast_dtype is not None)
        # Dropout off: the ratio must compare the same function that produced the behaviour logprobs.
        self.model.eval()
        self.optimizer.zero_grad(set_to_none=True)
        sums = dict.fromkeys(("loss", "kl", "entropy", "clip_ratio/low", "clip_ratio/high", "clip_ratio/region",
                              "logp_gap", "logp_gap_max", "gap_tokens", "tokens"), 0.0)
        low_min, high_max = 1.0, 0.0
        chunks = [list(range(i, min(i + cfg.micro_batch_size, len(samples))))
                  for i in range(0, len(samples), cfg.micro_batch_size)]
        own = len(chunks)
        chunks += [chunks[0]] * (micro_batches - own)
        for k, idx in enumerate(chunks):
            batch = [samples[i] for i in idx]
            with contextlib.nullcontext() if k == len(chunks) - 1 else _accumulating(self.model):
                with autocast:
                    new_logp, mask, entropy = response_logprobs(self.model, batch, self.pad_token_id, self.device,
                                                                entropy=True)
                    ref_logp = self._reference_logprobs(batch) if cfg.kl_coef > 0 else None
                old_logp, scored = self._behaviour_logprobs(batch, new_logp)
                loss, stats = grpo_loss(new_logp, old_logp, ref_logp, advantages[idx].to(self.device), mask,
                                        cfg.clip_eps, cfg.kl_coef, cfg.loss_type, self.max_completion_length)
                weight = scale if k < own else 0.0
                (loss * weight).backward()
            if k >= own:
                continue
            gap = (new_logp.detach() - old_logp).abs() * scored  # before the update: server vs learner
            sums["loss"] += loss.item() * weight
            sums["entropy"] += (entropy * mask).sum().item()
            for key in ("kl", "clip_ratio/low", "clip_ratio/high", "clip_ratio/region"):
                sums[key] += stats[key].item()
            sums["logp_gap"] += gap.sum().item()
            sums["logp_gap_max"] = max(sums["logp_gap_max"], gap.max().item())
            sums["gap_tokens"] += scored.sum().item()
            sums["tokens"] += mask.sum().item()
            low_min = min(low_min, stats["clip_ratio/low_min"].item())
            high_max = max(high_max, stats["clip_ratio/high_max"].item())
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm))
        skipped = not math.isfinite(grad_norm)
        if skipped:  # one bad batch must not poison the weights (and Adam's moments) for good
            logger.warning("gradient norm is %s: optimizer step skipped", grad_norm)
            self.optimizer.zero_grad(set_to_none=True)
        else:
            self.optimizer.step()
        tokens = max(sums["tokens"], 1.0)
        return {
            "loss": sums["loss"],
            "kl": sums["kl"] / tokens,
            "entropy": sums["entropy"] / tokens,
            "clip_ratio/low_mean": sums["clip_ratio/low"] / tokens,
            "clip_ratio/high_mean": sums["clip_ratio/high"] / tokens,
            "clip_ratio/region_mean": sums["clip_ratio/region"] / tokens,
            "clip_ratio/low_min": low_min,
            "clip_ratio/high_max": high_max,
            "sampling/sampling_logp_difference/mean": sums["logp_gap"] / max(sums["gap_tokens"], 1.0),
            "sampling/sampling_logp_difference/max": sums["logp_gap_max"],
            "grad_norm": grad_norm,
            "learning_rate": self.optimizer.param_groups[0]["lr"],
            "update_skipped": float(skipped),
            "response_tokens": int(sums["tokens"]),
        }

    @torch.no_grad()
    def _reference_logprobs(self, batch: list[Sample]) -> torch.Tensor | None:
        if self.reference_mode is not None:
            with self.reference_mode():
                return response_logprobs(self.model, batch, self.pad_token_id, self.device).logprobs
        if self.ref_model is not None:
            return response_logprobs(self.ref_model, batch, self.pad_token_id, self.device).logprobs
        return None

    @staticmethod
    def _behaviour_logprobs(batch: list[Sample], new_logp: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The serving policy's logprobs where they came with the rollout, and a mask of those tokens; elsewhere
        the current policy's (ratio 1, which is exact for the first update after a weight sync)."""
        old = new_logp.detach().clone()
        scored = torch.zeros_like(old)
        for i, s in enumerate(batch):
            if s.behaviour_logprobs is not None and len(s.behaviour_logprobs) == len(s.response_ids):
                old[i, : len(s.response_ids)] = torch.tensor(s.behaviour_logprobs, device=old.device)
                scored[i, : len(s.response_ids)] = 1
        return old, scored
