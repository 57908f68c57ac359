"""PII detection and redaction: Presidio's analyzer finds entities, its anonymizer writes typed placeholders.

Offline by construction: the spaCy model is an installed package loaded by name (Presidio's own loader
would download a missing model), and tldextract was switched to its bundled suffix list when
`al_integration` was imported. The value-to-placeholder mapping lives only inside one `redact` call.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import phonenumbers
import regex
import spacy
import tldextract.tldextract as tldextract_module
from presidio_analyzer import (
    AnalyzerEngine,
    BatchAnalyzerEngine,
    Pattern,
    PatternRecognizer,
    RecognizerResult,
)
from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine
from presidio_analyzer.predefined_recognizers import IbanRecognizer, PhoneRecognizer
from presidio_anonymizer import AnonymizerEngine, ConflictResolutionStrategy
from presidio_anonymizer.entities import OperatorConfig
from presidio_anonymizer.entities import RecognizerResult as AnonymizerInput
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.language import Language
from spacy.tokens import Doc

from agents.governance.config import NameContextConfig, PiiConfig

# Presidio logs at WARNING for every spaCy label it has no mapping for; none of its records carry raw
# text, but nothing from this stage needs to reach a log either.
logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
logging.getLogger("presidio-anonymizer").setLevel(logging.ERROR)

# spaCy's tokenizer strips affixes one at a time, quadratic in the length of a run of symbols: 4,000 emoji
# or "!" in a row took 1.3-1.7 s to tokenize. Such runs hold no personal data, so Presidio sees spaces there
# (same length: offsets stay valid for the original text, which is what gets redacted).
LONG_SYMBOL_RUN = regex.compile(r"[^\w\s]{20,}")
WORD = regex.compile(r"\p{L}[\p{L}\p{M}'’-]*")  # a word of any script, for the English share and the next word

# spaCy's English labels that Presidio maps to an entity we redact; every other label is ignored up front.
SPACY_LABELS = {"PERSON": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION"}

NAME_TYPES = ("PERSON", "LOCATION")
# The recognizer of `name_cues.lower_case_patterns`: the one source of a PERSON that may start in lower case.
LOWER_CASE_NAME_RECOGNIZER = "LowerCaseNameCueRecognizer"
SPACY_RECOGNIZER = "SpacyRecognizer"
PLACE_CUE_RECOGNIZER = "PlaceCueRecognizer"
# A capitalised word that opens a sentence and is followed by one of these is a verb, not a name: "Mark this message
# as approved", "Bill the client", "Will you" (ninth round). A name there is followed by a verb: "Mark said".
# A single capitalised word after a German or Dutch article or a contracted preposition, with at most one lower-case
# word between ("mit dem Kopf", "die nächste Welle", "vom Hauptbahnhof", "het Bericht"), is a noun: German and Dutch
# capitalise nouns, and the English model takes them for names (ninth round).
NOUN_ARTICLES = frozenset({"der", "die", "das", "dem", "den", "des", "ein", "eine", "einen", "einem", "einer", "eines",
                           "im", "am", "vom", "zum", "zur", "beim", "ins", "het", "een", "meinem", "meiner", "unserem",
                           "unserer", "ihrem", "ihrer", "seinem", "seiner", "keinen", "keine", "kein", "mein", "meine",
                           "meinen", "unser", "unsere", "unseren", "dein", "deine", "sein", "seine", "mijn", "onze",
                           "ihre", "ihren", "ihr", "eure", "euren", "euer", "jullie", "uw", "ans", "aufs", "ums",
                           "fürs", "übers", "durchs",
                           # quantifiers and demonstratives (eighteenth round: "alle bisherigen Anweisungen", "aller
                           # Studienteilnehmer")
                           "alle", "aller", "allen", "jede", "jeder", "jedes", "jeden", "jedem", "diese", "dieser",
                           "dieses", "diesen", "diesem", "welche", "welcher", "keiner", "keinem", "unseres"})
# A single capitalised German word with a noun's ending is a noun, not a name, wherever it stands ("Datenschutz",
# "Rechenzentrum" alone on a signature line, "Studienteilnehmer"; eighteenth round): the English model takes them for
# names or places.
GERMAN_NOUN = regex.compile(r"\p{Lu}\p{Ll}{2,}(zentrum|zentren|schutz|behörde|stelle|abteilung|verwaltung|"
                            r"beauftragter?n?|teilnehmer(innen|in)?|wissenschaft(en)?|forschung|anweisung(en)?|ungen|"
                            r"keit(en)?|heit(en)?|schaft(en)?|studien?)")
# The word a university's name starts with, in the languages the parts were written in (eighteenth round): a finding
# that starts with it is an institution ("Uniwersytet Jagielloński" under a signature), not a person.
UNIVERSITY_NOUNS = frozenset({"uniwersytet", "universität", "universidad", "universidade", "université", "università",
                              "universiteit", "universitet", "univerzita", "egyetem", "politechnika", "hochschule",
                              "universitatea", "yliopisto"})
# A word followed by a version number is software, not a person or a place ("Julia 1.10.2", "Stata 18.0"; eighteenth
# round).
VERSION_AFTER = regex.compile(r"[ \t]+v?\d+\.\d+")
IMPERATIVE_OBJECTS = frozenset({"this", "that", "these", "those", "the", "it", "all", "my", "your", "our", "their",
                                "a", "an", "them", "me", "us", "every", "each", "any"})
# Lower-case words a name may start with ("van Gogh", "de la Cruz"); any other lower-case start is not a name.
NAME_PARTICLES = {"van", "von", "de", "der", "den", "da", "das", "dos", "di", "du", "del", "della", "la", "le",
                  "bin", "al", "el", "ter", "ten", "y", "e", "i", "zu", "ibn", "ben", "bint", "af", "av", "op", "het",
                  "des", "binti", "binte", "ap", "ab", "ferch", "verch"}  # "i": Catalan "Jordi Puig i Serra" (tenth
# round); "ap", "ab", "ferch": Welsh "Gwenllian ap Rhys" (twentieth round)
URL_END = set("<>\"'`()[]{}")
# ... and a URL never runs past these: the full-width and ideographic punctuation of CJK text, which has no space
# after it ("...@protonmail.com。" had its "。" widened into a URL finding of its own, h24-038's `<EMAIL_1><URL_1>`;
# Presidio's pattern takes "https://example.org/v2。よろしく" whole).
CJK_PUNCTUATION = regex.compile(r"[。、，．；：！？「」『』（）【】]")
# One word of a name (as in `pii.name_cues.name`): capitalised, any script's letters and marks, O'Connor,
# Dell'Acqua (an elided particle of up to four letters, fifteenth round), Owusu-Ansah. A citation year: "(1979)",
# "(2013a)", ", 2013)".
NAME_WORD = r"(?:\p{Lu}\p{Ll}{0,3}['’])?\p{Lu}[\p{Ll}\p{M}]+(?:-\p{Lu}[\p{Ll}\p{M}]+)*"
YEAR = r"(?:1[5-9]|20)\d{2}[a-z]?"
# A cited surname is never right after one of these ("the Census (2020)").
DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "our", "your", "their", "its", "his", "her",
               "my", "every", "each", "no", "any", "some"}
SENTENCE_START = set(".!?:;\n\"“(—–-")
URL_TRAILING = ".,;:!?"
# What makes a URL finding a link whatever its end: a scheme or "www." (a path too, `is_link`).
URL_SCHEME = regex.compile(r"(?i)((https?|s?ftps?|rsync|git|ssh|svn|s3|gs|smb|nfs|hdfs)://|www\d{0,3}\.)")
# A template's slot inside a link, kept with it: "http://localhost:8888/tree?token=<your-token>" (seventeenth round)
URL_SLOT = regex.compile(r"(?<=[=/])<[\p{L}\p{N}_-]{1,40}>")
URL_QUOTES = "\"'“”‘’«»"
SCHEME_URL_SCORE = 0.6  # Presidio's own score for a URL with a scheme


@dataclass(frozen=True, slots=True)
class Entity:
    """Where personal data was found: type, offsets, score; never the value. The offsets index the text
    given to `govern` (the stage only cuts over-long text at the end and swaps lone surrogates 1:1)."""

    type: str
    start: int
    end: int
    score: float


@Language.component("lowercase_lemmas")
def lowercase_lemmas(doc: Doc) -> Doc:
    """Lower-case forms as lemmas, for Presidio's context words ("phone", "ssn", "call") when the tagger
    and the rule lemmatizer it needs are excluded for speed; spaCy's lemmatizer without POS tags would
    give the same forms, plus a warning on every call."""
    for token in doc:
        token.lemma_ = token.lower_
    return doc


class SpacyModelMissing(RuntimeError):
    """The configured spaCy model is not installed: `make setup` installs it; it is never downloaded."""


class InstalledSpacyNlpEngine(SpacyNlpEngine):
    """Presidio's spaCy engine, loading an installed package (no download fallback) minus unused parts.

    It also tells Presidio to ignore every NER label we do not redact (ORG, DATE, ...), read from the model.
    """

    def __init__(self, model: str, language: str, exclude: list[str], lowercase_lemmas: bool):
        super().__init__(models=[{"lang_code": language, "model_name": model}])
        self._exclude = exclude
        self._lowercase_lemmas = lowercase_lemmas

    def load(self) -> None:
        model = self.models[0]
        try:
            nlp = spacy.load(model["model_name"], exclude=self._exclude)
        except OSError as exc:
            raise SpacyModelMissing(
                f"spaCy model {model['model_name']!r} is not installed (run `make setup`): {exc}"
            ) from None
        if self._lowercase_lemmas:
            nlp.add_pipe("lowercase_lemmas", first=True)
        self.nlp = {model["lang_code"]: nlp}
        self.ner_model_configuration = NerModelConfiguration(
            model_to_presidio_entity_mapping=SPACY_LABELS,
            labels_to_ignore=sorted(set(nlp.get_pipe("ner").labels) - set(SPACY_LABELS)),
        )


class RegionPhoneRecognizer(PhoneRecognizer):
    """National numbers of more regions (tenth round): libphonenumber's VALID matches, at Presidio's score where the
    region's own grouping of the digits is kept and the region is in `exact_grouping` ("20 45 67 89"), else at
    `context_score`, which only a context word near it lifts over the threshold ("tel. 612 345 678"; a count is
    grouped so too). One VALID pass a region, a second only where it found something, and none for a text without a
    run of seven digits once numbers with a country code are blanked: about 75 us a message for eleven regions on the
    dataset and the hand-written set (about 290 us on the dataset without these shortcuts)."""

    DIGIT_RUN = regex.compile(r"\d(?:[ \t().\-/–]{0,2}\d){6}")
    # a number with its country code is found by Presidio's own recognizer (any region parses it): blanked here
    INTERNATIONAL = regex.compile(r"(?<!\d[ \t().\-/–]{0,2})(?:\+|\b00)\d(?:[ \t().\-/–]{0,2}\d)+")

    def __init__(self, *, exact_grouping: frozenset[str], context_score: float, **kwargs):
        super().__init__(name="RegionPhoneRecognizer", **kwargs)
        self.exact_grouping = exact_grouping
        self.context_score = context_score

    def analyze(self, text: str, entities: list[str], nlp_artifacts=None) -> list[RecognizerResult]:
        text = self.INTERNATIONAL.sub(lambda number: " " * len(number.group()), text)
        if not self.DIGIT_RUN.search(text):
            return []
        results = []
        for region in self.supported_regions:
            found = list(phonenumbers.PhoneNumberMatcher(text, region, leniency=1))
            if not found:
                continue
            exact = ({(m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=3)}
                     if region in self.exact_grouping else set())
            for match in found:
                result = self._get_recognizer_result(match, text, region, nlp_artifacts)
                if (match.start, match.end) not in exact:
                    result.score = self.context_score
                results.append(result)
        return results


class InternationalPhoneRecognizer(PhoneRecognizer):
    """A number written with its country code, at libphonenumber's POSSIBLE leniency (round twelve): "+44 7700
    900123" is a UK mobile of the range kept for drama, not VALID to libphonenumber, and a blind writer signed with
    one. Region "ZZ" parses only numbers with "+" ("+1.2.3", "+0.12", "+20 to +25" are none); a text without "+"
    is not read at all."""

    def __init__(self, **kwargs):
        super().__init__(name="InternationalPhoneRecognizer", supported_regions=("ZZ",), leniency=0, **kwargs)

    def analyze(self, text: str, entities: list[str], nlp_artifacts=None) -> list[RecognizerResult]:
        return super().analyze(text, entities, nlp_artifacts) if "+" in text else []


def build_analyzer(config: PiiConfig) -> AnalyzerEngine:
    """Presidio's analyzer with its predefined recognizers plus ours: names and places after a cue, national
    phone formats."""
    analyzer = AnalyzerEngine(
        nlp_engine=InstalledSpacyNlpEngine(
            config.spacy_model, config.language, config.spacy_exclude, config.lowercase_lemmas
        ),
        supported_languages=[config.language],
        default_score_threshold=config.score_threshold,
    )
    if "PHONE_NUMBER" in config.entities:
        # Presidio's own, with the configured regions, and one more for national numbers of other regions (tenth
        # round)
        regions = config.phone_regions
        analyzer.registry.remove_recognizer("PhoneRecognizer")
        analyzer.registry.add_recognizer(PhoneRecognizer(supported_language=config.language,
                                                         supported_regions=tuple(regions.regions)))
        if regions.international_possible:
            analyzer.registry.add_recognizer(InternationalPhoneRecognizer(supported_language=config.language))
        if regions.with_context:
            analyzer.registry.add_recognizer(RegionPhoneRecognizer(
                supported_language=config.language, supported_regions=tuple(regions.with_context),
                exact_grouping=frozenset(regions.exact_grouping), context_score=regions.context_score,
                context=PhoneRecognizer.CONTEXT + regions.context))
    if "IBAN_CODE" in config.entities:
        # Presidio's own runs case-insensitive (the registry's flags), so a full last group of four is followed by a
        # word's first four letters ("LT12 1000 0111 0100 1000 within": "... 1000 with"), the checksum fails on every
        # end it tries, and the number stays raw (h21-085). Its pattern with its own flags, case-sensitive, ends at
        # the digits; the two findings overlap and merge.
        analyzer.registry.add_recognizer(IbanRecognizer(name="CaseSensitiveIbanRecognizer",
                                                        supported_language=config.language,
                                                        regex_flags=regex.MULTILINE | regex.DOTALL))
    if config.name_cues.enabled and "PERSON" in config.entities:
        analyzer.registry.add_recognizer(
            PatternRecognizer(
                supported_entity="PERSON",
                name="NameCueRecognizer",
                patterns=[Pattern("name after cue", p, config.name_cues.score)
                          for p in config.name_cues.expanded()],
                supported_language=config.language,
                # Case matters: a name is capitalised. The cue words carry their own (?i:...) flag.
                global_regex_flags=0,
            )
        )
        if config.name_cues.lower_case_patterns:
            analyzer.registry.add_recognizer(
                PatternRecognizer(
                    supported_entity="PERSON",
                    name=LOWER_CASE_NAME_RECOGNIZER,
                    patterns=[Pattern("lower-case name after cue", p, config.name_cues.score)
                              for p in config.name_cues.lower_case_patterns],
                    supported_language=config.language,
                    global_regex_flags=0,
                )
            )
    if config.place_cues.enabled and config.place_cues.patterns and "LOCATION" in config.entities:
        analyzer.registry.add_recognizer(
            PatternRecognizer(
                supported_entity="LOCATION",
                name=PLACE_CUE_RECOGNIZER,
                patterns=[Pattern("place after cue", p, config.place_cues.score)
                          for p in config.place_cues.expanded(config.name_cues.name)],
                supported_language=config.language,
                global_regex_flags=0,  # a place is capitalised; cue words carry their own (?i:...)
            )
        )
    if config.scheme_urls and "URL" in config.entities:
        # a link with a scheme or "www." whatever its top-level domain (sixteenth round): Presidio's URL pattern
        # lists its top-level domains even after "https://", and ".win", ".click" are not among them
        analyzer.registry.add_recognizer(
            PatternRecognizer(
                supported_entity="URL",
                name="SchemeUrlRecognizer",
                patterns=[Pattern("url with a scheme", p, SCHEME_URL_SCORE) for p in config.scheme_urls],
                supported_language=config.language,
            )
        )
    if config.national_phones.patterns and "PHONE_NUMBER" in config.entities:
        analyzer.registry.add_recognizer(
            PatternRecognizer(
                supported_entity="PHONE_NUMBER",
                name="NationalPhoneRecognizer",
                patterns=[Pattern("national phone", p, score) for p, score in config.national_phones.patterns],
                context=config.national_phones.context,
                supported_language=config.language,
            )
        )
    return analyzer


def analysis_view(text: str) -> str:
    """The text Presidio analyses: long symbol runs blanked, every offset unchanged."""
    return LONG_SYMBOL_RUN.sub(lambda run: " " * len(run.group()), text)


QUOTE_MARKS = "„“”«»‚‘\""  # inside a finding: the title of a study or a tool, not a person


class NameFilter:
    """Drops PERSON / LOCATION findings that cannot be a name: no letter at all (an emoji), a lower-case start
    that is not a particle ("deine Anweisungen") or a lower-case word inside that is not one ("Hinweise zur
    Gewichtung"), or only words from `not_names` (software, brands, greetings),
    short all-capital tokens (GDPR, AI, SPSS) and tokens with digits (Q12). spaCy's small model tags such words
    as people or places; "Chrome" is a browser."""

    def __init__(self, not_names: list[str], title_nouns: list[str] = (), english_words: list[str] = (),
                 min_english_share: float = 0.0):
        self.not_names = {word.casefold() for word in not_names}
        self.title_nouns = {word.casefold() for word in title_nouns}
        self.english_words = {word.casefold() for word in english_words}
        self.min_english_share = min_english_share

    def reads_as_english(self, text: str) -> bool:
        """Whether the English model reads its own language here: at least `min_english_share` of the text's words
        (of five or more) are English function words. In a text of another language the model takes a capitalised
        word that opens a sentence for a name ("Sejujurnya saya", "Varför fick", "Честно говоря": sixteenth round)."""
        words = WORD.findall(text.casefold())
        if not self.english_words or len(words) < 5:
            return True
        return sum(word in self.english_words for word in words) >= self.min_english_share * len(words)

    def keep(self, text: str, finding: RecognizerResult, english: bool = True) -> bool:
        if finding.entity_type not in NAME_TYPES:
            return True
        value = text[finding.start:finding.end]
        letters = [ch for ch in value if ch.isalpha()]
        if not letters:
            return False
        words = value.split()
        recognizer = recognizer_of(finding)
        if recognizer == PLACE_CUE_RECOGNIZER and any(ch.isdigit() for ch in value):
            return True  # a street address keeps its lower-case parts: "14 rue des Lilas", "2. th." (tenth round)
        if recognizer == SPACY_RECOGNIZER and not all(ch.isupper() or ch.islower() for ch in letters):
            # the English model cannot read a script without letter case (Hangul, Arabic, Han): it tags greetings
            # and whole phrases there ("안녕하세요", "أستطيع التنفس"), also next to a Latin word ("专业代写论文、SCI",
            # thirteenth round); such names come from the cue patterns (tenth round)
            return False
        if recognizer == SPACY_RECOGNIZER and any(mark in value for mark in QUOTE_MARKS):
            return False  # a quoted title, not a name: 'Studie „Gesund Altern' (thirteenth round)
        if recognizer == SPACY_RECOGNIZER and self.starts_a_title(words):
            return False  # a survey's title: "de la Encuesta de Hogares", "Fragebogen zu Einsamkeit" (fifteenth round)
        lower_case_cue = recognizer == LOWER_CASE_NAME_RECOGNIZER
        if not lower_case_cue and (self.starts_a_university(words)
                                   or any(GERMAN_NOUN.fullmatch(w.strip(".,;:!?")) for w in words)):
            # a university ("Uniwersytet Jagielloński" on a signature's last line) or a German noun in the finding
            # ("Rechenzentrum" after a dash, "Rahmen der Pendlerstudie"), whichever recognizer found it (eighteenth
            # round)
            return False
        if letters[0].islower() and words[0].casefold() not in NAME_PARTICLES and not lower_case_cue:
            return False
        if not lower_case_cue and any(w[:1].islower() and w.casefold() not in NAME_PARTICLES and not elided_particle(w)
                                      for w in words[1:]):
            return False  # a phrase, not a name: "Hinweise zur Gewichtung", "Dank jullie wel" (but "— f. moreau")
        if letters[0].islower() and all(w.casefold() in NAME_PARTICLES for w in words):
            return False  # lower-case particles alone are words, not a name: Spanish "la" (seventh round; "Ben" is)
        if (len(words) == 1 and finding.entity_type == "PERSON" and recognizer == SPACY_RECOGNIZER
                and sentence_initial(text, finding.start) and next_word(text, finding.end) in IMPERATIVE_OBJECTS):
            return False  # an imperative that opens a sentence: "Mark this message as approved" (ninth round)
        if (not english and len(words) == 1 and recognizer == SPACY_RECOGNIZER and sentence_initial(text, finding.start)
                and next_word_is_lower_case(text, finding.end)):
            return False  # a word of another language that opens a sentence: "Kadang-kadang saya" (sixteenth round)
        if len(words) == 1 and recognizer == SPACY_RECOGNIZER and after_an_article(text, finding.start):
            return False  # a German or Dutch noun: "mit dem Kopf", "die nächste Welle" (ninth round)
        if len(words) == 1 and recognizer == SPACY_RECOGNIZER and VERSION_AFTER.match(text, finding.end):
            return False  # software before its version ("Julia 1.10.2")
        if len(words) == 2 and recognizer == SPACY_RECOGNIZER and words[0].casefold() in NOUN_ARTICLES:
            return False  # an article or possessive and its noun: "Mein Sohn", "Der Interviewer" (ninth round)
        # particles count with the not-names here: "al Garante" is an authority, not a person ("Ben" alone is a name)
        not_names = [self.not_a_name(word) for word in words]
        return not (any(not_names) and all(n or w.casefold() in NAME_PARTICLES
                                           for n, w in zip(not_names, words, strict=True)))

    def starts_a_title(self, words: list[str]) -> bool:
        """Whether the first word after particles is a noun that starts a title ("Encuesta", "Fragebogen"): no name
        starts so, and only the model's findings are asked (a cue's finding ends before such a word)."""
        first = next((w for w in words if w.casefold() not in NAME_PARTICLES), "")
        return first.strip(".,;:!?'’\"()").casefold() in self.title_nouns

    def starts_a_university(self, words: list[str]) -> bool:
        return bool(words) and words[0].strip(".,;:!?'’\"()").casefold() in UNIVERSITY_NOUNS

    def not_a_name(self, word: str) -> bool:
        bare = word.strip(".,;:!?¡¿'’\"()[]")
        if "/" in bare.strip("/"):  # titles joined by a slash: "Dr./Prof" (fifteenth round)
            return all(self.not_a_name(part) for part in bare.split("/") if part)
        letters = [ch for ch in bare if ch.isalpha()]
        return (not letters or bare.casefold() in self.not_names or any(ch.isdigit() for ch in bare)
                or (bool(letters) and len(letters) <= 4 and all(ch.isupper() for ch in letters)))


def elided_particle(word: str) -> bool:
    """A name word after an elided lower-case particle: "d'Auvergne", "l'Isle" (twentieth round)."""
    return len(word) > 2 and word[0] in "dl" and word[1] in "'’" and word[2].isupper()


def next_word(text: str, at: int) -> str:
    """The lower-cased word after `at` on the same line ("" if none)."""
    following = text[at:at + 20].split("\n", 1)[0].split(maxsplit=1)
    return following[0].casefold() if following else ""


def next_word_is_lower_case(text: str, at: int) -> bool:
    """Whether the next word after `at` on the same line, past commas and dashes, starts with a lower-case letter."""
    following = WORD.search(text[at:at + 40].split("\n", 1)[0])
    return following is not None and following.group()[0].islower()


def after_an_article(text: str, at: int) -> bool:
    """Whether the word at `at` follows a German or Dutch article, directly or after one lower-case word."""
    before = text[max(0, at - 40):at].split()
    if before and before[-1] in NOUN_ARTICLES:
        return True
    return len(before) >= 2 and before[-1].isalpha() and before[-1].islower() and before[-2] in NOUN_ARTICLES


def sentence_initial(text: str, at: int) -> bool:
    """Whether the word at `at` starts the text, a sentence, a line, a quote or a bracket."""
    before = text[:at].rstrip(" \t")
    return not before or before[-1] in SENTENCE_START


class NameContext:
    """Names found from their neighbours after Presidio (`pii.name_context`): a capitalised word coordinated
    with a PERSON ("As Kahneman and Tversky would point out": spaCy finds Kahneman only) and a surname in a
    citation ("Heckman (1979)", "Imbens et al.", "(Manski, 2013)"). A candidate is dropped when a word of it
    is a stop word or not a name (`NameFilter`: software, brands, all-capital tokens), or a number follows it
    ("Maria and Table 3"); a cited word after a determiner ("the Census (2020)") or after a capitalised word
    mid-sentence ("Labour Force Survey (2019)") is not a surname."""

    def __init__(self, config: NameContextConfig, names: NameFilter):
        self.config = config
        self.names = names
        joins = "|".join(regex.escape(word) for word in config.connectors)
        pair = rf"{NAME_WORD}(?:[ ]{NAME_WORD})?"  # up to two words: "Amos Tversky"
        trio = rf"{NAME_WORD}(?:[ ]{NAME_WORD}){{0,2}}"  # after a connector, up to three: "José María Villanueva"
        self.after = regex.compile(rf"[ ]+(?:{joins})[ ]+({trio})(?![\p{{L}}\p{{M}}'’-])(?![ ]*\d)")
        self.before = regex.compile(rf"(?<![\p{{L}}\p{{M}}'’-])({pair})[ ]+(?:{joins})[ ]+\Z")
        self.cited = regex.compile(
            rf"(?<![\p{{L}}\p{{M}}'’-])({NAME_WORD})(?=(?:['’]s)?(?:[ ]+et[ ]+al\b|[ ]*\([ ]*{YEAR}[ ]*[);,]"
            rf"|[ ]*,[ ]*{YEAR}[ ]*[);]))")

    def extend(self, text: str, findings: list[RecognizerResult]) -> list[RecognizerResult]:
        """New PERSON findings: cited surnames, then names coordinated with a PERSON (chains included)."""
        taken = [(f.start, f.end) for f in findings if f.entity_type == "PERSON"]
        new: list[RecognizerResult] = []

        def add(start: int, end: int, score: float) -> RecognizerResult | None:
            if any(start < e and s < end for s, e in taken) or not self._a_name(text[start:end]):
                return None
            taken.append((start, end))
            found = RecognizerResult("PERSON", start, end, score)
            new.append(found)
            return found

        if self.config.citations:
            for match in self.cited.finditer(text):
                if self._may_be_cited(text, match.start(1)):
                    add(match.start(1), match.end(1), 0.85)
        if self.config.coordination:
            seeds = [f for f in findings if f.entity_type == "PERSON"] + new
            for _ in range(4):  # "Smith and Jones and Brown": a new name is a seed for the next round
                grown = []
                for seed in seeds:
                    if (after := self.after.match(text, seed.end)) is not None:
                        grown.append(add(after.start(1), after.end(1), seed.score))
                    if (before := self.before.search(text, max(0, seed.start - 80), seed.start)) is not None:
                        start, end = before.span(1)
                        if " " in text[start:end] and sentence_initial(text, start):
                            start = text.index(" ", start) + 1  # "As Kahneman and": the first word opens the sentence
                        grown.append(add(start, end, seed.score))
                seeds = [f for f in grown if f is not None]
                if not seeds:
                    break
        return new

    def _a_name(self, value: str) -> bool:
        return all(word.casefold() not in STOP_WORDS and not self.names.not_a_name(word) for word in value.split())

    def _may_be_cited(self, text: str, at: int) -> bool:
        before = text[:at].rstrip()
        word_start = max(before.rfind(" "), before.rfind("\n"), before.rfind("\t")) + 1
        word = before[word_start:].strip("(\"'“")
        if not word:  # the text's first word, or "(Manski, 2013)"
            return True
        if word.casefold() in DETERMINERS:
            return False
        return not (word[0].isupper() and not sentence_initial(text, word_start))


def one_line(text: str, finding: RecognizerResult) -> RecognizerResult:
    """A PERSON / LOCATION finding cut to its first line with a letter: a name never spans a line break, but
    spaCy's small model tags signature lines like "Cork\n+353 21 ..." as one PERSON, reaching into the phone."""
    if finding.entity_type not in NAME_TYPES or "\n" not in text[finding.start:finding.end]:
        return finding
    at = finding.start
    for line in text[finding.start:finding.end].split("\n"):
        if any(ch.isalpha() for ch in line) and line.strip():
            start = at + len(line) - len(line.lstrip())
            return RecognizerResult(finding.entity_type, start, at + len(line.rstrip()), finding.score,
                                    finding.analysis_explanation, finding.recognition_metadata)
        at += len(line) + 1
    return finding


