"""`python -m agents.governance`: govern one message or a JSONL file of them.

    python -m agents.governance "Hi, I'm Jane Doe ... I'll see you in court."
    python -m agents.governance --json "..."
    python -m agents.governance --input feedback.jsonl [--json | --output governed.jsonl] [--skip-invalid]

Bad input (a file that is not UTF-8 or not JSON, a row without a string `feedback`) is reported as one line
naming the file, line and field, with exit status 2. Raw values of personal data are never printed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from rich.text import Text

from agents.governance.config import ConfigError, load_config
from agents.governance.engine import GovernanceEngine, get_engine
from agents.governance.result import GovernanceResult
from common.cli import OneLineErrorsCommand, run_cli
from common.files import SameFileError, refuse_same_file, write_lines_atomic
from common.jsonl import JsonlError, read_jsonl

app = typer.Typer(add_completion=False, help=__doc__.split("\n\n")[0])
CHUNK = 64  # rows per govern_many call: large enough to batch, small enough to show progress


class InputError(ValueError):
    """A row of the input file is unusable; the message names file, line and field."""


def read_feedback_rows(path: Path, skip_invalid: bool) -> list[tuple[int, dict]]:
    """(line number, row) for every row with a string `feedback`; blank lines are skipped."""
    try:
        lines = read_jsonl(path)
    except JsonlError as exc:
        raise InputError(str(exc)) from None
    rows: list[tuple[int, dict]] = []
    for line in lines:
        problem = line.error or _row_problem(line.value)
        if problem is None:
            rows.append((line.number, line.value))
        elif not skip_invalid:
            raise InputError(f"{line.where(path)}: {problem}")
        else:
            print(f"skipped {line.where(path)}: {problem}", file=sys.stderr)
    if not rows:
        raise InputError(f"{path}: no feedback rows to govern")
    return rows


def _row_problem(row: dict) -> str | None:
    if "feedback" not in row:
        return "field 'feedback' is missing"
    if not isinstance(row["feedback"], str):
        return f"field 'feedback' must be a string, got {type(row['feedback']).__name__}"
    return None


def govern_rows(engine: GovernanceEngine, rows: list[tuple[int, dict]]) -> list[GovernanceResult]:
    """govern_many in chunks, with a progress bar on a terminal and plain log lines otherwise."""
    results: list[GovernanceResult] = []
    chunks = [rows[i:i + CHUNK] for i in range(0, len(rows), CHUNK)]
    if sys.stderr.isatty():
        with Progress(console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task("governing", total=len(rows))
            for chunk in chunks:
                results += engine.govern_many([row["feedback"] for _, row in chunk])
                progress.advance(task, len(chunk))
    else:
        for chunk in chunks:
            results += engine.govern_many([row["feedback"] for _, row in chunk])
            print(f"governed {len(results)}/{len(rows)} messages", file=sys.stderr)
    return results


def show_result(result: GovernanceResult) -> None:
    table = Table(show_header=False, show_lines=True)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("decision", f"{result.decision} (confidence {result.confidence:.2f})")
    table.add_row("reasons", "\n".join(result.reasons))
    table.add_row("flags", ", ".join(result.flags) or "-")
    table.add_row("sentiment", f"{result.sentiment.label} ({result.sentiment.compound:+.3f})")
    entities = ", ".join(f"{e.type} [{e.start}:{e.end}] {e.score:.2f}" for e in result.entities)
    table.add_row("entities", Text(entities or "-"))
    table.add_row("redacted text", Text(result.redacted_text))  # Text: "[removed: ...]" is not markup
    Console().print(table)


def show_table(items: list[tuple[str, GovernanceResult]]) -> None:
    table = Table(show_lines=True)
    table.add_column("message", no_wrap=True)
    table.add_column("decision")
    table.add_column("sentiment")
    table.add_column("flags")
    table.add_column("redacted text", ratio=1, min_width=30)
    for name, result in items:
        table.add_row(
            name, f"{result.decision} {result.confidence:.2f}",
            f"{result.sentiment.label} {result.sentiment.compound:+.2f}", ", ".join(result.flags),
            Text(result.redacted_text),
        )
    Console().print(table)


def fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


@app.command(cls=OneLineErrorsCommand)
def main(
    text: Annotated[str | None, typer.Argument(help="the feedback message to govern")] = None,
    input_file: Annotated[Path | None, typer.Option("--input", help="JSONL file, one row per message, "
                                                     "with a `feedback` field")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON (a file: one object per line)")] = False,
    output: Annotated[Path | None, typer.Option(help="write JSONL results here (with --input)")] = None,
    skip_invalid: Annotated[bool, typer.Option(help="skip unusable rows with a warning instead of "
                                                    "stopping")] = False,
    config: Annotated[Path | None, typer.Option(help="governance config (default "
                                                     "configs/governance.yaml)")] = None,
) -> None:
    """Redact PII, score sentiment and decide answer / escalate / reject for feedback messages."""
    if (text is None) == (input_file is None):
        fail("give either a TEXT argument or --input FILE.jsonl")
    if output is not None and input_file is None:
        fail("--output needs --input")
    try:
        if input_file is not None and output is not None:
            refuse_same_file(input_file, output)
        rows = read_feedback_rows(input_file, skip_invalid) if input_file else [(0, {"feedback": text})]
        engine = GovernanceEngine(load_config(config)) if config else get_engine()
    except (InputError, ConfigError, SameFileError) as exc:
        fail(str(exc))

    results = govern_rows(engine, rows) if input_file else [engine.govern(text)]
    if input_file is None:
        if as_json:
            typer.echo(json.dumps(results[0].to_json_dict(), ensure_ascii=False))
        else:
            show_result(results[0])
        return

    records = [
        {"line": number, **({"id": row["id"]} if "id" in row else {}), **result.to_json_dict()}
        for (number, row), result in zip(rows, results, strict=True)
    ]
    if output is not None:
        try:
            write_lines_atomic(output, [json.dumps(r, ensure_ascii=False) for r in records])
        except OSError as exc:
            fail(f"{output}: cannot write ({exc.strerror})")
        typer.echo(f"wrote {len(records)} results to {output}", err=True)
    elif as_json:
        for record in records:
            typer.echo(json.dumps(record, ensure_ascii=False))
    else:
        show_table([(str(row.get("id", f"line {number}")), result)
                    for (number, row), result in zip(rows, results, strict=True)])


if __name__ == "__main__":
    run_cli(app)
