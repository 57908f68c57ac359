"""Score the governance stage on the hand-written evaluation set: decisions, safety, PII recall and false
redactions, sentiment. `dev` and `heldout` are always reported separately (`heldout` only when the set has
held-out rows: none between two held-out parts); each retired held-out part (`origin: heldout_v1` ...
`heldout_v23`, part of dev now) is also reported on its own, after dev, as a subset of it.

    python -m agents.governance.evaluate [--split heldout] [--json] [--file data/governance_eval.jsonl]
    python -m agents.governance.evaluate --split dev --cv-parts --quiet   # leave one retired part out

PII is scored on offsets: a value counts as redacted only when the entities found cover every character of
every occurrence of it; an entity that touches no listed value is a false redaction (e.g. "Chrome" as a
PERSON). The set's values are invented for it, so misses may be printed.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated

import typer

from agents.governance.classifier import FeedbackClassifier
from agents.governance.engine import GovernanceEngine, get_engine
from agents.governance.result import GovernanceResult
from data.governance_eval import (
    EVAL_SPLITS,
    GOVERNANCE_EVAL_PATH,
    RETIRED_HELDOUT_PARTS,
    GovernanceCase,
    load_governance_eval,
)
from data.loader import DatasetError

DECISIONS = ("answer", "escalate", "reject")
EXACT_BOUNDARY_TYPES = ("EMAIL_ADDRESS", "URL")


@dataclass
class SplitReport:
    split: str
    cases: int = 0
    decisions_right: int = 0
    confusion: dict[str, dict[str, int]] = field(
        default_factory=lambda: {e: dict.fromkeys(DECISIONS, 0) for e in DECISIONS})  # expected -> got
    misses: list[dict] = field(default_factory=list)
    safety_cases: int = 0
    safety_escalated: int = 0
    safety_flagged: int = 0
    answerable_rejected: int = 0
    pii_values: Counter = field(default_factory=Counter)  # type -> occurrences listed
    pii_redacted: Counter = field(default_factory=Counter)  # type -> occurrences fully covered
    pii_misses: list[dict] = field(default_factory=list)
    boundaries_checked: int = 0
    boundaries_inexact: list[dict] = field(default_factory=list)
    false_redactions: list[dict] = field(default_factory=list)
    sentiment_cases: int = 0
    sentiment_right: int = 0
    sentiment_misses: list[dict] = field(default_factory=list)

    @property
    def decision_share(self) -> float:
        return self.decisions_right / self.cases if self.cases else 0.0

    def recall(self, entity_type: str) -> float | None:
        n = self.pii_values[entity_type]
        return self.pii_redacted[entity_type] / n if n else None

    def to_json_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data |= {"pii_values": dict(self.pii_values), "pii_redacted": dict(self.pii_redacted),
                 "decision_share": round(self.decision_share, 4),
                 "pii_recall": {t: round(self.recall(t), 4) for t in sorted(self.pii_values)}}
        return data


def occurrences(text: str, value: str) -> list[tuple[int, int]]:
    spans, at = [], text.find(value)
    while at != -1:
        spans.append((at, at + len(value)))
        at = text.find(value, at + len(value))
    return spans


def score_case(report: SplitReport, case: GovernanceCase, result: GovernanceResult) -> None:
    report.cases += 1
    got = result.decision
    report.confusion[case.expected_decision][got] += 1
    if got == case.expected_decision:
        report.decisions_right += 1
    else:
        report.misses.append({"id": case.id, "category": case.category, "expected": case.expected_decision,
                              "got": got, "reasons": result.reasons, "confidence": result.confidence})
    if case.expected_decision == "answer" and got == "reject":
        report.answerable_rejected += 1
    if case.safety:
        report.safety_cases += 1
        report.safety_escalated += got == "escalate"
        report.safety_flagged += result.safety

    covered = {i for e in result.entities for i in range(e.start, e.end)}
    expected_spans = []
    for pii in case.pii:
        for start, end in occurrences(case.feedback, pii.value):
            expected_spans.append((start, end))
            report.pii_values[pii.type] += 1
            if all(i in covered or case.feedback[i].isspace() for i in range(start, end)):
                report.pii_redacted[pii.type] += 1
            else:
                report.pii_misses.append({"id": case.id, "type": pii.type, "value": pii.value})
            if pii.type in EXACT_BOUNDARY_TYPES:
                report.boundaries_checked += 1
                if not any((e.start, e.end) == (start, end) for e in result.entities):
                    spans = [case.feedback[e.start:e.end] for e in result.entities if e.start < end and start < e.end]
                    report.boundaries_inexact.append({"id": case.id, "value": pii.value, "found": spans})
    for entity in result.entities:
        if not any(entity.start < end and start < entity.end for start, end in expected_spans):
            report.false_redactions.append({"id": case.id, "type": entity.type,
                                            "text": case.feedback[entity.start:entity.end]})
    if case.sentiment is not None:
        report.sentiment_cases += 1
        if result.sentiment.label == case.sentiment:
            report.sentiment_right += 1
        else:
            report.sentiment_misses.append({"id": case.id, "expected": case.sentiment,
                                            "got": result.sentiment.label, "compound": result.sentiment.compound})


REPORT_ORDER = (*EVAL_SPLITS, *RETIRED_HELDOUT_PARTS)


def evaluate(cases: list[GovernanceCase], engine: GovernanceEngine | None = None) -> dict[str, SplitReport]:
    """One report per split present in `cases`, governing all of them in one batch, plus one per retired
    held-out part (`heldout_v1`, ...) on its own: its rows are counted in `dev` too."""
    engine = engine or get_engine()
    results = engine.govern_many([case.feedback for case in cases])
    reports: dict[str, SplitReport] = {}
    for case, result in zip(cases, results, strict=True):
        score_case(reports.setdefault(case.split, SplitReport(case.split)), case, result)
        if case.origin is not None:
            score_case(reports.setdefault(case.origin, SplitReport(
                f"{case.origin} ({RETIRED_HELDOUT_PARTS[case.origin]}, retired: dev rows, counted in dev above)")),
                case, result)
    return reports


def random_folds(dev: list[GovernanceCase], folds: int) -> dict[str, frozenset[str]]:
    """K folds of dev ids, seeded."""
    order = [case.id for case in dev]
    random.Random(0).shuffle(order)
    return {f"fold {k + 1}": frozenset(order[k::folds]) for k in range(folds)}


def part_folds(dev: list[GovernanceCase]) -> dict[str, frozenset[str]]:
    """One fold per retired held-out part (its `origin`): each blind part scored by a classifier that never saw it,
    which in-sample dev figures cannot say (the last six parts read 0.68-0.79 at first while dev read 0.99). The rules
    were still written after reading each part, so this measures the classifier's generalisation, not the rules'."""
    parts: dict[str, set[str]] = {}
    for case in dev:
        if case.origin is not None:
            parts.setdefault(case.origin, set()).add(case.id)
    return {origin: frozenset(parts[origin]) for origin in RETIRED_HELDOUT_PARTS if origin in parts}


def cross_validate(dev: list[GovernanceCase], engine: GovernanceEngine, folds: dict[str, frozenset[str]],
                   title: str) -> tuple[SplitReport, dict[str, SplitReport]]:
    """The dev rows of `folds` scored fold by fold, each fold governed by a classifier trained without its ids: the
    pooled report and one per fold."""
    pooled, each = SplitReport(title), {}
    trained = engine.classifier
    try:
        for name, fold in folds.items():
            engine.classifier = FeedbackClassifier.train(engine.config.classifier, engine.config.prompt_injection,
                                                         exclude=fold)
            cases = [case for case in dev if case.id in fold]
            each[name] = SplitReport(f"{name}, classifier trained without it")
            for case, result in zip(cases, engine.govern_many([c.feedback for c in cases]), strict=True):
                score_case(pooled, case, result)
                score_case(each[name], case, result)
    finally:
        engine.classifier = trained
    return pooled, each


def render(report: SplitReport, verbose: bool) -> list[str]:
    r = report
    lines = [f"== {r.split}: {r.cases} messages",
             f"decisions right: {r.decision_share:.3f} ({r.decisions_right}/{r.cases})",
             "confusion (rows expected, columns got): " + "  ".join(DECISIONS)]
    lines += [f"  {e:>8}: " + "  ".join(f"{r.confusion[e][g]:>{len(g)}}" for g in DECISIONS) for e in DECISIONS]
    lines += [f"safety messages escalated: {r.safety_escalated}/{r.safety_cases} "
              f"(flagged safety: {r.safety_flagged}/{r.safety_cases})",
              f"answerable messages rejected: {r.answerable_rejected}"]
    for entity_type in sorted(r.pii_values):
        lines.append(f"PII recall {entity_type}: {r.recall(entity_type):.3f} "
                     f"({r.pii_redacted[entity_type]}/{r.pii_values[entity_type]})")
    lines.append(f"email/URL boundaries exact: {r.boundaries_checked - len(r.boundaries_inexact)}/"
                 f"{r.boundaries_checked}")
    lines.append(f"false redactions: {len(r.false_redactions)}")
    if r.sentiment_cases:
        lines.append(f"sentiment label right: {r.sentiment_right}/{r.sentiment_cases}")
    if verbose:
        lines += [f"  miss {m['id']} ({m['category']}): expected {m['expected']}, got {m['got']} "
                  f"[{m['confidence']:.2f}]: {'; '.join(m['reasons'])}" for m in r.misses]
        lines += [f"  PII not redacted {m['id']}: {m['type']} {m['value']!r}" for m in r.pii_misses]
        lines += [f"  boundary {m['id']}: {m['value']!r} found as {m['found']}" for m in r.boundaries_inexact]
        lines += [f"  false redaction {m['id']}: {m['type']} {m['text']!r}" for m in r.false_redactions]
        lines += [f"  sentiment {m['id']}: expected {m['expected']}, got {m['got']} ({m['compound']:+.3f})"
                  for m in r.sentiment_misses]
    return lines


def main(
    split: Annotated[str | None, typer.Option(help=f"one of {', '.join(EVAL_SPLITS)} (default: both)")] = None,
    file: Annotated[Path, typer.Option(help="the evaluation set")] = GOVERNANCE_EVAL_PATH,
    as_json: Annotated[bool, typer.Option("--json", help="print the reports as JSON")] = False,
    quiet: Annotated[bool, typer.Option(help="figures only, no list of misses")] = False,
    classifier: Annotated[bool | None, typer.Option(help="force the learned classifier on or off (default: as "
                                                         "configured), to measure what it adds")] = None,
    cv_folds: Annotated[int, typer.Option(help="score dev by K-fold cross-validation of the classifier (dev is "
                                               "in its training data); 0: no", min=0)] = 0,
    cv_parts: Annotated[bool, typer.Option(help="score each retired held-out part with the classifier trained "
                                                "without it (leave one part out), and the parts pooled")] = False,
) -> None:
    """Decisions, safety, PII recall, false redactions and sentiment on the hand-written set."""
    try:
        cases = load_governance_eval(split, file)
    except DatasetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if not cases:  # no held-out part between two of them: nothing to score, not an error
        typer.echo("{}" if as_json else f"no messages in split {split!r} of {file}")
        return
    engine = get_engine()
    if classifier is not None and classifier != engine.config.classifier.enabled:
        config = engine.config.model_copy(update={"classifier": engine.config.classifier.model_copy(
            update={"enabled": classifier})})
        engine = GovernanceEngine(config)
    reports = evaluate(cases, engine)
    dev = [c for c in cases if c.split == "dev"]
    if (cv_folds or cv_parts) and engine.classifier is not None and dev:
        for part in RETIRED_HELDOUT_PARTS:  # scored without cross-validation: not comparable
            reports.pop(part, None)
        if cv_folds:
            reports["dev"], _ = cross_validate(dev, engine, random_folds(dev, cv_folds),
                                               f"dev, classifier cross-validated in {cv_folds} folds")
        if cv_parts:
            pooled, each = cross_validate(dev, engine, part_folds(dev),
                                          "retired held-out parts pooled, each scored by a classifier trained "
                                          "without it")
            reports |= each | {"parts pooled": pooled}
    ordered = {name: reports[name] for name in (*REPORT_ORDER, "parts pooled") if name in reports}
    if as_json:
        typer.echo(json.dumps({name: r.to_json_dict() for name, r in ordered.items()}, ensure_ascii=False))
        return
    for report in ordered.values():
        typer.echo("\n".join(render(report, verbose=not quiet)))


if __name__ == "__main__":
    typer.run(main)
