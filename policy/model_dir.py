"""What makes a directory a local Hugging Face causal LM, checked before anything slow is imported or loaded."""

from pathlib import Path

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


class ModelDirError(ValueError):
    """A `--model` directory that cannot be loaded; one line naming the path and what is missing."""


def check_model_dir(path: Path) -> None:
    if not (path / "config.json").is_file():
        raise ModelDirError(f"{path}: not a local Hugging Face model directory (no config.json)")
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        raise ModelDirError(f"{path}: a Hugging Face model directory without weights (no model.safetensors or "
                            "pytorch_model.bin)")
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise ModelDirError(f"{path}: a Hugging Face model directory without a tokenizer (no tokenizer.json or "
                            "tokenizer_config.json)")
