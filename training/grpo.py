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

The G rollouts of a group share one prompt, which is most of each sequence's tokens (system message, lessons,
feedback). With `share_prompts` a micro-batch holds whole groups and runs each distinct prompt once, keeping its
KV cache for the responses on top (`response_logprobs`): the same logprobs and gradients as whole sequences, to
float rounding, in about half the learner's time. TRL's GRPOTrainer runs every sequence whole.

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
                      entropy: bool = False, share_prompts: bool = False) -> ResponseLogprobs:
    """Per-token log-probabilities of each sample's response tokens under `model`, from the raw logits.

    Returns (logprobs, mask, entropy), [batch, max_response_len]; a row's response is right-aligned in them,
    padded positions have mask 0. Only response positions go through the output head and the softmax (with a
    49k vocabulary the logits of the prompt positions were most of the memory and a third of the time of a
    SmolLM2 step). `share_prompts`: samples with the same prompt (a GRPO group) run it through the model once
    (`_shared_prompt_logits`); the same logprobs to float rounding, about half the learner's time when the
    prompt is most of a sequence's tokens."""
    lengths = [len(s.response_ids) for s in samples]
    max_resp = max(lengths)
    shared = share_prompts and max_resp > 0 and len({tuple(s.prompt_ids) for s in samples}) < len(samples)
    logits, targets = (_shared_prompt_logits if shared else _whole_sequence_logits)(model, samples, pad_id, device)
    all_logp = F.log_softmax(logits.float(), dim=-1)
    token_logp = torch.gather(all_logp, 2, targets[:, :, None]).squeeze(-1)
    token_entropy = None
    if entropy:
        with torch.no_grad():
            token_entropy = -(all_logp.exp() * all_logp).sum(-1)
    shift = torch.tensor([max_resp - n for n in lengths], device=device)[:, None]
    columns = torch.arange(max_resp, device=device)[None]
    mask = (columns >= shift).float()
    if shared:  # its responses start at column 0: move each to the right end
        source = (columns - shift).clamp(min=0)
        token_logp = token_logp.gather(1, source)
        token_entropy = token_entropy.gather(1, source) if token_entropy is not None else None
    token_logp = token_logp * mask
    token_entropy = token_entropy * mask if token_entropy is not None else None
    return ResponseLogprobs(token_logp, mask, token_entropy)


def _left_padded(rows: list[list[int]], pad_id: int, device: torch.device):
    """Token ids, attention mask and position ids (from the mask, as `generate` uses) of left-padded rows."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, width - len(row):] = torch.tensor(row)
        attention[i, width - len(row):] = 1
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), attention.to(device), positions.to(device)


def _whole_sequence_logits(model: nn.Module, samples: list[Sample], pad_id: int, device: torch.device):
    """Each sample's prompt + response as one left-padded row: every response ends at the right edge, so the
    last `max_response + 1` positions (`logits_to_keep`) predict all response tokens, right-aligned."""
    ids, attention, positions = _left_padded([s.prompt_ids + s.response_ids for s in samples], pad_id, device)
    max_resp = max(len(s.response_ids) for s in samples)
    logits = model(input_ids=ids, attention_mask=attention, position_ids=positions,
                   logits_to_keep=max_resp + 1).logits[:, :-1]  # position p predicts token p + 1
    return logits, ids[:, ids.shape[1] - max_resp:]


def _shared_prompt_logits(model: nn.Module, samples: list[Sample], pad_id: int, device: torch.device):
    """Each distinct prompt runs once (left-padded, with its KV cache kept and its last position's logits);
    the cache is repeated for the samples that share it and their responses (right-padded, all but the last
    token) run on top of it. The gradient flows through the cache into the prompt's single pass, once per
    sample that used it, as in the whole-sequence pass. Returns logits and targets with each response
    starting at column 0."""
    prompts = list(dict.fromkeys(tuple(s.prompt_ids) for s in samples))
    index = {p: k for k, p in enumerate(prompts)}
    rows = torch.tensor([index[tuple(s.prompt_ids)] for s in samples], device=device)
    ids, attention, positions = _left_padded([list(p) for p in prompts], pad_id, device)
    out = model(input_ids=ids, attention_mask=attention, position_ids=positions, use_cache=True, logits_to_keep=1)
    logits = out.logits[rows]  # [batch, 1, vocab]: each response's first token
    max_resp = max(len(s.response_ids) for s in samples)
    targets = torch.full((len(samples), max_resp), pad_id, dtype=torch.long)
    response_mask = torch.zeros((len(samples), max_resp), dtype=torch.long)
    for i, s in enumerate(samples):
        targets[i, : len(s.response_ids)] = torch.tensor(s.response_ids)
        response_mask[i, : len(s.response_ids)] = 1
    targets, response_mask = targets.to(device), response_mask.to(device)
    if max_resp > 1:
        cache = out.cache
        cache.batch_select_indices(rows)
        start = attention.sum(-1)[rows][:, None]  # each response's first position: its prompt's length
        rest = model(input_ids=targets[:, :-1], attention_mask=torch.cat([attention[rows], response_mask[:, :-1]], 1),
                     position_ids=start + torch.arange(max_resp - 1, device=device)[None], cache=cache,
                     use_cache=True).logits
        logits = torch.cat([logits, rest], dim=1)
    return logits, targets


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
        order = list(range(len(samples)))
        if cfg.share_prompts:  # a group's samples in one micro-batch, where they share its prompt's pass
            first_seen: dict[tuple[int, ...], int] = {}
            for i, s in enumerate(samples):
                first_seen.setdefault(tuple(s.prompt_ids), i)
            order.sort(key=lambda i: first_seen[tuple(samples[i].prompt_ids)])
        chunks = [order[i: i + cfg.micro_batch_size] for i in range(0, len(order), cfg.micro_batch_size)]
        own = len(chunks)
        chunks += [chunks[0]] * (micro_batches - own)
        for k, idx in enumerate(chunks):
            batch = [samples[i] for i in idx]
            with contextlib.nullcontext() if k == len(chunks) - 1 else _accumulating(self.model):
                with autocast:
                    new_logp, mask, entropy = response_logprobs(self.model, batch, self.pad_token_id, self.device,
                                                                entropy=True, share_prompts=cfg.share_prompts)
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
                return response_logprobs(self.model, batch, self.pad_token_id, self.device,
                                         share_prompts=self.config.share_prompts).logprobs
        if self.ref_model is not None:
            return response_logprobs(self.ref_model, batch, self.pad_token_id, self.device,
                                     share_prompts=self.config.share_prompts).logprobs
        return None

    @staticmethod
    def _behaviour_logprobs(batch: list[Sample], new_logp: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The serving policy's logprobs where they came with the rollout, and a mask of those tokens; elsewhere
        the current policy's (ratio 1, which is exact for the first update after a weight sync)."""
        old = new_logp.detach().clone()
        scored = torch.zeros_like(old)
        width = old.shape[1]  # responses are right-aligned (response_logprobs)
        for i, s in enumerate(batch):
            n = len(s.response_ids)
            if s.behaviour_logprobs is not None and len(s.behaviour_logprobs) == n:
                old[i, width - n:] = torch.tensor(s.behaviour_logprobs, device=old.device)
                scored[i, width - n:] = 1
        return old, scored
