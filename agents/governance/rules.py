"""Compliance rules and the prompt-injection guard, compiled from the config's patterns.

Both run on the redacted text: a decision never depends on who wrote the message, and the injection
guard rewrites exactly the text the agent will see.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import regex

from agents.governance.config import InjectionConfig, RuleConfig
from agents.governance.literals import LiteralIndex, caseless_ascii_literals, required_literals

FLAGS = regex.IGNORECASE | regex.VERSION0
SENTENCE_MARKS = ".!?\n。！？"  # the full stops of Chinese and Japanese end a sentence with no space after them
SENTENCE_END = regex.compile(f"[{SENTENCE_MARKS}]")
ESCAPE = regex.compile(r"\\.")
READS_CASE = regex.compile(r"\p{Lu}|\(\?[a-zA-Z]*-[a-zA-Z]*i")  # a capital letter of its own, or (?-i: ...)


class RuleText:
    """A message as the rules read it: the text, and its lower case when that has the same offsets (almost always;
    "İ" lower-cases to two characters), and which of the rules' required literals the lower case holds (None: not
    known, every pattern is searched)."""

    __slots__ = ("text", "lower", "present", "ascii")

    def __init__(self, text: str, literals: LiteralIndex | None = None):
        self.text = text
        lower = text.lower()
        self.lower = lower if len(lower) == len(text) else None
        self.present = literals.present(self.lower) if literals is not None and self.lower is not None else None
        self.ascii = text.isascii()


@dataclass(frozen=True)
class RulePattern:
    """One rule pattern, matched case-insensitively. A pattern that does not read case itself runs case-sensitively
    over the lower-cased text, where regex can skip ahead to its literals (the rules ran ~25% faster, with the same
    spans on every text of the dataset and the hand-written set); one that does (a capital letter, \\p{Lu}, an
    inline (?-i:...)), and any text whose lower case has other offsets, is matched with IGNORECASE as it is.

    Neither is searched on a text that lacks every literal it needs (agents/governance/literals.py): `literals` for
    the folded pattern on the lower case, `caseless` for the IGNORECASE one on an ASCII text's lower case."""

    plain: regex.Pattern
    folded: regex.Pattern | None
    literals: frozenset[str] | None = None
    caseless: frozenset[str] | None = None

    @classmethod
    def compile(cls, pattern: str) -> RulePattern:
        reads_case = READS_CASE.search(ESCAPE.sub("", pattern)) is not None
        if reads_case:
            return cls(regex.compile(pattern, FLAGS), None, caseless=caseless_ascii_literals(pattern))
        return cls(regex.compile(pattern, FLAGS), regex.compile(pattern, regex.VERSION0), required_literals(pattern))

    def hopeless(self, text: RuleText) -> bool:
        """Whether the text lacks every literal the pattern needs on the path it would take (so it cannot match)."""
        if text.present is None:
            return False
        if self.folded is not None and text.lower is not None:
            return self.literals is not None and self.literals.isdisjoint(text.present)
        return text.ascii and self.caseless is not None and self.caseless.isdisjoint(text.present)

    def search(self, text: RuleText) -> regex.Match | None:
        if self.hopeless(text):
            return None
        if self.folded is not None and text.lower is not None:
            return self.folded.search(text.lower)
        return self.plain.search(text.text)

    def finditer(self, text: RuleText) -> Iterable[regex.Match]:
        if self.hopeless(text):
            return ()
        if self.folded is not None and text.lower is not None:
            return self.folded.finditer(text.lower)
        return self.plain.finditer(text.text)


