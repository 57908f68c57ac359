"""The reward's typed configuration, loaded from `configs/reward.yaml`."""

import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from common.config_files import load_yaml_model

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parent.parent / "configs" / "reward.yaml"
COMPONENTS = ("length", "tone", "integrity", "overselling", "acknowledgment")  # weighted into the total
GATES = ("privacy", "coherence", "role")  # not weighted: each can only force the total down


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as e:
        raise ValueError(f"not a regular expression ({e})") from None
    return pattern


# A pattern the scorer compiles: a bad one fails when the file is loaded, in one line naming the field, not as a
# traceback from the scorer (in `python -m rewards` or, later, in a training run's runner processes).
Regex = Annotated[str, AfterValidator(_compiles)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LengthConfig(_Strict):
    best_min_words: int = Field(gt=0)
    best_max_words: int = Field(gt=0)
    short_width: float = Field(gt=0)
    long_width: float = Field(gt=0)
    repeat_ngram: int = Field(ge=2)


class ToneConfig(_Strict):
    empathy_markers: list[str]
    appreciation_markers: list[str]
    cheer_markers: list[str]
    praise_thanks: list[str]
    praise_words: list[str]
    cheerful_pos_share: float = Field(ge=0, le=1)
    warm_pos_share: float = Field(ge=0, le=1)
    neutral_max_share: float = Field(ge=0, le=1)
    max_cheer_markers: int = Field(ge=0)


class IntegrityConfig(_Strict):
    markers: list[str]
    on_receipt_admissions: list[str]
    evasive_phrases: list[str]
    evasive_pattern: Regex
    framed_nouns: list[str]
    framing_verbs: list[str]
    framing_agents: list[str]
    saturate_at: int = Field(ge=1)
    score_none: float = Field(ge=-1, le=1)
    score_boilerplate: float = Field(ge=-1, le=1)
    max_hits_per_100_words: float = Field(gt=0)
    stuffing_min_hits: int = Field(ge=1)
    stuffing_penalty: float = Field(ge=0)


class OversellingConfig(_Strict):
    hype_terms: list[str]
    ordinary_absolutes: list[str]
    verification_claims: list[str]
    completed_checks: list[str]
    settled_verdicts: list[str]
    settled_colon: Regex = r"(?!)"
    reported_wording: Regex = r"(?!)"
    assurance_that: Regex = r"(?!)"
    dismissals: list[str]
    blame_shifts: list[str]
    blame_shift_hits: int = Field(ge=1)
    penalty_per_hit: float = Field(ge=0)
    done_work_verbs: list[str]
    done_states: list[str]
    scheduled_times: Regex
    cause_marks: list[str]
    changed_now: list[str]
    recent_times: Regex
    recent_past: Regex
    recent_today: Regex = r"(?!)"
    check_nouns: list[str]
    finding_verbs: list[str]
    team_people: list[str]
    confirmation_verbs: list[str]
    done_work_penalty: float = Field(ge=0)
    caps_total: bool
    uncited_stat_penalty: float = Field(ge=0)
    claim_words: list[str]
    reference_numbers: Regex
    in_transit: Regex = r"(?!)"
    in_transit_conditions: Regex = r"(?!)"
    claim_window_chars: int = Field(ge=0)
    citation_markers: list[str]
    citation_window_chars: int = Field(ge=0)


class AcknowledgmentConfig(_Strict):
    min_word_chars: int = Field(ge=1)
    stem_chars: int = Field(ge=3)
    full_credit_coverage: float = Field(gt=0, le=1)
    full_credit_terms: int = Field(ge=1)
    max_key_terms: int = Field(ge=1)
    repeated_min: int = Field(default=2, ge=2)
    echo_ngram: int = Field(ge=2)
    echo_threshold: float = Field(gt=0, le=1)
    min_own_share: float = Field(ge=0, le=1)
    restatement_min_own_share: float = Field(ge=0, le=1)
    agreement: Regex
    no_reply_cap: float = Field(ge=-1, le=1)
    non_actions: list[str]
    commitment_times: Regex
    generic_terms: list[str]
    stopwords: list[str]


class PrivacyConfig(_Strict):
    email: Regex
    phone: Regex
    phone_min_digits: int = Field(ge=1)
    card: Regex
    us_ssn: Regex
    iban: Regex
    ip_address: Regex


class CoherenceConfig(_Strict):
    spacy_model: str
    max_words_parsed: int = Field(ge=20)
    min_words: int = Field(ge=1)
    min_function_word_share: float = Field(ge=0, le=1)
    max_odd_word_share: float = Field(ge=0, le=1)
    heap_run: int = Field(ge=2)
    max_heap_share: float = Field(ge=0, le=1)
    max_fragment_share: float = Field(ge=0, le=1)
    max_label_fragments: int = Field(ge=0)
    opening_words: int = Field(ge=1)
    max_repeated_openings: int = Field(ge=0)
    loop_ngram: int = Field(ge=2)
    max_looped_share: float = Field(ge=0, le=1)
    max_anomalies: int = Field(ge=0)
    max_anomaly_share: float = Field(ge=0, le=1)
    sentient_verbs: list[str]
    agent_nouns: list[str]
    stitched_own_share: float = Field(ge=0, le=1)
    stitched_break_ratio: float = Field(ge=0)
    cap: float = Field(ge=-1, le=1)
    function_words: list[str]


class RoleConfig(_Strict):
    cap: float = Field(ge=-1, le=1)
    template_placeholder: Regex
    link: Regex
    assistant_phrases: list[str]
    header_lines: Regex
    team_voice: list[str]
    second_person: list[str]
    greetings: list[str]
    opening_words: int = Field(ge=1)
    sender_phrases: list[str]
    salutation_words: list[str]
    named_person: Regex
    not_person_names: list[str]
    work_nouns: list[str]
    own_work: Regex
    sign_offs: list[str]
    sign_off_nouns: list[str] = []
    sign_off_qualifiers: list[str] = []
    sign_off_rest: Regex = r"[ \t]*[,:—–-]?[ \t]*"
    sender_copy_share: float = Field(gt=0, le=1)
    team_singular: Regex = r"(?!)"
    open_end: Regex
    signature_words: int = Field(ge=1)
    signature_line: Regex = r"(?!)"
    signature_block_lines: int = Field(default=2, ge=2, le=3)
    signature_not_name: list[str] = []
    signature_not_role: list[str] = []
    compound_min_chars: int = Field(default=7, ge=1)
    compound_part_min_chars: int = Field(default=5, ge=1)
    named_placeholders: list[str]
    unknown_named_penalty: float = Field(ge=0, le=1)
    signature_named_penalty: float = Field(ge=0, le=1)
    group_greeting: Regex
    crowd_question: Regex = r"(?!)"
    collective_sender: Regex
    misread_request: Regex
    misread_generic: list[str]
    promotion: list[str]
    thanks_for: Regex
    thanks_generic: list[str]
    thanks_passed_on: list[str] = Field(default_factory=list)
    thanks_coverage: list[str]
    coverage_context: Regex
    unasked_explanation: list[str] = Field(default_factory=list)
    thanked_absent_words: int = Field(ge=1)
    apology: Regex
    thanked_apology: Regex
    courtesy_apology: Regex
    problem_cues: Regex
    thanked_act_max_terms: int = Field(ge=0)
    topic_only_min_terms: int = Field(ge=1)
    grave_news: Regex
    cheer: Regex
    safety_question: Regex
    health_context: Regex
    safety_answer: Regex
    asks: Regex
    engagement: Regex
    team_plural: list[str]
    own_report: Regex
    own_report_min: int = Field(ge=1)


class GatesConfig(_Strict):
    spread: float = Field(ge=0, le=0.5)
    per_extra_gate: float = Field(ge=0, le=0.5)


class RewardConfig(_Strict):
    weights: dict[str, float]
    gates: GatesConfig
    length: LengthConfig
    tone: ToneConfig
    integrity: IntegrityConfig
    overselling: OversellingConfig
    acknowledgment: AcknowledgmentConfig
    privacy: PrivacyConfig
    coherence: CoherenceConfig
    role: RoleConfig

    @model_validator(mode="after")
    def _weights_cover_components(self) -> "RewardConfig":
        if set(self.weights) != set(COMPONENTS):
            raise ValueError(f"weights must name exactly {', '.join(COMPONENTS)}; got {', '.join(self.weights)}")
        if any(w < 0 for w in self.weights.values()) or abs(sum(self.weights.values()) - 1.0) > 1e-6:
            raise ValueError("weights must be non-negative and sum to 1 so that the total stays in [-1, 1]")
        return self


class ConfigError(ValueError):
    """A reward config that cannot be read or is invalid; the message names the file and the field."""


def load_config(path: str | Path | None = None) -> RewardConfig:
    """Read a reward config; `None` means the project's `configs/reward.yaml`."""
    return load_yaml_model(path if path is not None else DEFAULT_CONFIG_PATH, RewardConfig, ConfigError)
