"""LoRA adapters on the policy with `peft`: the learner trains them, the policy server receives only them.

With LoRA on, the KL reference is the base model itself with the adapters disabled (`disable_adapter()`),
so no second copy of the model is held; after each update the server replica gets the adapter tensors
(a few MB) and keeps its own copy of the frozen base. A checkpoint holds the adapter in peft's format and
a merged plain Hugging Face directory (`merged_copy`) that plain transformers and vLLM load.
"""

import contextlib
import copy
import warnings
from pathlib import Path
from typing import Literal

import torch
from peft import LoraConfig, PeftModel, get_peft_model, set_peft_model_state_dict
from pydantic import BaseModel, ConfigDict, Field
from safetensors.torch import load_file
from torch import nn

ADAPTER_FILE = "adapter_model.safetensors"

# peft 0.21.2 calls a transformers 5 method that warns of its own rename on every `get_peft_model`.
warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)


class LoraSettings(BaseModel):
    """The `lora:` section of the run config (its values: configs/oneclick.yaml)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool
    r: int = Field(ge=1)
    alpha: float = Field(gt=0)
    dropout: float = Field(ge=0, lt=1)  # 0: the ratio must compare the function that sampled
    # "all-linear": every linear layer of the blocks (q/k/v/o/gate/up/down on Llama, c_attn/c_proj/c_fc on
    # GPT-2), never the output head; or a list of module names.
    target_modules: Literal["all-linear"] | list[str]


def lora_config(model: nn.Module, settings: LoraSettings) -> LoraConfig:
    """peft's config for `settings` on `model` (also what bench/bench_vs_trl.py gives TRL)."""
    from transformers.pytorch_utils import Conv1D

    return LoraConfig(r=settings.r, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                      target_modules=settings.target_modules, bias="none", task_type="CAUSAL_LM",
                      fan_in_fan_out=any(isinstance(m, Conv1D) for m in model.modules()))  # GPT-2's layers


def add_lora(model: nn.Module, settings: LoraSettings) -> PeftModel:
    """Freeze `model` and wrap it with fresh adapters (B = 0: the wrapped model computes exactly the base)."""
    return get_peft_model(model, lora_config(model, settings))


def is_lora(model: nn.Module) -> bool:
    return isinstance(unwrap(model), PeftModel)


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside DistributedDataParallel (`.module`); FSDP2 shards the model in place."""
    return getattr(model, "module", model)


def reference_mode(model: nn.Module) -> contextlib.AbstractContextManager:
    """Inside it `model` computes the base model: the KL reference of LoRA training."""
    return unwrap(model).disable_adapter()


def trainable_state(state: dict[str, torch.Tensor], model: nn.Module) -> dict[str, torch.Tensor]:
    """The entries of a (full, unwrapped) state dict that training changes: the adapters under LoRA, all
    otherwise. What the policy server needs after an update."""
    names = {name for name, p in unwrap(model).named_parameters() if p.requires_grad}
    return {name: tensor for name, tensor in state.items() if name in names}


def load_adapter(model: PeftModel, adapter_dir: Path) -> None:
    """Load a saved adapter (peft's `save_pretrained` format) into `model`'s own adapter, in place."""
    result = set_peft_model_state_dict(model, load_file(adapter_dir / ADAPTER_FILE))
    unexpected = getattr(result, "unexpected_keys", None)
    if unexpected:
        raise ValueError(f"{adapter_dir}: adapter does not fit the model ({unexpected[0]} ...)")


def _foldable(model: nn.Module) -> bool:
    # Half precision is left unfolded: folding and unfolding there would round the base weights each time.
    return is_lora(model) and next(model.parameters()).dtype == torch.float32


def fold_adapters(model: nn.Module) -> None:
    """For serving: fold a float32 LoRA model's adapters into its base weights, in place, so a decode step runs
    the base's matmuls only (the unfolded adapter path doubles the small ops of a decode step: the engine's
    tokens/s went from 0.70x plain HF `generate` to ~parity). A no-op for other models or if already folded."""
    if _foldable(model) and not any(getattr(layer, "merged", False) for layer in model.modules()):
        unwrap(model).merge_adapter()


@contextlib.contextmanager
def adapters_unfolded(model: nn.Module):
    """Inside it a folded model has its adapters apart again (load new adapter weights here); folded after."""
    if _foldable(model) and any(getattr(layer, "merged", False) for layer in model.modules()):
        unwrap(model).unmerge_adapter()
    try:
        yield
    finally:
        fold_adapters(model)


@torch.no_grad()
def merged_copy(model: PeftModel) -> nn.Module:
    """A plain model (the base's architecture) with the adapters folded into its weights, on the CPU; `model`
    is left as it is. Called on the policy server's replica, which is never wrapped or sharded."""
    return copy.deepcopy(model).to("cpu").merge_and_unload()