@dataclass(frozen=True)
class CompiledRule:
    config: RuleConfig
    any_of: tuple[RulePattern, ...]
    none_of: tuple[RulePattern, ...]
    all_of: tuple[tuple[RulePattern, ...], ...] = ()

    @classmethod
    def compile(cls, config: RuleConfig) -> CompiledRule:
        return cls(
            config,
            tuple(RulePattern.compile(p) for p in config.any_of),
            tuple(RulePattern.compile(p) for p in config.none_of),
            tuple(tuple(RulePattern.compile(p) for p in group) for group in config.all_of),
        )

    def patterns(self) -> tuple[RulePattern, ...]:
        return (*self.any_of, *self.none_of, *(p for group in self.all_of for p in group))

    def fires(self, text: RuleText, n_words: int) -> bool:
        """`any_of` first: most rules do not fire on a message, so their `none_of` and `all_of` are never searched."""
        if n_words < self.config.min_words or not self._any_of_matches(text):
            return False
        if any(p.search(text) for p in self.none_of):
            return False
        return all(any(p.search(text) for p in group) for group in self.all_of)

    def _any_of_matches(self, text: RuleText) -> bool:
        if self.config.min_matches == 1:
            return any(p.search(text) for p in self.any_of)
        hits = 0
        for pattern in self.any_of:
            for _ in pattern.finditer(text):
                hits += 1
                if hits >= self.config.min_matches:
                    return True
        return False

    def spans(self, text: RuleText) -> list[tuple[int, int]]:
        """Where the `any_of` patterns match: the evidence, cut out when asking what else the message says."""
        return [m.span() for p in (*self.any_of, *(p for group in self.all_of for p in group))
                for m in p.finditer(text)]


@dataclass(frozen=True)
class FiredRule:
    config: RuleConfig
    spans: tuple[tuple[int, int], ...]


class ComplianceRules:
    def __init__(self, rules: list[RuleConfig]):
        self.rules = [CompiledRule.compile(rule) for rule in rules]
        self.literals = LiteralIndex({literal for rule in self.rules for pattern in rule.patterns()
                                      for literal in (*(pattern.literals or ()), *(pattern.caseless or ()))})

    def evaluate(self, text: str) -> list[FiredRule]:
        """The rules that fire on this text, in config order, with where their patterns matched. A pattern whose
        required literals are all absent from the text is not searched (agents/governance/literals.py)."""
        n_words, view = len(text.split()), RuleText(text, self.literals)
        return [FiredRule(rule.config, tuple(rule.spans(view))) for rule in self.rules if rule.fires(view, n_words)]


def without_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with each span replaced by a space."""
    parts, cursor = [], 0
    for start, end in sorted(spans):
        if start >= cursor:
            parts.append(text[cursor:start])
        cursor = max(cursor, end)
        parts.append(" ")
    parts.append(text[cursor:])
    return "".join(parts)


class InjectionGuard:
    """Finds instructions aimed at the assistant and replaces each whole sentence that carries one. On an ASCII text
    (its lower case), a pattern is not searched when none of its required literals is there (as for the rules)."""

    def __init__(self, config: InjectionConfig):
        self.config = config
        self.patterns = [regex.compile(p, FLAGS) for p in config.patterns]
        self.caseless = [caseless_ascii_literals(p) for p in config.patterns]
        self.literals = LiteralIndex({literal for found in self.caseless for literal in found or ()})

    def searched(self, text: str) -> list[regex.Pattern]:
        """The patterns that may match `text`: all of them, or on an ASCII text those with a literal of theirs in it."""
        if not text.isascii():
            return self.patterns
        present = self.literals.present(text.lower())
        return [p for p, found in zip(self.patterns, self.caseless, strict=True)
                if found is None or not found.isdisjoint(present)]

    def neutralise(self, text: str) -> tuple[str, bool]:
        spans = sorted(
            sentence_around(text, m.start(), m.end()) for p in self.searched(text) for m in p.finditer(text)
        )
        if not spans:
            return text, False
        merged: list[list[int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        parts, cursor = [], 0
        for start, end in merged:
            parts += [text[cursor:start], self.config.replacement]
            cursor = end
        parts.append(text[cursor:])
        return "".join(parts), True


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence holding text[start:end]: from after the previous . ! ? 。 ！ ？ or newline to the next one."""
    left = max(text.rfind(mark, 0, start) for mark in SENTENCE_MARKS) + 1
    while left < start and text[left].isspace():
        left += 1
    found = SENTENCE_END.search(text, end)
    return left, found.end() if found else len(text)
