"""`python -m rewards score ...`: score one reply, or a JSONL file of replies, with the rule-based reward."""

import json
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError
from rich.console import Console
from rich.progress import track
from rich.table import Table

from common.cli import OneLineErrors
from common.files import SameFileError, refuse_same_file, write_lines_atomic
from common.jsonl import JsonlError, read_jsonl
from rewards.config import COMPONENTS, GATES, ConfigError, load_config
from rewards.reward import RewardResult, RewardScorer

SCORE_BATCH = 64
app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True, help=__doc__)
out = Console()
err = Console(stderr=True)


class InputError(Exception):
    """A user mistake in the input: reported as one line, never as a traceback."""


class ScoreRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    feedback: StrictStr
    response: StrictStr


def _fail(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


def _breakdown_table(result: RewardResult) -> Table:
    table = Table(title=f"reward total {result.total:+.3f}", title_justify="left")
    table.add_column("component")
    table.add_column("score", justify="right")
    table.add_column("weight", justify="right")
    table.add_column("explanation", overflow="fold")
    for name, c in result.components.items():
        weight = "gate" if name in GATES else f"{c.weight:.2f}"
        style = "red" if c.score < 0 else "green"
        table.add_row(name, f"[{style}]{c.score:+.3f}[/]", weight, c.explanation)
    return table


def _read_rows(path: Path) -> list[tuple[int, ScoreRow | str]]:
    """Parse a JSONL file into (line number, row or error message) pairs; blank lines are skipped."""
    try:
        lines = read_jsonl(path)
    except JsonlError as e:
        raise InputError(str(e)) from None
    rows: list[tuple[int, ScoreRow | str]] = []
    for line in lines:
        if line.error:
            rows.append((line.number, line.error))
            continue
        try:
            rows.append((line.number, ScoreRow.model_validate(line.value)))
        except ValidationError as e:
            first = e.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "row"
            rows.append((line.number, f"field '{field}': {first['msg'].lower()}"))
    return rows


def _score_file(scorer: RewardScorer, path: Path, output: Path | None, skip_invalid: bool, as_json: bool) -> None:
    rows = _read_rows(path)
    valid: list[ScoreRow] = []
    skipped = 0
    for number, row in rows:
        if isinstance(row, str):
            if not skip_invalid:
                raise InputError(f"{path}:{number}: {row} (use --skip-invalid to skip bad rows)")
            skipped += 1
            continue
        valid.append(row)
    if not valid:
        raise InputError(f"{path}: no valid rows to score" + (f" ({skipped} skipped)" if skipped else ""))
    # Batches of rows: the parser reads a batch much faster than one reply at a time, and the bar still moves.
    batches = [valid[i : i + SCORE_BATCH] for i in range(0, len(valid), SCORE_BATCH)]
    progress = track(batches, description="scoring", console=err) if err.is_terminal else batches
    results: list[tuple[ScoreRow, RewardResult]] = []
    for batch in progress:
        scored = scorer.score_many([(row.response, row.feedback) for row in batch])
        results.extend(zip(batch, scored, strict=True))

    if output is not None:
        try:
            write_lines_atomic(output, [json.dumps({**row.model_dump(), "reward": result.to_dict()},
                                                   ensure_ascii=False) for row, result in results])
        except OSError as e:
            raise InputError(f"{output}: cannot write ({e.strerror or e})") from None
    names = [*COMPONENTS, *GATES]
    means = {name: sum(r.components[name].score for _, r in results) / len(results) for name in names}
    total = sum(r.total for _, r in results) / len(results)
    if as_json:
        print(json.dumps({"n": len(results), "skipped": skipped, "mean_total": total, "mean_components": means}))
        return
    table = Table(title=f"{len(results)} replies scored, mean total {total:+.3f}", title_justify="left")
    table.add_column("component")
    table.add_column("mean score", justify="right")
    for name in names:
        table.add_row(name, f"{means[name]:+.3f}")
    out.print(table)
    if skipped:
        err.print(f"skipped {skipped} invalid row(s)")
    if output is not None:
        err.print(f"wrote {len(results)} scored rows to {output}")


@app.callback()
def main() -> None:
    """Rule-based reward for replies to research feedback."""


@app.command()
def score(
    feedback: Annotated[str | None, typer.Option(help="The feedback message the reply answers.")] = None,
    response: Annotated[str | None, typer.Option(help="The reply to score.")] = None,
    input: Annotated[Path | None, typer.Option("--input", help="JSONL file of {feedback, response} rows.")] = None,
    output: Annotated[Path | None, typer.Option(help="With --input: write each row plus its reward here.")] = None,
    skip_invalid: Annotated[bool, typer.Option(help="With --input: skip bad rows and report how many.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
    config: Annotated[Path | None, typer.Option(help="Reward config YAML (default configs/reward.yaml).")] = None,
) -> None:
    """Score one reply (--feedback and --response) or a JSONL file of replies (--input)."""
    single = feedback is not None or response is not None
    if input is not None and single:
        _fail("give either --input or --feedback/--response, not both")
    if input is None and (feedback is None or response is None):
        _fail("give both --feedback and --response, or --input FILE.jsonl")
    if input is None and (output is not None or skip_invalid):
        _fail("--output and --skip-invalid only apply with --input")
    try:
        if input is not None and output is not None:
            refuse_same_file(input, output)
        scorer = RewardScorer(load_config(config))
    except (ConfigError, SameFileError) as e:
        _fail(str(e))
    try:
        if input is not None:
            _score_file(scorer, input, output, skip_invalid, as_json)
            return
    except InputError as e:
        _fail(str(e))
    result = scorer(response, feedback)
    if as_json:
        print(json.dumps(result.to_dict()))
    else:
        out.print(_breakdown_table(result))
