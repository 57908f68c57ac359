"""Required literals of a rule pattern: a set of strings one of which every match of the pattern contains.

A text holding none of a pattern's literals cannot match it, so the rules skip that pattern's search: the same
decisions, found faster (round fourteen: the rules ran 267 regex searches a message, most of them hopeless).

`required_literals(pattern)` reads the pattern as the case-sensitive `regex` (VERSION0) pattern it is compiled to for
lower-cased text and returns the literals, or None when it cannot say (syntax it does not know, or a pattern that can
match without any literal). It is conservative by construction: anything it cannot read exactly is "any string"
(lookarounds, classes, `.`, backreferences, optional parts), so the set is always necessary, never sufficient.
Inline flags, atomic groups, fuzzy matching, octal escapes and the like make it give up on the whole pattern.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import product

import regex

MAX_SET = 32  # strings in one exact set (a product of parts); beyond it, a part counts as "any string"
MAX_LITERALS = 512  # strings in the literal set of an alternation (the branches' literals together)
ZERO_WIDTH_ESCAPES = set("bBAZzGmM")
CLASS_ESCAPES = set("dDwWsShHX")  # \h: regex's horizontal space
CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


class Unreadable(ValueError):
    """Syntax this reader does not model: the pattern gets no literals (it is always searched)."""


@dataclass(frozen=True, slots=True)
class Part:
    """What one piece of a pattern can match: `exact`, every string it can match, when few; `required`, strings one
    of which every match contains (None: no such set is known)."""

    exact: frozenset[str] | None
    required: frozenset[str] | None


ANY = Part(None, None)
EMPTY = Part(frozenset({""}), None)


def better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more selective literal set: longer shortest string first, then fewer strings."""
    if a is None or "" in a:
        return None if b is None or "" in b else b
    if b is None or "" in b:
        return a
    return max(a, b, key=lambda s: (min(map(len, s)), -len(s)))


def concat_sets(a: frozenset[str], b: frozenset[str]) -> frozenset[str] | None:
    if len(a) * len(b) > MAX_SET:
        return None
    return frozenset(x + y for x, y in product(a, b))


def sequence(parts: list[Part]) -> Part:
    """A concatenation: the best of each part's literals and of the exact strings of each run of exact parts."""
    best: frozenset[str] | None = None
    run: frozenset[str] | None = frozenset({""})
    exact: frozenset[str] | None = frozenset({""})
    for part in parts:
        best = better(best, part.required)
        if part.exact is None:
            run = frozenset({""})
            exact = None
            continue
        joined = concat_sets(run, part.exact)
        run = joined if joined is not None else part.exact  # too many: the run starts again at this part
        best = better(best, run)
        exact = concat_sets(exact, part.exact) if exact is not None else None
    return Part(exact, better(best, exact))


def alternation(branches: list[Part]) -> Part:
    exact: frozenset[str] | None = frozenset().union(*(b.exact for b in branches)) \
        if all(b.exact is not None for b in branches) else None
    if exact is not None and len(exact) > MAX_SET:
        exact = None
    wanted = [better(b.required, b.exact) for b in branches]
    required = None if any(w is None for w in wanted) else frozenset().union(*wanted)
    if required is not None and len(required) > MAX_LITERALS:
        required = None
    return Part(exact, better(required, exact))


def repeat(part: Part, low: int, high: int | None) -> Part:
    if low == 0:
        if high == 1 and part.exact is not None:  # "x?": the exact set plus the empty string
            return Part(part.exact | {""}, None)
        return ANY
    if high == low and part.exact is not None:
        exact: frozenset[str] | None = frozenset({""})
        for _ in range(low):
            exact = concat_sets(exact, part.exact) if exact is not None else None
        if exact is not None:
            return Part(exact, better(part.required, exact))
    return Part(None, better(part.required, part.exact))


