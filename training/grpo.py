"""GRPO: group-normalised advantages, the clipped policy-gradient loss, and the learner that applies them.

One update from a batch of finished rollouts:

    A_i      = (r_i - mean(r_group)) / (std(r_group) + eps)              per GRPO group (same task)
    ratio_t  = exp(logp_new(t) - logp_behaviour(t))                      on the sampled response tokens
    L_pg     = -min(ratio_t * A_i, clip(ratio_t, 1 - eps_clip, 1 + eps_clip) * A_i)
    L_kl     = exp(logp_ref - logp_new) - (logp_ref - logp_new) - 1      (k3 estimator, to the warm start)
    loss     = mean_i [ mean_t (L_pg + beta * L_kl) ]

The learner is plain torch on one `nn.Module`, so DistributedDataParallel or FSDP can wrap the model
without changes here (training/distributed.py): gradients are accumulated over micro-batches (with DDP's
`no_sync` on all but the last), advantages can be given for the whole batch when this process holds only a
shard of it, and `loss_scale` makes the wrapper's gradient average equal the single-process gradient.
"""

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class GRPOConfig:
    lr: float = 5e-5
    weight_decay: float = 0.0
    clip_eps: float = 0.2
    kl_coef: float = 0.02
    max_grad_norm: float = 1.0
    # Logprobs are computed on logits / temperature; it must match how the behaviour logprobs were computed
    # (1.0 for our policy server, which reports raw logprobs like vLLM), not the sampling temperature.
    temperature: float = 1.0
    micro_batch_size: int = 8
    adv_eps: float = 1e-6


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


