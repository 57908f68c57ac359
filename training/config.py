"""The run configuration of `oneclick` and `eval`: one typed model, its values in `configs/oneclick.yaml`.

Every setting is a field here (types and bounds) and has its value in `configs/oneclick.yaml`, the one place
defaults live. A run resolves, in order: that file, a `--config FILE` laid over it (whole or partial),
the `smoke` sizes with `--smoke`, then dotted `KEY=VALUE` overrides from the command line
(common/overrides.py). The result is written to `<run>/config.yaml`, which `--resume` reads back.
"""

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from common.config_files import read_yaml, validate_model
from common.files import write_text_atomic
from common.overrides import apply_overrides, deep_merge
from policy.loading import PolicyName
from policy.lora import LoraSettings

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RUN_CONFIG = REPO_ROOT / "configs" / "oneclick.yaml"
RESOLVED_CONFIG = "config.yaml"  # in the run directory


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PolicySection(_Strict):
    """Which weights a run starts from: a built-in policy (`name`) or any local HF causal LM / LoRA adapter
    directory (`model`, which wins). policy/loading.py resolves them."""

    name: PolicyName  # smollm2: the pretrained chat model (default); tiny: the scratch GPT-2
    model: Path | None
    tiny_config: Path
    smollm2_config: Path


class DataSection(_Strict):
    train: str
    val: str
    val_limit: int | None = Field(ge=1)


class StageConfig(_Strict):
    """The YAML of a stage that runs inside the agent (in the runner processes)."""

    config: Path


class RolloutSection(_Strict):
    n_runners: int = Field(ge=1, le=64)
    group_size: int = Field(ge=2)
    tasks_per_step: int = Field(ge=1)
    timeout_seconds: float = Field(gt=0)
    max_attempts: int = Field(ge=1)


class SamplingSection(_Strict):
    temperature: float = Field(gt=0)
    top_p: float = Field(gt=0, le=1)
    max_tokens: int = Field(ge=1)


class GRPOConfig(_Strict):
    """The learner's settings (training/grpo.py)."""

    loss_type: Literal["grpo", "dapo", "dr_grpo"]
    lr: float = Field(gt=0)
    weight_decay: float = Field(ge=0)
    kl_coef: float = Field(ge=0)
    clip_eps: float = Field(gt=0)
    max_grad_norm: float = Field(gt=0)
    micro_batch_size: int = Field(ge=1)
    adv_eps: float = Field(gt=0)
    share_prompts: bool


class MubitSection(_Strict):
    config: Path
    credit_modes: list[str]


Tracker = Literal["tensorboard", "wandb", "mlflow"]


class TrackingSection(_Strict):
    """Where metrics go besides metrics.jsonl (training/tracking.py)."""

    report_to: list[Tracker]
    project: str
    run_name: str | None
    wandb_mode: Literal["offline", "online"]
    mlflow_tracking_uri: str | None

    @field_validator("report_to", mode="before")
    @classmethod
    def _none_or_one(cls, value: Any) -> Any:
        """TRL's spellings: `none` for no tracker, one name for one."""
        if value is None or value == "none":
            return []
        return [value] if isinstance(value, str) else value


class DistributedSection(_Strict):
    """`--mode distributed` only (training/distributed.py)."""

    timeout_minutes: float = Field(gt=0)
    policy_host: str


class SmokeSection(_Strict):
    policy: PolicyName
    steps: int = Field(ge=0)
    val_every: int = Field(ge=1)
    checkpoint_every: int = Field(ge=1)
    tasks_per_step: int = Field(ge=1)
    group_size: int = Field(ge=2)
    n_runners: int = Field(ge=1)
    val_limit: int = Field(ge=1)
    max_tokens: int = Field(ge=1)


class RunConfig(_Strict):
    seed: int
    policy: PolicySection
    data: DataSection
    reward: StageConfig
    governance: StageConfig
    rollouts: RolloutSection
    sampling: SamplingSection
    val_seed: int
    grpo: GRPOConfig
    lora: LoraSettings
    steps: int = Field(ge=0)
    val_every: int = Field(ge=1)
    checkpoint_every: int = Field(ge=1)
    mubit: MubitSection
    tracking: TrackingSection
    distributed: DistributedSection
    smoke: SmokeSection

    def with_smoke(self) -> "RunConfig":
        """The minimal run CI uses: the `smoke` section's sizes over everything else."""
        s = self.smoke
        return self.model_copy(deep=True, update={
            "steps": s.steps, "val_every": s.val_every, "checkpoint_every": s.checkpoint_every,
            "rollouts": self.rollouts.model_copy(update={"tasks_per_step": s.tasks_per_step,
                                                         "group_size": s.group_size, "n_runners": s.n_runners}),
            "data": self.data.model_copy(update={"val_limit": s.val_limit}),
            "sampling": self.sampling.model_copy(update={"max_tokens": s.max_tokens}),
            "policy": self.policy.model_copy(update={"name": s.policy}),
        })

    def resolve(self, path: Path) -> Path:
        """Config paths are relative to the repository, whatever the working directory."""
        return path if path.is_absolute() else REPO_ROOT / path


class RunConfigError(ValueError):
    """A run config that cannot be used; one line naming the file or the override, and the field."""


def _mapping(path: Path) -> dict[str, Any]:
    raw = read_yaml(path, RunConfigError)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise RunConfigError(f"{path}: expected a mapping of settings, got {type(raw).__name__}")
    return raw


def read_run_config(path: Path | None = None, saved: dict[str, Any] | None = None,
                    saved_from: str = "the run's saved config") -> tuple[dict[str, Any], str]:
    """The settings before validation, and where they came from (for error messages): configs/oneclick.yaml
    with `saved` (a run's own resolved config) or the file `path` laid over it. Laying them over the defaults
    lets a partial file work and a run saved before a setting existed resume with its default."""
    data = _mapping(DEFAULT_RUN_CONFIG)
    if saved is not None:
        return deep_merge(data, saved), saved_from
    if path is None:
        return data, str(DEFAULT_RUN_CONFIG)
    return deep_merge(data, _mapping(path)), str(path)


def resolve_run_config(data: dict[str, Any], where: str, *, smoke: bool = False,
                       overrides: list[str] | None = None) -> RunConfig:
    """Validate, then the smoke sizes, then the command line's `KEY=VALUE` overrides."""
    cfg = validate_model(data, RunConfig, RunConfigError, where)
    if smoke:
        cfg = cfg.with_smoke()
    if overrides:
        cfg = apply_overrides(cfg.model_dump(), RunConfig, overrides, RunConfigError)
    return cfg


def load_run_config(path: Path | None = None, overrides: list[str] | None = None) -> RunConfig:
    return resolve_run_config(*read_run_config(path), overrides=overrides)


def saved_run_config(run_dir: Path) -> dict[str, Any] | None:
    """`<run>/config.yaml` as written at the run's start, if it is there."""
    path = run_dir / RESOLVED_CONFIG
    return _mapping(path) if path.is_file() else None


def write_resolved_config(cfg: RunConfig, run_dir: Path) -> Path:
    path = run_dir / RESOLVED_CONFIG
    text = yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)
    write_text_atomic(path, "# The resolved config of this run (defaults, --config, --smoke and overrides); "
                            "--resume reads it.\n" + text)
    return path