class Reader:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0

    def peek(self, k: int = 0) -> str:
        return self.p[self.i + k] if self.i + k < len(self.p) else ""

    def read(self) -> Part:
        part = self.alternation()
        if self.i != len(self.p):
            raise Unreadable(f"unbalanced ')' at {self.i}")
        return part

    def alternation(self) -> Part:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else alternation(branches)

    def sequence(self) -> Part:
        parts = []
        while self.peek() not in ("", "|", ")"):
            parts.append(self.quantified(self.atom()))
        return sequence(parts)

    def quantified(self, part: Part) -> Part:
        while True:
            ch = self.peek()
            if ch in ("*", "+", "?"):
                self.i += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
            elif ch == "{":
                end = self.p.find("}", self.i)
                body = self.p[self.i + 1:end] if end != -1 else ""
                low_s, _, high_s = body.partition(",")
                if end == -1 or not body or not (low_s.isdigit() or not low_s) \
                        or not (high_s.isdigit() or not high_s) or (not low_s and not high_s):
                    raise Unreadable(f"'{{' that is not a plain repeat at {self.i}")
                low = int(low_s) if low_s else 0
                high = (int(high_s) if high_s else None) if "," in body else low
                self.i = end + 1
            else:
                return part
            if self.peek() in ("?", "+"):  # lazy or possessive: the same strings
                self.i += 1
            part = repeat(part, low, high)

    def atom(self) -> Part:
        ch = self.peek()
        self.i += 1
        if ch == "(":
            return self.group()
        if ch == "[":
            return self.char_class()
        if ch == "\\":
            return self.escape()
        if ch == ".":
            return ANY
        if ch in ("^", "$"):
            return EMPTY
        if ch in ("*", "+", "?", "{"):
            raise Unreadable(f"a repeat with nothing to repeat at {self.i - 1}")
        return Part(frozenset({ch}), frozenset({ch}))

    def group(self) -> Part:
        if self.peek() != "?":
            return self.closed(self.alternation())
        self.i += 1
        ch = self.peek()
        if ch == ":":
            self.i += 1
            return self.closed(self.alternation())
        if ch in ("=", "!") or (ch == "<" and self.peek(1) in ("=", "!")):
            self.i += 1 if ch != "<" else 2
            self.closed(self.alternation())
            return EMPTY  # a lookaround consumes nothing; what it asks for is not needed here
        if ch == "P" and self.peek(1) == "<":
            end = self.p.find(">", self.i)
            if end == -1:
                raise Unreadable("unclosed group name")
            self.i = end + 1
            return self.closed(self.alternation())
        if ch == "P" and self.peek(1) == "=":
            end = self.p.find(")", self.i)
            if end == -1:
                raise Unreadable("unclosed backreference")
            self.i = end + 1
            return ANY
        raise Unreadable(f"group '(?{ch}' at {self.i}")  # inline flags, atomic groups, comments, conditionals

    def closed(self, part: Part) -> Part:
        if self.peek() != ")":
            raise Unreadable(f"missing ')' at {self.i}")
        self.i += 1
        return part

    def escape(self) -> Part:
        ch = self.peek()
        self.i += 1
        if ch == "":
            raise Unreadable("pattern ends with a backslash")
        if ch in ZERO_WIDTH_ESCAPES:
            return EMPTY
        if ch in CLASS_ESCAPES:
            return ANY
        if ch in ("p", "P"):
            self.skip_property()
            return ANY
        if ch in CHAR_ESCAPES:
            return Part(frozenset({CHAR_ESCAPES[ch]}), frozenset({CHAR_ESCAPES[ch]}))
        if ch.isalnum() or ch == "_":
            raise Unreadable(f"escape '\\{ch}'")  # \x.. \u.. \N{..} \g<..> octal, backreferences ...
        return Part(frozenset({ch}), frozenset({ch}))

    def skip_property(self) -> None:
        if self.peek() == "{":
            end = self.p.find("}", self.i)
            if end == -1:
                raise Unreadable("unclosed property")
            self.i = end + 1
        elif self.peek():
            self.i += 1  # \pL
        else:
            raise Unreadable("pattern ends with \\p")

    def char_class(self) -> Part:
        """A set of single characters when the class is a plain list of them, else any character. Only its end
        must be found exactly: escapes and ranges are read; '[' inside or ']' first make it give up."""
        chars: set[str] = set()
        plain = True
        if self.peek() == "^":
            plain = False
            self.i += 1
        first = True
        while True:
            ch = self.peek()
            if ch == "":
                raise Unreadable("unclosed character class")
            self.i += 1
            if ch == "]":
                if first:
                    raise Unreadable("']' first in a character class")  # a literal ']' or an empty set: not read
                break
            first = False
            if ch == "[":
                raise Unreadable("'[' inside a character class")  # POSIX classes, nested sets
            if ch == "\\":
                esc = self.peek()
                self.i += 1
                if esc in ("p", "P"):
                    self.skip_property()
                    plain = False
                elif esc in CLASS_ESCAPES:
                    plain = False
                elif esc in CHAR_ESCAPES:
                    chars.add(CHAR_ESCAPES[esc])
                elif esc == "" or esc.isalnum() or esc == "_":
                    raise Unreadable(f"escape '\\{esc}' in a character class")
                else:
                    chars.add(esc)
            elif ch == "-" and chars and self.peek() not in ("]", ""):
                plain = False  # a range: any character of it (its ends were added; fine, the class is not exact)
            else:
                chars.add(ch)
        if not plain or not chars or len(chars) > MAX_SET:
            return ANY
        return Part(frozenset(chars), frozenset(chars))


