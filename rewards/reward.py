"""The rule-based reward for a reply to research feedback.

`score(response, feedback)` returns a total in [-1, 1] and one score per component, each with a
sentence a person can act on. total = sum(weight * score) over length, tone, integrity, overselling
and acknowledgment (weights sum to 1), capped at the overselling score (hype cannot be bought back by
the other components). Three gates can only force the total down: coherence (salad and stitched
fragments), role (wrong role, template text, invented contact details) and privacy (personal data: the
minimum). total >= 0 means an acceptable reply, < 0 a failure; Mubit credit uses that sign. Each
component measures what it names for a reader (docs/reward.md): integrity and acknowledgment count only
inside the reply's own well-formed sentences that take up this feedback's content.
"""

import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from common.sentiment import SentimentLabeller, default_labeller
from rewards.config import COMPONENTS, RewardConfig, load_config
from rewards.privacy import DIGIT, PLACEHOLDER, PiiPatterns
from rewards.role import RoleCheck, SenderFacts
from rewards.sentences import PROMISE, FeedbackTerms, Reading, Sentence, SentenceReader, stem

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
# Malformed words, found in one pass over the lower-cased reply: a letter next to a digit ("5wn", "verify3"),
# a replacement character, or a run of consonants standing as a word ("ck", "lst").
MALFORMED = re.compile(r"[a-z][0-9]|[0-9][a-z]|\ufffd|\b[b-df-hj-np-tv-xz]{2,}\b")
STATISTIC = re.compile(r"\b\d+(?:\.\d+)?\s?%|\b\d+ (?:out of|in) (?:every )?\d+\b")
# "100%" is an absolute ("100% reliable"), never a figure quoted from the feedback: it stays a claim.
ABSOLUTE_STATISTIC = "100%"
IDENTIFIER = re.compile(r"[a-z0-9]*\d[a-z0-9]*(?:[-/][a-z0-9]+)*")
CLAUSE_END = re.compile(r"[.!?;:]+(?:\s+|$)")  # a settled check and its verdict must share a sentence or clause
# The feedback's terms a reply can take up: nouns, names, numbers and adjectives (the parser's tags).
KEY_TAGS = ("NN", "NNS", "NNP", "NNPS", "CD", "JJ", "JJR", "VBG")
FEEDBACK_CACHE_SIZE = 4096
FRAMING_STEM = 5  # the verbs of `integrity.framing_verbs` are matched on their first five letters


class ComponentScore(NamedTuple):  # a NamedTuple: eight are built per reply, on the training hot path
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
    sender: SenderFacts  # what the role check needs: placeholders, links, the team's things, the signer
    praises: bool  # positive, or with a word of praise: thanks for kind words can answer it
    verbs: frozenset[str]  # the first three letters of the feedback's verbs in the past: what the sender says was done
    statistics: frozenset[str] = frozenset()  # the feedback's own statistics ("108%", "31%"), quoted back in a reply
    qualifiers: tuple[frozenset[str], ...] = ()  # per key term, the stems of the participles that qualify it
    identifiers: frozenset[str] = frozenset()  # its words with a digit, lower-cased ("vr-0412"): the sender's own
    lower: str = ""  # the feedback, lower-cased


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


def _ngrams(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*(words[k:] for k in range(n)), strict=False))


def _stutter(words: Sequence[str], longest: int) -> str:
    """A phrase of up to `longest` words said three times in a row ("Northern Lights: Northern Lights: Northern
    Lights:"): a sampling loop, however short the rest of the reply keeps its share of repeats."""
    for n in range(1, longest + 1):
        for i in range(len(words) - 3 * n + 1):
            if words[i : i + n] == words[i + n : i + 2 * n] == words[i + 2 * n : i + 3 * n]:
                return " ".join(words[i : i + n])
    return ""


def _statistic(found: str) -> str:
    """A statistic as written, without its spaces ("31 %" -> "31%"), to meet the same figure in the feedback."""
    return found.replace(" ", "")


def _clamp(x: float) -> float:
    return max(-1.0, min(1.0, x))


