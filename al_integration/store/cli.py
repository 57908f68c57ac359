"""`python -m al_integration.store inspect|export|serve PATH`: look into a store file after (or during) a run.

Files are opened read-only, so these commands never change a run's record and can run while the
trainer is still writing (SQLite WAL lets readers and the writer proceed together).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from al_integration.store.database import StoreFileError
from al_integration.store.report import dashboard_server, export_jsonl, summarize
from al_integration.store.store import SqliteLightningStore
from common.cli import OneLineErrors
from common.files import SameFileError, refuse_same_file

app = typer.Typer(
    cls=OneLineErrors,
    add_completion=False,
    no_args_is_help=True,
    help="Look into an Agent Lightning SQLite store file (read-only): inspect, export, serve.",
)
log = logging.getLogger("al_integration.store")
PathArg = Annotated[Path, typer.Argument(help="the store file (SQLite) written by a training run")]


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _open(path: Path) -> SqliteLightningStore:
    try:
        return SqliteLightningStore(path, read_only=True)
    except StoreFileError as exc:
        _fail(str(exc))
        raise  # unreachable; keeps type checkers quiet


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


@app.command()
def inspect(
    path: PathArg, as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False
):
    """Rollouts by status, span count and final-reward mean / min / max."""
    store = _open(path)

    async def main():
        try:
            return await summarize(store)
        finally:
            await store.close()

    try:
        summary = asyncio.run(main())
    except StoreFileError as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps(summary))
        return
    table = Table(title=str(path))
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("rollouts", str(summary["rollouts"]))
    for status, count in summary["by_status"].items():
        table.add_row(f"  {status}", str(count))
    table.add_row("spans", str(summary["spans"]))
    reward = summary["reward"]
    table.add_row("rewards", str(reward["count"]))
    for key in ("mean", "min", "max"):
        table.add_row(f"  reward {key}", _fmt(reward[key]))
    Console().print(table)


@app.command()
def export(
    path: PathArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="JSONL file: one rollout a line")],
):
    """One line per rollout: the rollout, its latest attempt's spans and its final reward."""
    try:
        refuse_same_file(path, output)
    except SameFileError as exc:
        _fail(str(exc))
    if not output.parent.is_dir():
        _fail(f"output {output}: directory {output.parent} does not exist")
    store = _open(path)
    interactive = sys.stderr.isatty()

    async def main(progress: Progress | None):
        task = progress.add_task("export", total=None) if progress else None

        def on_rollout(done: int, total: int) -> None:
            if progress is not None:
                progress.update(task, completed=done, total=total)
            elif done % 100 == 0 or done == total:
                log.info("exported %d/%d rollouts", done, total)

        try:
            return await export_jsonl(store, output, on_rollout)
        finally:
            await store.close()

    try:
        if interactive:
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=Console(stderr=True)) as progress:
                count = asyncio.run(main(progress))
        else:
            count = asyncio.run(main(None))
    except (StoreFileError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {count} rollouts to {output}")


@app.command()
def serve(
    path: PathArg,
    port: Annotated[int, typer.Option(min=1, max=65535, help="port on 127.0.0.1")] = 4747,
):
    """Serve agl's LightningStoreServer (and its dashboard at /) over the file, read-only, on 127.0.0.1."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            _fail(f"port {port} on 127.0.0.1 is not available ({exc.strerror})")
    server = dashboard_server(_open(path), port)
    typer.echo(f"serving {path} at http://127.0.0.1:{port}/ (dashboard) - Ctrl+C to stop")
    try:
        asyncio.run(server.run_forever())
    except KeyboardInterrupt:
        pass


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    app()
