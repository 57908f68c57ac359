"""The run configuration of `oneclick` and `eval`, loaded from `configs/oneclick.yaml`."""

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from common.config_files import load_yaml_model
from policy.loading import PolicyName
from policy.lora import LoraSettings

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RUN_CONFIG = REPO_ROOT / "configs" / "oneclick.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PolicySection(_Strict):
    """Which weights a run starts from: a built-in policy (`name`) or any local HF causal LM / LoRA adapter
    directory (`model`, which wins). policy/loading.py resolves them."""

    name: PolicyName = "smollm2"  # smollm2: the pretrained chat model (default); tiny: the scratch GPT-2
    model: Path | None = None
    tiny_config: Path = Path("configs/policy_tiny.yaml")
    smollm2_config: Path = Path("configs/policy_smollm2.yaml")


class DataSection(_Strict):
    train: str = "train"
    val: str = "val"
    val_limit: int | None = Field(None, ge=1)


class RolloutSection(_Strict):
    n_runners: int = Field(32, ge=1, le=64)
    group_size: int = Field(4, ge=2)
    tasks_per_step: int = Field(8, ge=1)
    timeout_seconds: float = Field(300, gt=0)
    max_attempts: int = Field(2, ge=1)


class SamplingSection(_Strict):
    temperature: float = Field(0.8, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    max_tokens: int = Field(160, ge=1)


class GRPOSection(_Strict):
    lr: float = Field(5e-5, gt=0)
    kl_coef: float = Field(0.02, ge=0)
    clip_eps: float = Field(0.2, gt=0)
    max_grad_norm: float = Field(1.0, gt=0)
    micro_batch_size: int = Field(8, ge=1)


class MubitSection(_Strict):
    config: Path = Path("configs/mubit.yaml")
    credit_modes: list[str] = ["train"]


class DistributedSection(_Strict):
    """`--mode distributed` only (training/distributed.py)."""

    timeout_minutes: float = Field(60, gt=0)
    policy_host: str = "127.0.0.1"


class SmokeSection(_Strict):
    policy: PolicyName = "tiny"
    steps: int = 2
    val_every: int = 2
    checkpoint_every: int = 1
    tasks_per_step: int = 2
    group_size: int = 2
    n_runners: int = 2
    val_limit: int = 4
    max_tokens: int = 48


class RunConfig(_Strict):
    seed: int = 7
    policy: PolicySection = PolicySection()
    data: DataSection = DataSection()
    rollouts: RolloutSection = RolloutSection()
    sampling: SamplingSection = SamplingSection()
    val_seed: int = 1234
    grpo: GRPOSection = GRPOSection()
    lora: LoraSettings = LoraSettings()
    steps: int = Field(30, ge=0)
    val_every: int = Field(10, ge=1)
    checkpoint_every: int = Field(10, ge=1)
    mubit: MubitSection = MubitSection()
    distributed: DistributedSection = DistributedSection()
    smoke: SmokeSection = SmokeSection()

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
    """A run config that cannot be used; one line naming the file and the field."""


def load_run_config(path: Path | None = None) -> RunConfig:
    return load_yaml_model(path if path is not None else DEFAULT_RUN_CONFIG, RunConfig, RunConfigError)