def recognizer_of(finding: RecognizerResult) -> str | None:
    return (finding.recognition_metadata or {}).get(RecognizerResult.RECOGNIZER_NAME_KEY)


def without_address_fragments(findings: list[RecognizerResult]) -> list[RecognizerResult]:
    """A spaCy name or place that overlaps a street address found by a place cue is a piece of it or runs past
    its end ("København N. Kan" over "Nørrebrogade 41, 2. th., København N"): the address wins whole, and the
    overlap would otherwise be trimmed to a fragment (". Kan") and redacted on its own (tenth round)."""
    addresses = [(f.start, f.end) for f in findings if recognizer_of(f) == PLACE_CUE_RECOGNIZER]
    if not addresses:
        return findings
    return [f for f in findings if recognizer_of(f) != SPACY_RECOGNIZER
            or not any(f.start < end and start < f.end for start, end in addresses)]


def exact_url(text: str, finding: RecognizerResult) -> RecognizerResult:
    """A URL finding widened to its whole token and without trailing punctuation. Presidio's URL pattern stops
    at the first top-level domain its list matches (".sh" of ".shop") and keeps a sentence's full stop, and runs on
    through CJK text after it."""
    if finding.entity_type != "URL":
        return finding
    end = finding.end
    while end < len(text) and not text[end].isspace():
        if text[end] in URL_END:
            slot = URL_SLOT.match(text, end)
            if slot is None:
                break
            end = slot.end()
            continue
        end += 1
    cut = CJK_PUNCTUATION.search(text, finding.start, end)
    if cut is not None and cut.start() > finding.start:
        end = cut.start()
    while end > finding.start + 1 and text[end - 1] in URL_TRAILING:
        end -= 1
    if end == finding.end:
        return finding
    return RecognizerResult(finding.entity_type, finding.start, end, finding.score, finding.analysis_explanation,
                            finding.recognition_metadata)


