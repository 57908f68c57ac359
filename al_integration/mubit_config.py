"""Typed settings for the Mubit credit loop, loaded from `configs/mubit.yaml`."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from al_integration.mubit_local.ranking import RankingWeights
from common.config_files import load_yaml_model

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = REPO_ROOT / "configs" / "mubit.yaml"


class RankingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lexical: float = Field(0.6, ge=0)
    credit: float = Field(0.4, ge=0)
    verified_boost: float = Field(0.05, ge=0)
    prior_alpha: float = Field(1.0, gt=0)
    prior_beta: float = Field(1.0, gt=0)
    sample_credit: bool = False

    def weights(self) -> RankingWeights:
        return RankingWeights(**self.model_dump())


class MubitConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    endpoint: str | None = None
    db_file: str = "mubit.sqlite3"
    session_id: str = Field("feedback-agent", min_length=1)
    agent_id: str = Field("feedback-agent", min_length=1)
    recall_limit: int = Field(3, ge=0, le=100)
    query_fields: list[str] = Field(default_factory=lambda: ["category", "topic"])
    seed_lessons: Path | None = Path("data/lessons.jsonl")
    verified_in_production: bool = False
    timeout_ms: int = Field(5000, ge=100)
    ranking: RankingConfig = Field(default_factory=RankingConfig)


class ConfigError(ValueError):
    """A config file that cannot be used; the message is one line naming the file and field."""


def load_mubit_config(path: str | Path = DEFAULT_CONFIG) -> MubitConfig:
    config = load_yaml_model(path, MubitConfig, ConfigError)
    if config.seed_lessons is not None and not config.seed_lessons.is_absolute():
        # Relative to the repository, whatever the working directory.
        config = config.model_copy(update={"seed_lessons": REPO_ROOT / config.seed_lessons})
    return config
