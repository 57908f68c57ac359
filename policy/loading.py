"""Loading a policy: the one loader that training, eval and the policy server share.

A policy directory is either a plain local Hugging Face causal LM (the converted SmolLM2, the tiny scratch
build, a user's Qwen or Llama instruct model, a checkpoint's merged `model/`) or a peft LoRA adapter
directory (`adapter_config.json`) whose `base_model_name_or_path` names a local base directory.
`resolve_policy_dir` turns the run config's choice (`smollm2`, `tiny` or a directory) into a directory,
building the built-in ones once (the tiny build; SmolLM2's conversion and warm start).
"""

import json
from pathlib import Path
from typing import Literal

import torch
from torch import nn

PolicyName = Literal["smollm2", "tiny"]


class PolicyLoadError(ValueError):
    """A model directory or weights file that cannot be used; the message names it and says why."""


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def is_adapter_dir(path: Path) -> bool:
    return (path / "adapter_config.json").is_file()


def adapter_base(path: Path) -> Path:
    """The base model directory a LoRA adapter directory was trained on."""
    try:
        base = json.loads((path / "adapter_config.json").read_text())["base_model_name_or_path"]
    except (OSError, ValueError, KeyError) as e:
        raise PolicyLoadError(f"{path}/adapter_config.json: unreadable ({_first_line(e)})") from None
    if not base or not (Path(base) / "config.json").is_file():
        raise PolicyLoadError(f"{path}: its base model {base!r} is not a local Hugging Face model directory")
    return Path(base)


WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


def check_policy_dir(path: Path) -> None:
    """A one-line error for a path that is not a model or adapter directory (before anything slow starts)."""
    if is_adapter_dir(path):
        adapter_base(path)
    elif not (path / "config.json").is_file():
        raise PolicyLoadError(f"{path}: not a local Hugging Face model directory (no config.json)")
    elif not any((path / name).is_file() for name in WEIGHT_FILES):
        raise PolicyLoadError(f"{path}: a Hugging Face model directory without weights (no model.safetensors or "
                              "pytorch_model.bin)")
    elif not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise PolicyLoadError(f"{path}: a Hugging Face model directory without a tokenizer (no tokenizer.json or "
                              "tokenizer_config.json)")


def load_tokenizer(path: Path):
    from transformers import AutoTokenizer

    source = path if (path / "tokenizer_config.json").is_file() or not is_adapter_dir(path) else adapter_base(path)
    try:
        return AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError, KeyError) as e:
        raise PolicyLoadError(f"{source}: cannot load the tokenizer: {_first_line(e)}") from None


def load_model(path: Path, *, dtype: torch.dtype = torch.float32, trainable: bool = False) -> nn.Module:
    """The causal LM of `path`; an adapter directory comes back as a peft model over its base (its adapter
    trainable when `trainable`)."""
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars on every load
    check_policy_dir(path)
    base = adapter_base(path) if is_adapter_dir(path) else path
    try:
        model = AutoModelForCausalLM.from_pretrained(base, dtype=dtype)
        if is_adapter_dir(path):
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, path, is_trainable=trainable)
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        raise PolicyLoadError(f"{path}: cannot load the model: {_first_line(e)}") from None
    return model


def resolve_policy_dir(name: PolicyName, model: Path | None, *, tiny_config: Path, smollm2_config: Path) -> Path:
    """The directory a run starts from: `model` when given, else the built-in policy `name`, built (tiny) or
    converted from its pinned wheel and warm-started (smollm2) on first use and cached."""
    if model is not None:
        check_policy_dir(model)
        return model
    if name == "tiny":
        from policy.tiny import ensure_default_policy

        return ensure_default_policy(tiny_config)
    from policy.pretrained import ensure_warm_started_policy

    return ensure_warm_started_policy(smollm2_config)