def is_link(text: str, finding: RecognizerResult, file_extensions: frozenset[str]) -> bool:
    """Whether a URL finding (after `exact_url`) is a link rather than a dotted file or module name. One with a
    scheme, "www." or a path always is. Without them, its host must end in a public suffix (tldextract's bundled list,
    offline since `al_integration` was imported): Presidio's pattern matches a top-level domain as a prefix of a longer
    word (".co" of "distutils.core", ".se" of "set.seed", ".fr" of "data.frame") and `exact_url` then widens it to the
    token; and a bare name ending in a top-level domain that is also a file extension ("setup.py", "build.sh",
    "README.md", Stata's "clean.do") is a file (fifteenth round: h11-025, a bug report full of file names, had been
    rejected as "made mostly of links")."""
    if finding.entity_type != "URL":
        return True
    value = text[finding.start:finding.end].strip(URL_QUOTES)
    if URL_SCHEME.match(value) or "/" in value.strip("/"):
        return True  # a scheme, "www." or a path: a link whatever its domain ("shop.example.travel/deal")
    host = regex.split(r"[:?#]", value, maxsplit=1)[0].rstrip(".")
    suffix = tldextract_module.TLD_EXTRACTOR(host).suffix.casefold()  # looked up now: the offline extractor
    return bool(suffix) and suffix not in file_extensions


