"""Command-line mistakes as one line: typer's usage errors (a bad choice, an unknown option, a value out of range)
print `error: ...` on stderr and exit 2, like every error our CLIs raise themselves, instead of a boxed panel.

    app = typer.Typer(cls=OneLineErrors)              # an app with several commands
    @app.command(cls=OneLineErrorsCommand)            # an app of one command
"""

import gc
import sys
from collections.abc import Callable
from typing import Any

import typer
import typer.core


def _main(main, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
    if not standalone_mode:
        return main(*args, standalone_mode=False, **kwargs)
    try:
        result = main(*args, standalone_mode=False, **kwargs)
    except typer.TyperException as e:  # click's (vendored by typer) ClickException, UsageError, BadParameter...
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.echo(f"error: {e.format_message().replace('Value error, ', '')}{hint}", err=True)
        sys.exit(e.exit_code)
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        sys.exit(1)
    sys.exit(result if isinstance(result, int) else 0)  # an int is an exit code (typer.Exit), else success


def run_cli(app: Callable[[], Any]) -> None:
    """Run a CLI as the process's entry point (`if __name__ == "__main__": run_cli(app)`).

    Our CLIs import torch, transformers, spaCy, agl and litellm: millions of objects that live as long as the
    process. Frozen once imported, the garbage collector stops walking them in every full collection (1-2 s each
    on 2 busy cores, a dozen in a smoke run); frozen again when the command ends, they are not walked by the
    collections of the interpreter's exit either (~10 s of a smoke run's exit). Not for in-process test runs:
    a frozen object is never collected."""
    gc.freeze()
    try:
        app()
    finally:
        gc.freeze()


class OneLineErrors(typer.core.TyperGroup):
    def main(self, *args: Any, **kwargs: Any) -> Any:
        return _main(super().main, *args, **kwargs)


class OneLineErrorsCommand(typer.core.TyperCommand):
    def main(self, *args: Any, **kwargs: Any) -> Any:
        return _main(super().main, *args, **kwargs)
