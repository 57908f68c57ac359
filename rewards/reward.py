"""The rule-based reward for a reply to research feedback.

`score(response, feedback)` returns a total in [-1, 1] and one score per component, each with a
sentence a person can act on. total = sum(weight * score) over length, tone, integrity, overselling
and acknowledgment (weights sum to 1), capped at the overselling score (hype cannot be bought back by
the other components); privacy is a gate that forces the minimum. total >= 0 means an
acceptable reply, < 0 a failure; Mubit credit uses that sign. See docs/reward.md.
"""

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from common.sentiment import SentimentLabeller, default_labeller
from rewards.config import COMPONENTS, RewardConfig, load_config
from rewards.privacy import DIGIT, PLACEHOLDER, PiiPatterns

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
# Malformed words, found in one pass over the lower-cased reply: a letter next to a digit ("5wn", "verify3"),
# a replacement character, or a run of consonants standing as a word ("ck", "lst").
MALFORMED = re.compile(r"[a-z][0-9]|[0-9][a-z]|\ufffd|\b[b-df-hj-np-tv-xz]{2,}\b")
STATISTIC = re.compile(r"\b\d+(?:\.\d+)?\s?%|\b\d+ (?:out of|in) (?:every )?\d+\b")


class ComponentScore(NamedTuple):  # a NamedTuple: six are built per reply, on the training hot path
    score: float
    weight: float
    explanation: str


@dataclass(frozen=True)
class RewardResult:
    total: float
    components: dict[str, ComponentScore]

    def to_dict(self) -> dict:
        return {"total": self.total, "components": {k: v._asdict() for k, v in self.components.items()}}


@dataclass(frozen=True)
class FeedbackAnalysis:
    """What the reward needs from the feedback; cached because a GRPO group scores G replies to one."""

    label: str  # negative / neutral / positive
    compound: float
    key_stems: tuple[str, ...]  # word prefixes of the feedback's specific terms (light stemming)
    key_words: tuple[str, ...]  # the same terms as written, for explanations
    ngrams: frozenset[tuple[str, ...]]


def _lexicon(terms: Iterable[str], *, whole_words: bool = False) -> re.Pattern[str]:
    """One pattern for a list of lower-case terms, matched against lower-cased text, longest first so that
    "we will verify" wins over "verify". A term matches as a word prefix ("limitation" matches "limitations")
    unless `whole_words` ("proven" must not match "provenance"). Terms that start with a word character share
    one leading `\b`, which keeps the pattern ~15x faster than a lookbehind per term."""
    ordered = sorted({t.lower() for t in terms}, key=len, reverse=True)
    words = "|".join(re.escape(t) for t in ordered if t[:1].isalnum())
    symbols = "|".join(re.escape(t) for t in ordered if not t[:1].isalnum())
    pattern = rf"\b(?:{words})" + (r"(?!\w)" if whole_words else "") if words else ""
    return re.compile("|".join(p for p in (pattern, symbols) if p))


def _words(text: str) -> list[str]:
    """Lower-cased words, without the governance stage's placeholders (<PERSON_1> is not a word of the text)."""
    if "<" in text:
        text = PLACEHOLDER.sub(" ", text)
    return WORD.findall(text.lower())


def _ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*(words[k:] for k in range(n)), strict=False))


def _clamp(x: float) -> float:
    return max(-1.0, min(1.0, x))