def response_logprobs(model: nn.Module, samples: list[Sample], temperature: float, pad_id: int,
                      device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-probabilities of each sample's response tokens under `model`.

    Returns (logprobs, mask), both [batch, max_response_len]; padded positions have mask 0.
    """
    seqs = [s.prompt_ids + s.response_ids for s in samples]
    width = max(len(s) for s in seqs)
    input_ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, seq in enumerate(seqs):  # right padding: positions stay 0..n-1 for every row
        input_ids[i, : len(seq)] = torch.tensor(seq)
        attention[i, : len(seq)] = 1
    input_ids, attention = input_ids.to(device), attention.to(device)
    logits = model(input_ids=input_ids, attention_mask=attention).logits[:, :-1].float() / temperature
    token_logp = torch.gather(F.log_softmax(logits, dim=-1), 2, input_ids[:, 1:, None]).squeeze(-1)

    max_resp = max(len(s.response_ids) for s in samples)
    out = torch.zeros((len(samples), max_resp), device=device)
    mask = torch.zeros((len(samples), max_resp), device=device)
    for i, s in enumerate(samples):
        start = len(s.prompt_ids) - 1  # logits at position p predict token p + 1
        n = len(s.response_ids)
        out[i, :n] = token_logp[i, start : start + n]
        mask[i, :n] = 1
    return out, mask


def grpo_loss(new_logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None, advantages: torch.Tensor,
              mask: torch.Tensor, clip_eps: float, kl_coef: float) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Sum over the batch of per-sequence mean token losses (the caller divides by the global batch size)."""
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
    loss = ((per_token * mask).sum(dim=1) / lengths).sum()
    clipped = ((ratio - 1).abs() > clip_eps).float()
    stats = {
        "kl": ((kl * mask).sum(dim=1) / lengths).sum().detach(),
        "clip_frac": ((clipped * mask).sum(dim=1) / lengths).sum().detach(),
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
                 reference_mode: Callable[[], contextlib.AbstractContextManager] | None = None):
        """`ref_model`: the KL reference as a separate model (full fine-tuning); or `reference_mode`: a context
        in which `model` itself computes the reference (LoRA: the base with its adapters disabled)."""
        self.model = model  # may be wrapped in DistributedDataParallel or sharded by FSDP
        self.ref_model = ref_model
        self.reference_mode = reference_mode
        self.config = config
        self.pad_token_id = pad_token_id
        self.device = torch.device(device)
        self.autocast_dtype = autocast_dtype  # bf16 on GPUs that support it; logprobs are still taken in fp32
        trainable = [p for p in model.parameters() if p.requires_grad]  # the adapters alone under LoRA
        self.optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=config.weight_decay)
        if ref_model is not None:
            ref_model.requires_grad_(False).eval()

    def step(self, samples: list[Sample], advantages: torch.Tensor | None = None, loss_scale: float | None = None,
             micro_batches: int = 0) -> dict[str, float]:
        """One optimizer step on `samples`. Returns the logged metrics (means over `samples`).

        Alone, `samples` is the whole batch. Under DDP / FSDP it is this rank's shard (training/distributed.py
        `shard`): `advantages` then come from the whole batch (a group may span ranks), `loss_scale` is
        world_size / global batch size (the wrapper averages gradients over ranks), and `micro_batches` is the
        count every rank runs, since FSDP gathers parameters in each forward: passes past this rank's own
        repeat its first micro-batch with weight 0. A rank with no sample passes one with `loss_scale` 0: its
        passes still join the collectives and add nothing.
        """
        cfg = self.config
        if advantages is None:
            advantages = group_advantages([s.reward for s in samples], [s.group_id for s in samples], cfg.adv_eps)
        scale = 1.0 / max(len(samples), 1) if loss_scale is None else loss_scale
        autocast = torch.autocast(self.device.type, dtype=self.autocast_dtype or torch.bfloat16,
                                  enabled=self.autocast_dtype is not None)
        # Dropout off: the ratio must compare the same function that produced the behaviour logprobs.
        self.model.eval()
        self.optimizer.zero_grad(set_to_none=True)
        sums = {"loss": 0.0, "kl": 0.0, "clip_frac": 0.0}
        tokens = 0
        chunks = [list(range(i, min(i + cfg.micro_batch_size, len(samples))))
                  for i in range(0, len(samples), cfg.micro_batch_size)]
        own = len(chunks)
        chunks += [chunks[0]] * (micro_batches - own)
        for k, idx in enumerate(chunks):
            batch = [samples[i] for i in idx]
            with contextlib.nullcontext() if k == len(chunks) - 1 else _accumulating(self.model):
                with autocast:
                    new_logp, mask = response_logprobs(self.model, batch, cfg.temperature, self.pad_token_id,
                                                       self.device)
                    ref_logp = self._reference_logprobs(batch) if cfg.kl_coef > 0 else None
                old_logp = self._behaviour_logprobs(batch, new_logp)
                loss, stats = grpo_loss(new_logp, old_logp, ref_logp, advantages[idx].to(self.device), mask,
                                        cfg.clip_eps, cfg.kl_coef)
                (loss * (scale if k < own else 0.0)).backward()
            if k >= own:
                continue
            sums["loss"] += loss.item()
            sums["kl"] += stats["kl"].item()
            sums["clip_frac"] += stats["clip_frac"].item()
            tokens += int(mask.sum().item())
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
        self.optimizer.step()
        n = max(len(samples), 1)
        return {
            "loss": sums["loss"] / n,
            "kl": sums["kl"] / n,
            "clip_frac": sums["clip_frac"] / n,
            "grad_norm": float(grad_norm) if math.isfinite(float(grad_norm)) else float("nan"),
            "adv_abs_mean": float(advantages.abs().mean()) if len(samples) else 0.0,
            "response_tokens": tokens,
        }

    @torch.no_grad()
    def _reference_logprobs(self, batch: list[Sample]) -> torch.Tensor | None:
        if self.reference_mode is not None:
            with self.reference_mode():
                return response_logprobs(self.model, batch, self.config.temperature, self.pad_token_id,
                                         self.device)[0]
        if self.ref_model is not None:
            return response_logprobs(self.ref_model, batch, self.config.temperature, self.pad_token_id,
                                     self.device)[0]
        return None

    @staticmethod
    def _behaviour_logprobs(batch: list[Sample], new_logp: torch.Tensor) -> torch.Tensor:
        """The serving policy's logprobs where they came with the rollout; else the current policy's (ratio 1,
        which is exact for the first update after a weight sync)."""
        old = new_logp.detach().clone()
        for i, s in enumerate(batch):
            if s.behaviour_logprobs is not None and len(s.behaviour_logprobs) == len(s.response_ids):
                old[i, : len(s.response_ids)] = torch.tensor(s.behaviour_logprobs, device=old.device)
        return old
