"""Compliance rules and the prompt-injection guard, compiled from the config's patterns.

Both run on the redacted text: a decision never depends on who wrote the message, and the injection
guard rewrites exactly the text the agent will see.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import regex

from agents.governance.config import InjectionConfig, RuleConfig

FLAGS = regex.IGNORECASE | regex.VERSION0
SENTENCE_END = regex.compile(r"[.!?\n]")


@dataclass(frozen=True)
class CompiledRule:
    config: RuleConfig
    any_of: tuple[regex.Pattern, ...]
    none_of: tuple[regex.Pattern, ...]
    all_of: tuple[tuple[regex.Pattern, ...], ...] = ()

    @classmethod
    def compile(cls, config: RuleConfig) -> CompiledRule:
        return cls(
            config,
            tuple(regex.compile(p, FLAGS) for p in config.any_of),
            tuple(regex.compile(p, FLAGS) for p in config.none_of),
            tuple(tuple(regex.compile(p, FLAGS) for p in group) for group in config.all_of),
        )

    def fires(self, text: str, n_words: int) -> bool:
        if n_words < self.config.min_words:
            return False
        if any(p.search(text) for p in self.none_of):
            return False
        if not all(any(p.search(text) for p in group) for group in self.all_of):
            return False
        if self.config.min_matches == 1:
            return any(p.search(text) for p in self.any_of)
        hits = 0
        for pattern in self.any_of:
            for _ in pattern.finditer(text):
                hits += 1
                if hits >= self.config.min_matches:
                    return True
        return False

    def spans(self, text: str) -> list[tuple[int, int]]:
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

    def evaluate(self, text: str) -> list[FiredRule]:
        """The rules that fire on this text, in config order, with where their patterns matched."""
        n_words = len(text.split())
        return [FiredRule(rule.config, tuple(rule.spans(text))) for rule in self.rules if rule.fires(text, n_words)]


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
    """Finds instructions aimed at the assistant and replaces each whole sentence that carries one."""

    def __init__(self, config: InjectionConfig):
        self.config = config
        self.patterns = [regex.compile(p, FLAGS) for p in config.patterns]

    def neutralise(self, text: str) -> tuple[str, bool]:
        spans = sorted(
            sentence_around(text, m.start(), m.end()) for p in self.patterns for m in p.finditer(text)
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
    """The sentence holding text[start:end]: from after the previous . ! ? or newline to the next one."""
    left = max(text.rfind(mark, 0, start) for mark in ".!?\n") + 1
    while left < start and text[left].isspace():
        left += 1
    found = SENTENCE_END.search(text, end)
    return left, found.end() if found else len(text)