def required_literals(pattern: str) -> frozenset[str] | None:
    """Strings one of which every match of `pattern` (case-sensitive) contains; None when none are known."""
    try:
        part = Reader(pattern).read()
    except Unreadable:
        return None
    found = better(part.required, part.exact)
    return None if found is None else shortest(found)


def shortest(literals: frozenset[str]) -> frozenset[str]:
    """Without the strings that contain another of the set: a text holding "killing" holds "kill"."""
    kept: list[str] = []
    for literal in sorted(literals, key=lambda s: (len(s), s)):
        if not any(k in literal for k in kept):
            kept.append(literal)
    return frozenset(kept)


def caseless_ascii_literals(pattern: str) -> frozenset[str] | None:
    """For a pattern matched with IGNORECASE on the text as it is: lower-case ASCII strings one of which the lower case
    of an ASCII text holds wherever the pattern matches it (empty: it matches no ASCII text); None when none are
    known. Each character's case variants are asked of `regex` itself; one without an ASCII variant cannot be in an
    ASCII text; one whose case folding takes several characters makes it give up."""
    found = required_literals(pattern)
    if found is None:
        return None
    forms = set()
    for literal in found:
        form = []
        for ch in literal:
            if len(ch.casefold()) != 1:
                return None
            variants = ascii_variants(ch)
            if not variants:
                break  # this literal is never in an ASCII text
            if len({v.lower() for v in variants}) != 1:
                return None
            form.append(variants[0].lower())
        else:
            forms.add("".join(form))
    return shortest(frozenset(forms))


@cache
def ascii_variants(ch: str) -> tuple[str, ...]:
    """The ASCII characters that `ch` matches with IGNORECASE (VERSION0, as the rules compile)."""
    pattern = regex.compile(regex.escape(ch), regex.IGNORECASE | regex.VERSION0)
    return tuple(a for a in map(chr, range(128)) if pattern.fullmatch(a))


class LiteralIndex:
    """Which of many literals a text holds, in one pass over it: each literal is filed under its first `width`
    characters and checked only where the text has them; shorter ones are looked for whole."""

    def __init__(self, literals: set[str], width: int = 4):
        self.width = width
        self.short = tuple(sorted(lit for lit in literals if len(lit) < width))
        index: dict[str, list[str]] = {}
        for lit in sorted(literals):
            if len(lit) >= width:
                index.setdefault(lit[:width], []).append(lit)
        self.index = {head: tuple(lits) for head, lits in index.items()}

    def present(self, text: str) -> set[str]:
        found = {lit for lit in self.short if lit in text}
        index, width = self.index, self.width
        for at in range(len(text) - width + 1):
            candidates = index.get(text[at:at + width])
            if candidates:
                found.update(lit for lit in candidates if text.startswith(lit, at))
        return found