def repeated_mentions(text: str, findings: list[RecognizerResult]) -> list[RecognizerResult]:
    """Every other mention of a value found once, so a name the NER caught in one sentence but not the
    next ("Jane Doe ... Doe said") is still redacted. Names also contribute their single words.

    Uses a Presidio deny-list recognizer per entity type, scored like the finding it extends, built only
    when a value occurs outside the spans already found (rare, and compiling its regex is not free).
    """
    spans = [(f.start, f.end) for f in findings]
    extra: list[RecognizerResult] = []
    for entity_type in {f.entity_type for f in findings}:
        of_type = [f for f in findings if f.entity_type == entity_type]
        values = {text[f.start:f.end] for f in of_type}
        if entity_type == "PERSON":
            values |= {word for value in values for word in value.split()
                       if len(word) >= 3 and word[0].isupper()}
        repeated = [value for value in values if occurs_outside(text, value, spans)]
        if not repeated:
            continue
        recognizer = PatternRecognizer(
            supported_entity=entity_type,
            name="RepeatedMentionRecognizer",
            deny_list=sorted(repeated, key=len, reverse=True),  # longest first: "Jane Doe" before "Jane"
            deny_list_score=min(f.score for f in of_type),
            global_regex_flags=0,  # case-sensitive: the name "Will" must not take every "will" with it
        )
        extra += recognizer.analyze(text, [entity_type])
    return extra