class RewardScorer:
    """Compiles a config's lexicons once; `__call__` scores one reply."""

    def __init__(self, config: RewardConfig, sentiment: SentimentLabeller | None = None):
        self.config = config
        self._sentiment = sentiment or default_labeller()  # the governance stage's labeller
        self._empathy = _lexicon(config.tone.empathy_markers)
        self._appreciation = _lexicon(config.tone.appreciation_markers)
        self._cheer = _lexicon(config.tone.cheer_markers)
        self._integrity = _lexicon(config.integrity.markers)
        self._hype = _lexicon(config.overselling.hype_terms, whole_words=True)
        self._citation = _lexicon(config.overselling.citation_markers)
        self._pii = PiiPatterns(config.privacy)
        ack = config.acknowledgment
        self._ignored_words = frozenset(ack.generic_terms) | frozenset(ack.stopwords)
        self._function_words = frozenset(config.readability.function_words)
        self.analyze_feedback = lru_cache(maxsize=4096)(self._analyze_feedback)

    def __call__(self, response: str, feedback: str) -> RewardResult:
        fb = self.analyze_feedback(feedback)
        words = _words(response)
        lower = response.lower()  # the lexicons are matched on lower-cased text (faster than IGNORECASE)
        parts = {
            "length": self._length(words),
            "tone": self._tone(response, lower, fb),
            "integrity": self._integrity_score(lower, len(words)),
            "overselling": self._overselling(lower),
            "acknowledgment": self._acknowledgment(words, fb),
        }
        weights = self.config.weights
        components = {name: ComponentScore(round(s, 4), weights[name], why) for name, (s, why) in parts.items()}
        total = sum(weights[name] * parts[name][0] for name in COMPONENTS)
        if self.config.overselling.caps_total:
            total = min(total, parts["overselling"][0])

        pii = self._pii.find(response)
        readable, readability_why = self._readability(lower, words)
        if not readable:
            total = min(total, self.config.readability.cap)
        components["readability"] = ComponentScore(1.0 if readable else -1.0, 0.0, readability_why)
        if not words:
            total = -1.0  # an empty reply is the worst reply, whatever the other components would say
        if pii:
            kinds = ", ".join(sorted({f.kind for f in pii}))
            privacy = ComponentScore(-1.0, 0.0, f"The reply contains personal data ({kinds}): remove it; "
                                                "this alone sets the total to the minimum.")
            total = -1.0
        else:
            privacy = ComponentScore(1.0, 0.0, "No personal data in the reply (a gate: any would set the total to -1).")
        components["privacy"] = privacy
        return RewardResult(total=round(_clamp(total), 4), components=components)

    # -- feedback ---------------------------------------------------------------------------------------
    def sentiment(self, text: str) -> dict[str, float]:
        return self._sentiment.scores(text)

    def _analyze_feedback(self, feedback: str) -> FeedbackAnalysis:
        cfg = self.config
        sentiment = self._sentiment.label(feedback)
        label, compound = sentiment.label, sentiment.compound
        words = _words(feedback)
        ack = cfg.acknowledgment
        first_seen: dict[str, tuple[int, str]] = {}
        for position, w in enumerate(words):
            if len(w) >= ack.min_word_chars and w.isalpha() and w not in self._ignored_words:
                first_seen.setdefault(w[: ack.stem_chars], (position, w))
        # Longer words are the more specific points; ties keep the order of the feedback.
        ranked = sorted(first_seen.items(), key=lambda kv: (-len(kv[1][1]), kv[1][0]))[: ack.max_key_terms]
        return FeedbackAnalysis(label, compound, tuple(stem for stem, _ in ranked),
                                tuple(word for _, (_, word) in ranked), frozenset(_ngrams(words, ack.echo_ngram)))

    # -- gates ------------------------------------------------------------------------------------------
    def _readability(self, lower: str, words: list[str]) -> tuple[bool, str]:
        cfg = self.config.readability
        if len(words) < cfg.min_words:
            return True, "Too short to judge readability (a gate: word salad caps the total)."
        function_share = sum(map(self._function_words.__contains__, words)) / len(words)
        odd_share = len(MALFORMED.findall(lower)) / len(words)
        if function_share < cfg.min_function_word_share or odd_share > cfg.max_odd_word_share:
            return False, (f"Not readable prose ({function_share:.0%} function words, {odd_share:.0%} malformed "
                           f"words): write sentences; the total is capped at {cfg.cap}.")
        return True, "Reads as prose (a gate: word salad caps the total)."

    # -- components -------------------------------------------------------------------------------------
    def _length(self, words: list[str]) -> tuple[float, str]:
        cfg = self.config.length
        n = len(words)
        if n == 0:
            return -1.0, "The reply is empty: write a reply of 50-150 words."
        # Padding by repetition earns nothing: each word trigram that repeats an earlier one is one word less.
        n_grams = max(n - cfg.repeat_ngram + 1, 0)
        distinct = len(set(zip(*[words[k:] for k in range(cfg.repeat_ngram)], strict=False)))
        effective = n - (n_grams - distinct)
        counted = f"{effective} words" + (f" ({n - effective} repeated words not counted)" if effective < n else "")
        lo, hi = cfg.best_min_words, cfg.best_max_words
        if effective < lo:
            return 2 * math.exp(-(((lo - effective) / cfg.short_width) ** 2)) - 1, (
                f"{counted}: too short, say more about the specific points to reach {lo}-{hi} words.")
        if effective > hi:
            return 2 * math.exp(-(((effective - hi) / cfg.long_width) ** 2)) - 1, (
                f"{counted}: too long, cut to at most {hi} words.")
        return 1.0, f"{counted}: inside the {lo}-{hi} word range."

    def _tone(self, response: str, lower: str, fb: FeedbackAnalysis) -> tuple[float, str]:
        cfg = self.config.tone
        shares = self.sentiment(response)  # VADER reads capitals and punctuation: give it the original text
        empathy = bool(self._empathy.search(lower))
        appreciation = bool(self._appreciation.search(lower))
        cheer = len(self._cheer.findall(lower))
        cheerful = cheer > cfg.max_cheer_markers or shares["pos"] >= cfg.cheerful_pos_share
        if fb.label == "negative":
            score = (0.6 if empathy else -0.4) + (-0.8 if cheerful else 0.4)
            if cheerful:
                why = "The feedback is negative but the reply sounds cheerful: drop the exclamations and upbeat words"
                why += " and acknowledge the concern." if not empathy else "."
            elif not empathy:
                why = "The feedback is negative: apologise or show you understand the concern."
            else:
                why = "Apologetic, empathetic tone matches the negative feedback."
        elif fb.label == "positive":
            warm = appreciation or shares["pos"] >= cfg.warm_pos_share
            score = (0.6 if appreciation else -0.2) + (0.4 if warm and shares["neg"] < cfg.neutral_max_share else -0.6)
            why = ("Appreciative tone matches the positive feedback." if score >= 0.9 else
                   "The feedback is positive: thank the person and keep the reply warm.")
        else:
            professional = not cheerful and max(shares["pos"], shares["neg"]) < cfg.neutral_max_share
            score = (0.6 if professional else -0.6) + (0.4 if appreciation or empathy else 0.0)
            why = ("Neutral, professional tone matches the neutral feedback." if professional else
                   "The feedback is neutral: keep a plain professional tone without exclamations or strong emotion.")
        return _clamp(score), why

    def _integrity_score(self, lower: str, n_words: int) -> tuple[float, str]:
        cfg = self.config.integrity
        hits = self._integrity.findall(lower)
        if not hits:
            return cfg.score_none, ("No research-integrity markers: state a limitation, what is preliminary,"
                                    " or what you will verify.")
        distinct = sorted(set(hits))
        score = min(len(distinct), cfg.saturate_at) / cfg.saturate_at
        why = f"Mentions {', '.join(repr(d) for d in distinct[:4])}"
        density = 100 * len(hits) / max(n_words, 1)
        if len(hits) >= cfg.stuffing_min_hits and density > cfg.max_hits_per_100_words:
            excess = min(1.0, (density - cfg.max_hits_per_100_words) / cfg.max_hits_per_100_words)
            score -= cfg.stuffing_penalty * (1 + excess)
            stuffing = f", but {density:.0f} markers per 100 words is keyword stuffing: use them in sentences."
            return _clamp(score), why + stuffing
        if len(distinct) < cfg.saturate_at:
            return score, why + ": add one more concrete caveat (limitation, sample size, what you will verify)."
        return score, why + ": integrity credit is full (more markers add nothing)."

    def _overselling(self, lower: str) -> tuple[float, str]:
        cfg = self.config.overselling
        hype = self._hype.findall(lower)
        uncited = []
        for m in STATISTIC.finditer(lower) if DIGIT.search(lower) else ():
            if m.group().replace(" ", "") == "100%":
                continue  # counted as hype
            window = lower[max(0, m.start() - cfg.citation_window_chars) : m.end() + cfg.citation_window_chars]
            if not self._citation.search(window):
                uncited.append(m.group())
        score = _clamp(1.0 - cfg.penalty_per_hit * len(hype) - cfg.uncited_stat_penalty * len(uncited))
        problems = []
        if hype:
            problems.append(f"remove absolute or hype claims ({', '.join(repr(h) for h in sorted(set(hype))[:4])})")
        if uncited:
            problems.append(f"cite a source for {', '.join(repr(u) for u in uncited[:3])} or drop it")
        if not problems:
            return score, "No hype, absolute assurances or uncited statistics."
        return score, "Overselling: " + "; ".join(problems) + "."

    def _acknowledgment(self, words: list[str], fb: FeedbackAnalysis) -> tuple[float, str]:
        cfg = self.config.acknowledgment
        if not fb.key_stems:
            return 0.0, "The feedback has no specific terms to take up; nothing to check."
        reply_stems = {w[: cfg.stem_chars] for w in set(words)}
        covered = [s for s in fb.key_stems if s in reply_stems]
        coverage = len(covered) / len(fb.key_stems)
        score = 2 * min(1.0, coverage / cfg.full_credit_coverage) - 1
        copied = fb.ngrams.intersection(zip(*[words[k:] for k in range(cfg.echo_ngram)], strict=False))
        echo = len(copied) / len(fb.ngrams) if fb.ngrams else 0.0
        if echo > cfg.echo_threshold:
            return -1.0, (
                f"The reply copies {echo:.0%} of the feedback's phrases: respond to the points in your own words.")
        missing = [w for s, w in zip(fb.key_stems, fb.key_words, strict=True) if s not in reply_stems][:3]
        if coverage >= cfg.full_credit_coverage:
            return score, f"Takes up the feedback's specific points ({len(covered)} of {len(fb.key_stems)} key terms)."
        return score, (f"Takes up {len(covered)} of {len(fb.key_stems)} key terms of the feedback: address its specific"
                       f" points (e.g. {', '.join(missing)}...).")


_DEFAULT_SCORER: RewardScorer | None = None


def default_scorer() -> RewardScorer:
    """The process-wide scorer, built on first use from `configs/reward.yaml` (or $REWARD_CONFIG: training sets
    it to the run config's `reward.config` before its runner processes start)."""
    global _DEFAULT_SCORER
    if _DEFAULT_SCORER is None:
        _DEFAULT_SCORER = RewardScorer(load_config(os.environ.get("REWARD_CONFIG") or None))
    return _DEFAULT_SCORER


def score(response: str, feedback: str, *, config: RewardConfig | None = None) -> RewardResult:
    """Score one reply to one feedback message. With `config=None` the project's configs/reward.yaml is used."""
    scorer = default_scorer() if config is None else RewardScorer(config)
    return scorer(response, feedback)
