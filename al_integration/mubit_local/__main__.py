"""`python -m al_integration.mubit_local serve --db PATH [--port 3000]`, the key in MUBIT_API_KEY or --api-key-file.

A key given as `--api-key KEY` is visible to every user of the machine in `ps`; it still works, with a warning.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from al_integration.mubit_config import ConfigError, load_mubit_config
from al_integration.mubit_local.server import DEFAULT_HOST, serve_forever
from common.cli import OneLineErrors, run_cli

app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True)
console = Console(stderr=True, soft_wrap=True)  # one-line errors, whatever the width


@app.callback()
def main() -> None:
    """Embedded Mubit-compatible memory engine (hosted HTTP contract over one SQLite file)."""


@app.command()
def serve(
    ctx: typer.Context,
    db: Annotated[Path, typer.Option("--db", help="SQLite file holding the memory (created if missing).")],
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port to listen on.")] = 3000,
    api_key: Annotated[
        str,
        typer.Option("--api-key", envvar=["MUBIT_API_KEY", "MUBIT_LOCAL_API_KEY"], show_envvar=True,
                     help="Require 'Authorization: Bearer KEY'. Prefer the environment variable or --api-key-file: "
                          "a key on the command line is visible in `ps`."),
    ] = "",
    api_key_file: Annotated[
        Path | None, typer.Option("--api-key-file", help="Read the key from this file (first line).")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = DEFAULT_HOST,
    config: Annotated[
        Path | None, typer.Option("--config", help="configs/mubit.yaml: take the ranking weights from it.")
    ] = None,
) -> None:
    """Serve the Mubit control-plane routes until interrupted."""
    if db.exists() and not db.is_file():
        _fail(f"--db {db}: not a file")
    from_command_line = ctx.get_parameter_source("api_key").name == "COMMANDLINE"
    if api_key_file is not None:
        if from_command_line:
            _fail("give the key either with --api-key or with --api-key-file, not both")
        api_key = _read_key(api_key_file)
    elif from_command_line:
        console.print("[yellow]warning:[/] --api-key is visible to every user in `ps`; "
                      "use MUBIT_API_KEY=... or --api-key-file instead")
    weights = None
    if config is not None:
        try:
            weights = load_mubit_config(config).ranking.weights()
        except ConfigError as exc:
            _fail(str(exc))
    if not api_key:
        console.print("[yellow]warning:[/] no API key (MUBIT_API_KEY or --api-key-file): requests are not "
                      "authenticated")
    console.print(f"starting mubit-local on http://{host}:{port} with {db}")
    try:
        serve_forever(db, host=host, port=port, api_key=api_key, weights=weights)
    except sqlite3.DatabaseError as exc:
        _fail(f"--db {db}: not a usable SQLite file ({exc})")
    except OSError as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        pass


def _read_key(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"--api-key-file {path}: cannot read ({getattr(exc, 'strerror', None) or exc})")
    key = lines[0].strip() if lines else ""
    if not key:
        _fail(f"--api-key-file {path}: the file is empty (write the key on its first line)")
    return key


def _fail(message: str) -> None:
    console.print(f"[red]error:[/] {message}")
    raise typer.Exit(2)


if __name__ == "__main__":
    run_cli(app)