class RewardScorer:
    """Compiles a config's lexicons once; `__call__` scores one reply, `score_many` a batch (one parser pass)."""

    def __init__(self, config: RewardConfig, sentiment: SentimentLabeller | None = None):
        self.config = config
        self._sentiment = sentiment or default_labeller()  # the governance stage's labeller
        self._empathy = _lexicon(config.tone.empathy_markers)
        self._appreciation = _lexicon(config.tone.appreciation_markers)
        self._cheer = _lexicon(config.tone.cheer_markers)
        self._praise_thanks = _lexicon(config.tone.praise_thanks, whole_words=True)
        self._praise = _lexicon(config.tone.praise_words, whole_words=True)
        self._integrity = _lexicon(config.integrity.markers)
        self._on_receipt = frozenset(config.integrity.on_receipt_admissions)
        self._framed_nouns = tuple(config.integrity.framed_nouns)
        self._framing_verbs = frozenset(stem(v, FRAMING_STEM) for v in config.integrity.framing_verbs)
        self._framing_agents = frozenset(stem(v, FRAMING_STEM) for v in config.integrity.framing_agents)
        # the phrases, and the pattern (a promise with its object); an empty part would match everywhere
        evasive = (_lexicon(config.integrity.evasive_phrases).pattern, config.integrity.evasive_pattern)
        self._evasive = re.compile("|".join(p for p in evasive if p) or r"(?!)")
        # ordinary phrases are matched with the hype terms (longest first), so that "completely fine" is found
        # whole and then dropped, not counted as "completely"
        self._ordinary = frozenset(t.lower() for t in config.overselling.ordinary_absolutes)
        self._hype = _lexicon([*config.overselling.hype_terms, *self._ordinary], whole_words=True)
        self._reported_wording = re.compile(config.overselling.reported_wording
                                            + r"(?:(?!\b(?:we|i|our|us)\b)[^.!?;:\n])*$")
        self._assurance_that = re.compile(config.overselling.assurance_that)
        self._claimed = _lexicon(config.overselling.verification_claims, whole_words=True)
        self._checked = _lexicon(config.overselling.completed_checks, whole_words=True)
        self._verdict = _lexicon(config.overselling.settled_verdicts, whole_words=True)
        self._settled_colon = re.compile(config.overselling.settled_colon)
        self._dismissal = _lexicon(config.overselling.dismissals, whole_words=True)
        self._blame = _lexicon(config.overselling.blame_shifts, whole_words=True)
        self._citation = _lexicon(config.overselling.citation_markers)
        self._claim = _lexicon(config.overselling.claim_words)
        self._reference = re.compile(config.overselling.reference_numbers)
        self._in_transit = re.compile(config.overselling.in_transit)
        self._in_transit_if = re.compile(config.overselling.in_transit_conditions)
        self._pii = PiiPatterns(config.privacy)
        ack = config.acknowledgment
        self._stem = ack.stem_chars
        self._agrees = re.compile(ack.agreement)
        self._ignored_words = frozenset(ack.generic_terms) | frozenset(ack.stopwords)
        self._function_words = frozenset(config.coherence.function_words)
        # Words every reply may use that are not the reply's own content: stock integrity and tone phrases.
        stock = [*config.integrity.markers, *config.integrity.evasive_phrases, *config.tone.empathy_markers,
                 *config.tone.appreciation_markers]
        self._stock_stems = frozenset(stem(w, self._stem) for term in stock for w in WORD.findall(term) if len(w) > 2)
        self._reader = SentenceReader(config.coherence, ack.non_actions, ack.commitment_times, config.overselling)
        self._role = RoleCheck(config.role, ack.stem_chars)
        self._feedback_cache: dict[str, FeedbackAnalysis] = {}  # insertion-ordered: the oldest is evicted first

    def __call__(self, response: str, feedback: str) -> RewardResult:
        return self.score_many([(response, feedback)])[0]

    def score_many(self, pairs: Sequence[tuple[str, str]]) -> list[RewardResult]:
        """Score (response, feedback) pairs; the replies (and new feedbacks) are parsed together, which is faster
        than one by one."""
        feedbacks = [feedback for _, feedback in pairs]
        new = self._unread(feedbacks)
        readings, terms = self._reader.read_with_feedbacks([response for response, _ in pairs], new)
        analyses = self._remember(feedbacks, new, terms)
        return [self._score(response, fb, reading)
                for (response, _), fb, reading in zip(pairs, analyses, readings, strict=True)]

    def _score(self, response: str, fb: FeedbackAnalysis, reading: Reading) -> RewardResult:
        words = _words(response)
        lower = response.lower()  # the lexicons are matched on lower-cased text (faster than IGNORECASE)
        own = self._own_sentences(reading, fb)
        own_share = self._own_share(words, fb)
        parts = {
            "length": self._length(words),
            "tone": self._tone(response, lower, fb),
            "integrity": self._integrity_score(lower, len(words), own, fb),
            "overselling": self._overselling(lower, self._done_work(reading, fb) + self._references(lower, fb)
                                             + self._in_transit_claims(lower, fb), fb.statistics),
            "acknowledgment": self._acknowledgment(words, own, own_share, fb),
        }
        weights = self.config.weights
        components = {name: ComponentScore(round(s, 4), weights[name], why) for name, (s, why) in parts.items()}
        total = sum(weights[name] * parts[name][0] for name in COMPONENTS)
        if self.config.overselling.caps_total:
            total = min(total, parts["overselling"][0])

        raw = total
        caps = []  # the caps of the gates this reply fails
        if parts["acknowledgment"][0] <= -1.0 and words:
            caps.append(self.config.acknowledgment.no_reply_cap)  # an echo or a brush-off is not a reply
        coherent, coherence_why = self._coherence(lower, words, reading, own_share)
        if not coherent:
            caps.append(self.config.coherence.cap)
        components["coherence"] = ComponentScore(1.0 if coherent else -1.0, 0.0, coherence_why)
        ack = parts["acknowledgment"][0]
        taken_up = frozenset(self._taken_up(own, fb))
        in_role, role_why = (self._role.check(response, fb.sender, reading.yours, ack >= 0, ack >= 1.0,
                                              taken_up, reading.ours)
                             if words else (True, "Empty reply."))
        if not in_role:
            caps.append(self.config.role.cap)
        unknown = self._role.unknown_named(response, fb.sender) if in_role and words else []
        if unknown and self._role.only_in_sign_off(response, unknown):
            total -= self.config.role.signature_named_penalty
            role_why = (f"Signs with {unknown[0]}: nothing can fill that placeholder in (-"
                        f"{self.config.role.signature_named_penalty:g} off the total); sign with the team's name.")
        elif unknown:
            total -= self.config.role.unknown_named_penalty
            role_why = (f"Names {unknown[0]}, whom the feedback does not mention: nothing can fill that placeholder "
                        f"in (-{self.config.role.unknown_named_penalty:g} off the total); name the team instead.")
        components["role"] = ComponentScore(1.0 if in_role and not unknown else 0.0 if in_role else -1.0, 0.0, role_why)
        if caps:
            total = min(total, self._gated(raw, caps))
        if not words:
            total = -1.0  # an empty reply is the worst reply, whatever the other components would say
        pii = self._pii.find(response)
        if pii:
            kinds = ", ".join(sorted({f.kind for f in pii}))
            privacy = ComponentScore(-1.0, 0.0, f"The reply contains personal data ({kinds}): remove it; "
                                                "this alone sets the total to the minimum.")
            total = -1.0
        else:
            privacy = ComponentScore(1.0, 0.0, "No personal data in the reply (a gate: any would set the total to -1).")
        components["privacy"] = privacy
        return RewardResult(total=round(_clamp(total), 4), components=components)

    def _gated(self, raw: float, caps: list[float]) -> float:
        """The strictest cap, graded by the raw total so that the better of two failures scores higher (a flat
        cap gives GRPO groups of failures no signal), lowered for each further gate failed."""
        gates = self.config.gates
        return min(caps) - gates.spread * (1.0 - raw) / 2 - gates.per_extra_gate * (len(caps) - 1)

    # -- feedback ---------------------------------------------------------------------------------------
    def sentiment(self, text: str) -> dict[str, float]:
        return self._sentiment.scores(text)

    def analyze_feedback(self, feedback: str) -> FeedbackAnalysis:
        return self.analyze_feedbacks([feedback])[0]

    def analyze_feedbacks(self, feedbacks: Sequence[str]) -> list[FeedbackAnalysis]:
        """What the reward needs from each feedback, cached (a GRPO group scores G replies to one feedback and
        the same feedbacks come back every epoch); the new ones are parsed in one batch."""
        new = self._unread(feedbacks)
        return self._remember(feedbacks, new, self._reader.read_with_feedbacks([], new)[1] if new else [])

    def _unread(self, feedbacks: Sequence[str]) -> list[str]:
        return [f for f in dict.fromkeys(feedbacks) if f not in self._feedback_cache]

    def _remember(self, feedbacks: Sequence[str], new: list[str], terms: list[FeedbackTerms]) -> list[FeedbackAnalysis]:
        """Analyse the new feedbacks from their parse, cache them (the oldest is evicted first) and return the
        analysis of every one of `feedbacks`."""
        cache = self._feedback_cache
        found = {f: cache[f] for f in feedbacks if f in cache}
        for feedback, read in zip(new, terms, strict=True):
            if len(cache) >= FEEDBACK_CACHE_SIZE:
                del cache[next(iter(cache))]
            cache[feedback] = found[feedback] = self._analyze_feedback(feedback, read)
        return [found[f] for f in feedbacks]

    def clear_feedback_cache(self) -> None:
        self._feedback_cache.clear()

    def _analyze_feedback(self, feedback: str, read: FeedbackTerms) -> FeedbackAnalysis:
        cfg = self.config
        sentiment = self._sentiment.label(feedback)
        praise = bool(self._praise.search(feedback.lower()))  # a word of praise ("impressive", "thanks", "great")
        positive = sentiment.label == "positive"
        words = _words(feedback)
        ack = cfg.acknowledgment
        # The feedback's specific points: its nouns, names, numbers and adjectives, nouns first, in order.
        terms: dict[str, tuple[int, str]] = {}
        for word, tag in read.words:
            if not tag.startswith(KEY_TAGS) or word in self._ignored_words:
                continue
            if len(word) < ack.min_word_chars and not any(ch.isdigit() for ch in word):
                continue
            terms.setdefault(stem(word, ack.stem_chars), (0 if tag.startswith(("NN", "CD")) else 1, word))
        ranked = sorted(terms.items(), key=lambda kv: kv[1][0])  # stable: keeps the order
        # ... and every number or identifier it quotes, wherever it stands ("2.3.9", "2.4.x", "table 3"): the most
        # specific thing a reply can take up, and a long message's later ones would be past the limit
        # ... and what it says in more than one form ("counting people crossing ... that's me counted 160 times"): a
        # long opening about who the sender is fills the limit, and the point it keeps coming back to is past it
        forms: dict[str, set[str]] = {}
        for w in words:
            forms.setdefault(stem(w, ack.stem_chars), set()).add(w.removesuffix("s"))  # a plural is no other form
        later = ranked[ack.max_key_terms :]
        ranked = ranked[: ack.max_key_terms] + [kv for kv in later if DIGIT.search(kv[1][1])
                                                or len(forms.get(kv[0], ())) >= ack.repeated_min]
        qualifiers: dict[str, set[str]] = {}
        for head, participle in read.qualified:
            qualifiers.setdefault(stem(head, ack.stem_chars), set()).add(stem(participle, ack.stem_chars))
        return FeedbackAnalysis(sentiment.label, sentiment.compound, tuple(stem for stem, _ in ranked),
                                tuple(word for _, (_, word) in ranked), frozenset(_ngrams(words, ack.echo_ngram)),
                                self._role.sender_facts(feedback, words, read, positive and praise),
                                positive or praise,
                                frozenset(word[:3] for word, tag in read.words if tag in ("VBD", "VBN")),
                                frozenset(_statistic(m.group()) for m in STATISTIC.finditer(feedback.lower()))
                                - {ABSOLUTE_STATISTIC},
                                tuple(frozenset(qualifiers.get(key, ())) for key, _ in ranked),
                                frozenset(IDENTIFIER.findall(feedback.lower())), feedback.lower())

    # -- what the reply says in its own words -------------------------------------------------------------
    def _own_sentences(self, reading: Reading, fb: FeedbackAnalysis) -> list[Sentence]:
        """The reply's sentences that count for integrity and acknowledgment: clauses about this case, not
        copied from the feedback (at most half of their word 4-grams appear in it) and not general statements
        ("every study has limitations", "we will take it into account")."""
        n = self.config.acknowledgment.echo_ngram
        own = []
        for s in reading.sentences:
            if not s.clause or s.label_fragment or s.general or self._evasive.search(s.text.lower()):
                continue
            grams = _ngrams(s.words, n)
            if grams and len(grams & fb.ngrams) / len(grams) > 0.5:
                continue
            own.append(s)
        return own

    def _own_share(self, words: list[str], fb: FeedbackAnalysis) -> float:
        """Share of the reply's content words that are its own: neither the feedback's words nor stock phrases.
        Keyword salad and echoes are made of the feedback's words; a reply says something of its own."""
        content = [w for w in words if len(w) > 2 and w.isalpha() and w not in self._ignored_words
                   and w not in self._function_words]
        if not content:
            return 0.0
        stems = [stem(w, self._stem) for w in content]
        own = [s for s in stems if s not in fb.sender.stems and s not in self._stock_stems]
        return len(own) / len(content)

    # -- gates ------------------------------------------------------------------------------------------
    def _coherence(self, lower: str, words: list[str], reading: Reading, own_share: float) -> tuple[bool, str]:
        cfg = self.config.coherence
        if len(words) < cfg.min_words:
            return True, "Too short to judge coherence (a gate: salad and stitched fragments cap the total)."
        function_share = sum(map(self._function_words.__contains__, words)) / len(words)
        odd_share = len(MALFORMED.findall(lower)) / len(words)
        problems = []
        if function_share < cfg.min_function_word_share or odd_share > cfg.max_odd_word_share:
            problems.append(f"not prose ({function_share:.0%} function words, {odd_share:.0%} malformed words)")
        if reading.heap_share > cfg.max_heap_share:
            problems.append(f"{reading.heap_share:.0%} of it is strings of nouns without the words that join them")
        if reading.label_fragments > cfg.max_label_fragments or reading.fragment_share > cfg.max_fragment_share:
            problems.append(f"{reading.label_fragments} label fragments ('Limitation: X.'), "
                            f"{reading.fragment_share:.0%} of words outside any clause")
        if reading.repeated_openings > cfg.max_repeated_openings:
            problems.append(f"{reading.repeated_openings} sentences repeat the same opening")
        grams = list(zip(*(words[k:] for k in range(cfg.loop_ngram)), strict=False))
        looped = sum(n for n in Counter(grams).values() if n > 1) / max(1, len(grams))
        if looped > cfg.max_looped_share:
            problems.append(f"it repeats itself ({looped:.0%} of its {cfg.loop_ngram}-word phrases recur)")
        elif stutter := _stutter(words, cfg.loop_ngram):
            problems.append(f"it repeats itself ('{stutter}' three times in a row)")
        anomalies = reading.anomalies
        if len(anomalies) > max(cfg.max_anomalies, cfg.max_anomaly_share * len(reading.sentences)):
            problems.append(f"broken grammar ({'; '.join(anomalies[:2])})")
        # the share of sentences where the parse breaks: with no other sign, the reply is stitched only if it is at
        # least `stitched_break_ratio` x its own share (a slip in one of six long sentences that take up a reviewer's
        # terms is the parser's)
        broken = sum(bool(s.anomalies) for s in reading.sentences) / max(1, len(reading.sentences))
        stitched_signs = (reading.repeated_openings or reading.fragment_share
                          or (anomalies and broken >= cfg.stitched_break_ratio * own_share))
        if own_share < cfg.stitched_own_share and stitched_signs:
            problems.append(f"stitched from the feedback's words ({own_share:.0%} of its content words are its own)")
        if problems:
            return False, (f"Not coherent: {'; '.join(problems)}. Write whole sentences; the total is capped at "
                           f"{cfg.cap}.")
        return True, "Reads as connected sentences (a gate: salad and stitched fragments cap the total)."

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
        if not fb.praises and (thanks := self._praise_thanks.search(lower)):
            return -1.0, (f"Thanks the sender for praise ('{thanks.group()}'), but the feedback praises nothing: "
                          "answer what it says.")
        shares = self.sentiment(response)  # VADER reads capitals and punctuation: give it the original text
        empathy = bool(self._empathy.search(lower))
        appreciation = bool(self._appreciation.search(lower))
        cheer = len(self._cheer.findall(lower))
        cheerful = cheer > cfg.max_cheer_markers or shares["pos"] >= cfg.cheerful_pos_share
        if fb.label == "negative":
            score = (0.6 if empathy else 0.2 if appreciation else -0.4) + (-0.8 if cheerful else 0.4)
            if cheerful:
                why = "The feedback is negative but the reply sounds cheerful: drop the exclamations and upbeat words"
                why += " and acknowledge the concern." if not empathy else "."
            elif not empathy:
                why = "The feedback is negative: apologise or show you understand the concern."
            else:
                why = "Apologetic, empathetic tone matches the negative feedback."
        elif fb.label == "positive":
            # An apology is not cold: VADER reads some complaints as positive ("study participation opportunities").
            warm = appreciation or empathy or shares["pos"] >= cfg.warm_pos_share
            warm = warm and shares["neg"] < cfg.neutral_max_share
            score = (0.6 if appreciation or empathy else -0.2) + (0.4 if warm else -0.6)
            why = ("Appreciative tone matches the positive feedback." if score >= 0.9 else
                   "The feedback is positive: thank the person and keep the reply warm.")
        else:
            professional = not cheerful and max(shares["pos"], shares["neg"]) < cfg.neutral_max_share
            score = (0.6 if professional else -0.6) + (0.4 if appreciation or empathy else 0.0)
            why = ("Neutral, professional tone matches the neutral feedback." if professional else
                   "The feedback is neutral: keep a plain professional tone without exclamations or strong emotion.")
        return _clamp(score), why

    def _integrity_score(self, lower: str, n_words: int, own: list[Sentence],
                         fb: FeedbackAnalysis) -> tuple[float, str]:
        """Honesty about the limits of this work: caveats, admissions and checks that are about what the feedback
        raised. The same words in a sentence about research in general ("every study has limitations") are
        boilerplate, as are promises to "take it into account": they cost, they do not earn."""
        cfg = self.config.integrity
        if self._blame.search(lower):  # "it's not our fault" is no admission of "our fault"
            lower = self._blame.sub(" ", lower)
            own = [replace(s, text=self._blame.sub(" ", s.text)) for s in own]
        hits = self._integrity.findall(lower)
        specific: set[str] = set()
        previous: tuple[str, ...] = ()
        for sentence in own:  # own sentences are already about this case (not general, not evasive)
            found = self._integrity.findall(sentence.text.lower())
            if found and sentence.objects:
                props = self._props(sentence)
                found = [f for f in found if not any(p.startswith(f) for p in props)]
            # The point may be named in this sentence or in the one before ("... the offset. We will verify it.")
            if found and any(stem(w, self._stem) in fb.key_stems for w in (*previous, *sentence.words)):
                specific.update(found)
            else:  # "We haven't looked into it yet, so we don't know the cause": on receipt, about this case
                specific.update(f for f in found if f in self._on_receipt)
            previous = sentence.words
        boilerplate = sorted({*(h for h in hits if h not in specific), *self._evasive.findall(lower)})
        if not specific:
            if boilerplate:
                found = ", ".join(map(repr, boilerplate[:3]))
                return cfg.score_boilerplate, (f"Only general caveats or non-commitments ({found}): say what is "
                                               "uncertain or will be checked about the points raised.")
            return cfg.score_none, ("No caveat, admission or check about the points raised (neutral): say what is"
                                    " uncertain, what you got wrong or what you will verify, where it applies.")
        distinct = sorted(specific)
        score = min(len(distinct), cfg.saturate_at) / cfg.saturate_at
        why = f"Honest about the points raised: {', '.join(repr(d) for d in distinct[:4])}"
        density = 100 * len(hits) / max(n_words, 1)
        if len(hits) >= cfg.stuffing_min_hits and density > cfg.max_hits_per_100_words:
            excess = min(1.0, (density - cfg.max_hits_per_100_words) / cfg.max_hits_per_100_words)
            score -= cfg.stuffing_penalty * (1 + excess)
            return _clamp(score), why + f", but {density:.0f} markers per 100 words is keyword stuffing."
        if len(distinct) < cfg.saturate_at:
            return score, why + ": one more concrete caveat or check would make it complete."
        return score, why + ": integrity credit is full (more markers add nothing)."

    def _props(self, sentence: Sentence) -> list[str]:
        """The integrity nouns of a sentence that are the object of a verb no caveat takes ("boil the limitations")."""
        return [noun for noun, verb, agent in sentence.objects
                if noun.startswith(self._framed_nouns)
                and stem(verb, FRAMING_STEM) not in (self._framing_agents if agent else self._framing_verbs)]

    def _done_work(self, reading: Reading, fb: FeedbackAnalysis) -> list[str]:
        """Work the reply reports as done or found, but for a verb the feedback reports as done: "we sent you the
        wrong form" takes up "you sent me the wrong form" (not "please delete my recordings": saying they were
        deleted is the invention). Three letters, so that "sent" meets "send", "fixed" "fix"."""
        return [said for sentence in reading.sentences for verb, said in sentence.claims if verb[:3] not in fb.verbs]

    def _references(self, lower: str, fb: FeedbackAnalysis) -> list[str]:
        """Reference numbers given to the sender's case ("your deletion reference is OH-2021-0457"): opened since the
        feedback arrived, so invented on receipt; not one the feedback has (the sender's participant number)."""
        if not DIGIT.search(lower):
            return []
        return [m.group() for m in self._reference.finditer(lower)
                if len(m.group(1)) >= 3 and DIGIT.search(m.group(1)) and m.group(1) not in fb.identifiers]

    def _in_transit_claims(self, lower: str, fb: FeedbackAnalysis) -> list[str]:
        """A delivery reported as under way ("new cables are in the post", "your reward is already on its way"): sent
        since the feedback arrived, so invented on receipt. Not under a condition earlier in its sentence ("once it is
        in the post"), and not one the feedback itself says is under way (the sender's "it's in the post")."""
        found = []
        for m in self._in_transit.finditer(lower) if "in the " in lower or " way" in lower else ():
            start = max(lower.rfind(c, 0, m.start()) for c in ".!?\n") + 1
            if self._in_transit_if.search(lower, start, m.start()) or m.group(1) in fb.lower:
                continue
            found.append(lower[start : m.end()].strip())
        return found

    def _overselling(self, lower: str, done_work: list[str],
                     quoted: frozenset[str] = frozenset()) -> tuple[float, str]:
        """Hype, settled checks, dismissals, invented work and uncited statistics. `quoted`: the feedback's own
        statistics; one of them quoted back ("a bar totalling 108% can't be correct") is the sender's figure, not a
        claim of the reply."""
        cfg = self.config.overselling
        # "the wording reads as a safety guarantee", "you say it is definitely safe": the sender's reading of a wording
        # quoted back, not the reply's assurance
        hype = [m.group() for m in self._hype.finditer(lower) if m.group() not in self._ordinary
                and not self._reported_wording.search(lower, max(0, m.start() - 80), m.start())]
        hype += [m.group() for m in self._assurance_that.finditer(lower)
                 if not self._hype.search(m.group())]  # "we can assure you that": counted once
        claimed = self._claimed.findall(lower)
        for part in CLAUSE_END.split(lower) if self._checked.search(lower) else ():
            check = self._checked.search(part)  # "we have checked the figures again, and they are correct"
            if check and (verdict := self._verdict.search(part, check.end())):
                if " ".join(check.group().split()[:2]) in done_work:
                    continue  # "we looked at your account and found ...": counted once, as work reported as done
                claimed.append(check.group() + " ... " + verdict.group())
        # "Confirmed: F42 omitted the final council", "we checked: both basses signed"
        claimed += [m.group().strip(" .!?,") for m in self._settled_colon.finditer(lower)]
        dismissed = self._dismissal.findall(lower)
        shifted = self._blame.findall(lower)  # "it's not our fault": counted `blame_shift_hits` times
        dismissed += shifted
        uncited = []
        for m in STATISTIC.finditer(lower) if DIGIT.search(lower) else ():
            if _statistic(m.group()) in quoted:
                continue
            near = lower[max(0, m.start() - cfg.claim_window_chars) : m.end() + cfg.claim_window_chars]
            window = lower[max(0, m.start() - cfg.citation_window_chars) : m.end() + cfg.citation_window_chars]
            if self._claim.search(near) and not self._citation.search(window):
                uncited.append(m.group())
        hits = len(hype) + len(claimed) + len(dismissed) + (cfg.blame_shift_hits - 1) * len(shifted)
        score = _clamp(1.0 - cfg.penalty_per_hit * hits
                       - cfg.uncited_stat_penalty * len(uncited) - cfg.done_work_penalty * len(done_work))
        problems = []
        if hype:
            problems.append(f"remove absolute or hype claims ({', '.join(repr(h) for h in sorted(set(hype))[:4])})")
        if claimed:
            problems.append("a check stated as already settled is an assurance the reply cannot back "
                            f"({', '.join(repr(c) for c in sorted(set(claimed))[:3])})")
        if dismissed:
            problems.append("the sender's point is dismissed without anything shown "
                            f"({', '.join(repr(d) for d in sorted(set(dismissed))[:3])})")
        if done_work:
            problems.append("work reported as done or found is invented: the reply is drafted before anyone has "
                            f"looked ({', '.join(repr(d) for d in done_work[:3])}); say what you will do")
        if uncited:
            problems.append(f"a number backing a claim needs a source ({', '.join(repr(u) for u in uncited[:3])})")
        if not problems:
            return score, ("No hype, absolute assurances, settled-check claims, dismissals, work reported as done or "
                           "uncited statistics.")
        return score, "Overselling: " + "; ".join(problems) + "."

    def _acknowledgment(self, words: list[str], own: list[Sentence], own_share: float,
                        fb: FeedbackAnalysis) -> tuple[float, str]:
        cfg = self.config.acknowledgment
        if not fb.key_stems:
            return 0.0, "The feedback has no specific terms to take up; nothing to check."
        copied = fb.ngrams.intersection(zip(*[words[k:] for k in range(cfg.echo_ngram)], strict=False))
        echo = len(copied) / len(fb.ngrams) if fb.ngrams else 0.0
        actions = [a for sentence in own for a in sentence.actions]
        # "We'll look at the lesson 12 audio": a promised look at the feedback's own point is a commitment
        actions += [f"look at {w}" for sentence in own for w in sentence.looked_at
                    if stem(w, cfg.stem_chars) in fb.key_stems]
        # a short reply in the feedback's words that agrees with the sender and promises something is a restatement,
        # not an echo (an echo retells, "You note that ..."; keyword salad may promise, but agrees with nobody)
        restates = (any(self._agrees.search(s.text.lower()) for s in own)
                    and any(s.actions and PROMISE.intersection(s.words) for s in own))
        min_own = cfg.restatement_min_own_share if restates else cfg.min_own_share
        if echo > cfg.echo_threshold or own_share < min_own:
            return -1.0, (f"The reply repeats the feedback ({echo:.0%} of its phrases copied, {own_share:.0%} of the "
                          "reply's content words its own): respond to the points in your own words.")
        if not actions:
            return -1.0, ("Says nothing the team has done, will do or tells the sender to do: answer the question or "
                          "commit to something concrete about the points raised.")
        said = self._said(own)
        covered = self._taken_up(own, fb, said)
        # Full credit for half of the key terms, or for `full_credit_terms` of them on a long feedback.
        needed = min(cfg.full_credit_coverage * len(fb.key_stems), cfg.full_credit_terms)
        coverage = len(covered) / needed
        score = 2 * min(1.0, coverage) - 1
        missing = [w for s, w in zip(fb.key_stems, fb.key_words, strict=True) if s not in said][:3]
        if coverage >= 1.0:
            return score, f"Takes up the feedback's specific points ({len(covered)} of {len(fb.key_stems)} key terms)."
        return score, (f"Takes up {len(covered)} of {len(fb.key_stems)} key terms of the feedback in its own sentences:"
                       f" address its specific points (e.g. {', '.join(missing)}...).")


    def _said(self, own: list[Sentence]) -> set[str]:
        return {stem(w, self._stem) for sentence in own for w in sentence.words}

    def _taken_up(self, own: list[Sentence], fb: FeedbackAnalysis, said: set[str] | None = None) -> list[str]:
        """The feedback's key terms (stems) that the reply's own sentences take up, by the term or a participle
        that qualified it there."""
        said = self._said(own) if said is None else said
        return [s for s, q in zip(fb.key_stems, fb.qualifiers or [frozenset()] * len(fb.key_stems), strict=True)
                if s in said or q & said]


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