def occurs_outside(text: str, value: str, spans: list[tuple[int, int]]) -> bool:
    at = text.find(value)
    while at != -1:
        if not any(start <= at and at + len(value) <= end for start, end in spans):
            return True
        at = text.find(value, at + 1)
    return False


class PiiRedactor:
    """Finds PII with Presidio and replaces each value with `<LABEL_n>`, consistent within one message."""

    def __init__(self, config: PiiConfig):
        self.config = config
        self.analyzer = build_analyzer(config)
        self.batch_analyzer = BatchAnalyzerEngine(self.analyzer)
        self.anonymizer = AnonymizerEngine()
        self.names = NameFilter(config.not_names, config.title_nouns, config.english_words, config.min_english_share)
        self.file_extensions = frozenset(ext.casefold() for ext in config.file_extensions)
        self.context = NameContext(config.name_context, self.names)

    def analyze(self, text: str) -> list[RecognizerResult]:
        text = analysis_view(text)
        findings = self.analyzer.analyze(
            text, language=self.config.language, entities=self.config.entities,
            score_threshold=self.config.score_threshold,
        )
        return self._complete(text, findings)

    def _complete(self, text: str, findings: list[RecognizerResult]) -> list[RecognizerResult]:
        """Presidio's findings with exact URL ends, without what cannot be a name, plus names found from their
        neighbours (coordinated, cited), plus repeated mentions."""
        findings = [exact_url(text, one_line(text, f)) for f in findings]
        findings = [f for f in findings if is_link(text, f, self.file_extensions)]
        english = self.names.reads_as_english(text)
        findings = [f for f in findings if self.names.keep(text, f, english)]
        findings = without_address_fragments(findings)
        findings += self.context.extend(text, findings)
        return findings + repeated_mentions(text, findings)

    def analyze_many(self, texts: list[str]) -> list[list[RecognizerResult]]:
        """One `nlp.pipe` pass over all texts (spaCy batches the tensors), then the recognizers per text."""
        texts = [analysis_view(text) for text in texts]
        batch = self.batch_analyzer.analyze_iterator(
            texts, language=self.config.language, batch_size=self.config.batch_size,
            entities=self.config.entities, score_threshold=self.config.score_threshold,
        )
        return [self._complete(text, found) for text, found in zip(texts, batch, strict=True)]

    def redact(self, text: str, findings: Iterable[RecognizerResult]) -> tuple[str, list[Entity]]:
        """Replace every finding with its typed placeholder; return the new text and the entities found.

        The anonymizer resolves overlaps first (e.g. a URL inside an email) with a `keep` pass, so that
        placeholders can be numbered in reading order; the second pass writes them.
        """
        findings = [AnonymizerInput(r.entity_type, r.start, r.end, r.score) for r in findings]
        if not findings:
            return text, []
        # No merging of same-type neighbours: three URLs in a row are three values, not one span. Partial
        # overlaps of different types are trimmed (the higher score keeps its span): left in, the `keep` pass
        # writes the overlap twice and returns spans past the end of the text.
        resolved = self.anonymizer.anonymize(text, findings, operators={"DEFAULT": OperatorConfig("keep")},
                                             conflict_resolution=ConflictResolutionStrategy.REMOVE_INTERSECTIONS,
                                             merge_entities_with_spaces=False)
        spans = sorted(resolved.items, key=lambda item: item.start)

        placeholders: dict[tuple[str, str], str] = {}  # (type, value) -> placeholder; dropped on return
        counts: dict[str, int] = {}
        for span in spans:
            key = (span.entity_type, text[span.start:span.end].casefold())
            if key not in placeholders:
                label = self.config.label(span.entity_type)
                counts[label] = counts.get(label, 0) + 1
                placeholders[key] = f"<{label}_{counts[label]}>"

        def placeholder_for(entity_type: str):
            return lambda value: placeholders[(entity_type, value.casefold())]

        types = {span.entity_type for span in spans}
        operators = {t: OperatorConfig("custom", {"lambda": placeholder_for(t)}) for t in types}
        redacted = self.anonymizer.anonymize(
            text,
            [AnonymizerInput(s.entity_type, s.start, s.end, s.score) for s in spans],
            operators=operators,
            merge_entities_with_spaces=False,
        )
        entities = [Entity(s.entity_type, s.start, s.end, round(float(s.score), 4)) for s in spans]
        return redacted.text, entities
