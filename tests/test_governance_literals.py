"""The rules' literal prefilter (agents/governance/literals.py): a pattern is skipped only on a text that it cannot
match, so no rule's verdict or evidence changes. Checked on the reader's own cases and, for every pattern of the
config, on a fifth of the dev split's texts and every message of the rules' test tables."""

import inspect

import pytest

import tests.test_governance_rules as rule_tests
from agents.governance import get_engine
from agents.governance.literals import LiteralIndex, required_literals
from agents.governance.rules import RuleText
from data.governance_eval import load_governance_eval


@pytest.mark.parametrize(("pattern", "literals"), [
    (r"\bsue\b", {"sue"}),
    (r"\b(kill|hurt) (myself|my ?self)\b", {"kill myself", "kill my self", "hurt myself", "hurt my self"}),
    (r"\b(kill|killing)\b", {"kill"}),  # "killing" holds "kill"
    (r"(?<!\bnot )\bpoison\w*", {"poison"}),  # a lookbehind asks for nothing
    (r"\bdon'?t\b|\bnever\b", {"don't", "dont", "never"}),
    (r"\b(a|the) (own )?life\b", {"a life", "a own life", "the life", "the own life"}),
    (r"\b(a|the)\b[^.]{0,20}\blife\b", {"life"}),
    (r"gr[ae]y", {"gray", "grey"}),
    (r"\bno[- ]deposit", {"no-deposit", "no deposit"}),
    (r"(?P<a>x)(?P=a)yz", {"yz"}),  # a backreference is any string
    (r"(ab){2}c", {"ababc"}),
    (r"[a-z]+ing", {"ing"}),
    (r"\d{2,}", None),  # no literal at all
    (r"x|\w+", None),  # one branch without a literal: the pattern has none
    (r"(?i:sue)", None),  # inline flags: not read
    (r"[[:alpha:]]sue", None),  # a set inside a set: not read
    (r"\x41bc", None),  # escapes it does not model: not read
])
def test_required_literals(pattern, literals):
    found = required_literals(pattern)
    assert (None if found is None else set(found)) == literals


def test_literal_index_finds_exactly_the_literals_a_text_holds():
    literals = {"a", "my", "sue", "kill my", "killer", "the end"}
    index = LiteralIndex(literals)
    for text in ("", "a", "we will sue, my killer", "the end of kill myself", "nothing here"):
        assert index.present(text) == {lit for lit in literals if lit in text}


def table_messages() -> list[str]:
    """Every message of tests/test_governance_rules.py: its tables and its parametrized cases."""
    values = [v for name, v in vars(rule_tests).items() if name.isupper() and isinstance(v, list)]
    values += [mark.args[1] for _, f in inspect.getmembers(rule_tests, inspect.isfunction)
               for mark in getattr(f, "pytestmark", []) if mark.name == "parametrize"]
    return [case if isinstance(case, str) else case[0] for table in values for case in table
            if isinstance(case, str) or (isinstance(case, tuple) and case and isinstance(case[0], str))]


def test_the_prefilter_never_skips_a_pattern_that_matches():
    rules = get_engine().rules
    patterns = [p for rule in rules.rules for p in rule.patterns()]
    # the config's patterns are nearly all read: a pattern without literals is always searched (slower, still right)
    readable = [p for p in patterns if p.folded is not None]
    assert sum(p.literals is not None for p in readable) >= 0.95 * len(readable)
    # every fifth dev text (all of them take ~4 s; the whole split was compared before and after the change, see
    # docs/governance.md "Round fourteen") and every message of the rules' tables
    texts = [case.feedback for case in load_governance_eval(split="dev")[::5]] + table_messages()
    assert len(texts) > 650
    skipped = 0
    for text in texts:
        view = RuleText(text, rules.literals)
        for pattern in patterns:
            if pattern.hopeless(view):
                skipped += 1
                assert pattern.folded.search(view.lower) is None, (pattern.folded.pattern[:80], text)
    assert skipped > 0.8 * len(texts) * len(patterns)  # most searches are skipped


def test_rule_verdicts_and_evidence_are_the_same_with_and_without_the_prefilter():
    rules = get_engine().rules
    for text in table_messages():
        filtered, plain, n_words = RuleText(text, rules.literals), RuleText(text), len(text.split())
        for rule in rules.rules:
            fires = rule.fires(plain, n_words)
            assert rule.fires(filtered, n_words) == fires, (rule.config.name, text)
            if fires:
                assert rule.spans(filtered) == rule.spans(plain), (rule.config.name, text)
