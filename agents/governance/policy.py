"""The decision policy: from the evidence about one message to answer / escalate / reject, with reasons,
flags and a confidence. Safety first; docs/governance.md ("Decision policy") is the written form.

1. Anything that may be about self-harm or a person's safety escalates, whatever else matches.
2. Legal and regulatory matters escalate.
3. Rejection needs positive evidence (harassment, spam, an unrelated request); abuse next to specific feedback
   on the work is a conflict, and conflicts escalate.
4. A message that is only an instruction to the assistant is rejected; an injection inside feedback is cut
   out (by the guard) and the rest answered.
5. Where no rule spoke, the classifier's weak signals escalate; nothing is rejected for what it lacks.

Confidence says how sure the evidence makes the decision: the deciding rule's confidence (raised by the
classifier when it agrees), the conflict confidence for conflicts, the classifier's probability for its own
signals and for `answer`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import regex

from agents.governance.classifier import ClassifierScores
from agents.governance.config import ClassifierConfig, Decision, GovernanceConfig
from agents.governance.rules import FLAGS, FiredRule, without_spans

EMPTY_FLAG = "empty"
PLACEHOLDER_OR_MARKER = regex.compile(r"<[A-Z_]+_\d+>|\[removed: [^\]]*\]")
# A word: a run between spaces, or one character of a script written without them (Chinese, Japanese, Thai), so
# that "按钮在手机上点不了" left after an injection is cut counts as the words it is, not as one.
UNSPACED_CHAR = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}"
WORD_OR_UNSPACED_CHAR = regex.compile(rf"[{UNSPACED_CHAR}]|[^\s{UNSPACED_CHAR}]+")


@dataclass
class Verdict:
    decision: Decision
    confidence: float
    reasons: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    def add(self, reason: str, flags: list[str] | tuple[str, ...] = ()) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.flags += [flag for flag in flags if flag not in self.flags]


class DecisionPolicy:
    def __init__(self, config: GovernanceConfig):
        self.config = config
        self.policy = config.policy
        self.injection = config.prompt_injection
        self.substance = [regex.compile(p, FLAGS) for p in config.policy.substance]

    def decide(self, text: str, fired: list[FiredRule], injected: bool, agent_text: str,
               scores: ClassifierScores | None) -> Verdict:
        """`text`: the redacted message the rules ran on; `agent_text`: the same after the injection guard."""
        classifier = self.config.classifier
        escalating = [f for f in fired if f.config.decision == "escalate"]
        rejecting = [f for f in fired if f.config.decision == "reject"]
        weak = weak_signals(scores, classifier, fired) if scores is not None else []

        if escalating or any(label in classifier.escalate_labels for label, _ in weak):
            verdict = Verdict("escalate", max((f.config.confidence for f in escalating), default=0.0))
            for f in escalating:
                verdict.add(f.config.reason, f.config.flags)
                verdict.confidence = max(verdict.confidence, _agreeing(scores, classifier, f))
            for label, p in weak:
                if label in classifier.escalate_labels:
                    verdict.add(classifier.reason(label, p), classifier.flags.get(label, []))
                    verdict.confidence = max(verdict.confidence, p)
        elif rejecting:
            conflict = self._conflict(text, rejecting)
            if conflict:
                verdict = Verdict("escalate", self.policy.conflict_confidence, [self.policy.conflict_reason])
            else:
                confidence = max(max(f.config.confidence, _agreeing(scores, classifier, f)) for f in rejecting)
                verdict = Verdict("reject", confidence)
        elif injected and words_left(agent_text) < self.injection.min_words_left:
            verdict = Verdict("reject", self.injection.only_confidence, [self.injection.only_reason])
        elif weak:
            label, p = weak[0]
            verdict = Verdict("escalate", p, [classifier.reason(label, p)], list(classifier.flags.get(label, [])))
        else:
            confidence = scores.probabilities[classifier.answer_label] if scores else classifier.no_model_confidence
            verdict = Verdict("answer", round(confidence, 4), [self.policy.default_reason])

        for f in rejecting:
            verdict.add(f.config.reason, f.config.flags)
        if injected:
            verdict.add(self.injection.reason, [self.injection.flag])
        verdict.confidence = round(verdict.confidence, 4)
        return verdict

    def _conflict(self, text: str, rejecting: list[FiredRule]) -> bool:
        """Abuse next to specific feedback: what is left once the abusive matches are cut out names a part of
        the work or a concrete fault."""
        eligible = [f for f in rejecting if f.config.escalate_with_substance]
        if not eligible or len(eligible) < len(rejecting):
            return False  # spam stays spam, whatever else it says
        rest = without_spans(text, [span for f in eligible for span in f.spans])
        return any(p.search(rest) for p in self.substance)

    def empty(self) -> Verdict:
        return Verdict("reject", 1.0, [self.policy.empty_reason], [EMPTY_FLAG])


def weak_signals(scores: ClassifierScores, config: ClassifierConfig,
                 fired: list[FiredRule]) -> list[tuple[str, float]]:
    """Labels the classifier gives at least their threshold to and that no fired rule already stands for,
    most probable first."""
    covered = {flag for f in fired for flag in f.config.flags}
    found = [(label, p) for label, p in scores.probabilities.items()
             if label in config.thresholds and p >= config.thresholds[label]
             and not set(config.flags.get(label, [])) & covered]
    return sorted(found, key=lambda item: -item[1])


def _agreeing(scores: ClassifierScores | None, config: ClassifierConfig, fired: FiredRule) -> float:
    """The classifier's probability for the label this rule stands for (a shared flag), when it has one."""
    if scores is None:
        return 0.0
    return max((p for label, p in scores.probabilities.items()
                if set(config.flags.get(label, [])) & set(fired.config.flags)), default=0.0)


def words_left(agent_text: str) -> int:
    return len(WORD_OR_UNSPACED_CHAR.findall(PLACEHOLDER_OR_MARKER.sub(" ", agent_text)))
