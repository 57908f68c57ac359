"""The governance stage: every feedback message passes here before any agent sees it.

Order matters: cut over-long input first (bounds all later work; the cut-off part is never seen), redact
PII, then run the compliance rules and the injection guard on the redacted text, the classifier on what is
left, and the decision policy (agents/governance/policy.py) on all of that; sentiment is scored on what the
agent will actually read. The engine loads once per process (`get_engine`); Presidio's analyzer and the
spaCy model are the slow part (~1 s).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from presidio_analyzer import RecognizerResult

from agents.governance.classifier import FeedbackClassifier
from agents.governance.config import GovernanceConfig, load_config
from agents.governance.pii import Entity, PiiRedactor
from agents.governance.policy import DecisionPolicy
from agents.governance.result import GovernanceResult
from agents.governance.rules import ComplianceRules, FiredRule, InjectionGuard
from common.sentiment import Sentiment, SentimentLabeller, default_labeller

TRUNCATED_FLAG = "truncated"


@dataclass(frozen=True, slots=True)
class PreparedText:
    text: str
    truncated: bool


@dataclass(frozen=True, slots=True)
class Screened:
    """One message after redaction, rules and the injection guard: what the classifier and policy read."""

    prepared: PreparedText
    redacted: str
    entities: list[Entity]
    fired: list[FiredRule]
    agent_text: str
    injected: bool


class GovernanceEngine:
    def __init__(self, config: GovernanceConfig, sentiment: SentimentLabeller | None = None):
        self.config = config
        self.redactor = PiiRedactor(config.pii)
        self.sentiment = sentiment or default_labeller()
        self.rules = ComplianceRules(config.rules)
        self.injection = InjectionGuard(config.prompt_injection)
        self.classifier = (FeedbackClassifier.load(config.classifier, config.prompt_injection)
                           if config.classifier.enabled else None)
        self.policy = DecisionPolicy(config)

    def govern(self, text: str) -> GovernanceResult:
        prepared = self.prepare(text)
        if not prepared.text.strip():
            return self._empty(prepared)
        return self._decide([self._screen(prepared, self.redactor.analyze(prepared.text))])[0]

    def govern_many(self, texts: Sequence[str]) -> list[GovernanceResult]:
        """Same results as `govern` on each text, with one batched spaCy pass over the distinct ones.

        A GRPO group sends the same task G times: each distinct message is governed once, and repeats get
        their own copy of its result.
        """
        prepared = [self.prepare(text) for text in texts]
        distinct = list(dict.fromkeys(p for p in prepared if p.text.strip()))
        findings = self.redactor.analyze_many([p.text for p in distinct])
        screened = [self._screen(p, found) for p, found in zip(distinct, findings, strict=True)]
        governed = dict(zip(distinct, self._decide(screened), strict=True))
        results, seen = [], set()
        for p in prepared:
            if not p.text.strip():
                results.append(self._empty(p))
            elif p in seen:
                results.append(governed[p].model_copy(deep=True))
            else:
                seen.add(p)
                results.append(governed[p])
        return results

    def prepare(self, text: str) -> PreparedText:
        """Make any str safe to analyse: lone surrogates become '?', over-long text is cut."""
        if not isinstance(text, str):
            raise TypeError(f"governance expects text as str, got {type(text).__name__}")
        text = text.encode("utf-8", "replace").decode("utf-8")
        limit = self.config.limits.max_chars
        if len(text) <= limit:
            return PreparedText(text, truncated=False)
        cut = text.rfind(" ", limit - 200, limit)  # a word boundary near the limit keeps a value whole
        return PreparedText(text[: cut if cut > 0 else limit], truncated=True)

    def _screen(self, prepared: PreparedText, findings: list[RecognizerResult]) -> Screened:
        redacted, entities = self.redactor.redact(prepared.text, findings)
        agent_text, injected = self.injection.neutralise(redacted)
        return Screened(prepared, redacted, entities, self.rules.evaluate(redacted), agent_text, injected)

    def _decide(self, screened: list[Screened]) -> list[GovernanceResult]:
        """The classifier in one batch over the agent's view of every message, then the policy on each."""
        scores = (self.classifier.predict([s.agent_text for s in screened]) if self.classifier
                  else [None] * len(screened))
        results = []
        for s, score in zip(screened, scores, strict=True):
            verdict = self.policy.decide(s.redacted, s.fired, s.injected, s.agent_text, score)
            if s.prepared.truncated:
                verdict.add(self._truncation_reason(), [TRUNCATED_FLAG])
            results.append(GovernanceResult(
                redacted_text=s.agent_text,
                sentiment=self.sentiment.label(s.agent_text),
                decision=verdict.decision,
                confidence=verdict.confidence,
                reasons=verdict.reasons,
                flags=verdict.flags,
                entities=s.entities,
            ))
        return results

    def _empty(self, prepared: PreparedText) -> GovernanceResult:
        verdict = self.policy.empty()
        if prepared.truncated:  # only whitespace up to the limit
            verdict.add(self._truncation_reason(), [TRUNCATED_FLAG])
        return GovernanceResult(
            redacted_text="",
            sentiment=Sentiment("neutral", 0.0),
            decision=verdict.decision,
            confidence=verdict.confidence,
            reasons=verdict.reasons,
            flags=verdict.flags,
            entities=[],
        )

    def _truncation_reason(self) -> str:
        limit = self.config.limits.max_chars
        return f"input longer than {limit} characters: truncated there, the rest was not read"


_engine: GovernanceEngine | None = None
_engine_lock = threading.Lock()


def get_engine() -> GovernanceEngine:
    """The process-wide engine, built on first use from `configs/governance.yaml` (or $GOVERNANCE_CONFIG)."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = GovernanceEngine(load_config(os.environ.get("GOVERNANCE_CONFIG") or None))
    return _engine


def govern(text: str) -> GovernanceResult:
    """Redact, score and decide one feedback message."""
    return get_engine().govern(text)


def govern_many(texts: Sequence[str]) -> list[GovernanceResult]:
    """`govern` for a batch: one batched spaCy pass, several times faster per message than a loop."""
    return get_engine().govern_many(texts)
