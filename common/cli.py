"""Command-line mistakes as one line: typer's usage errors (a bad choice, an unknown option, a value out of range)
print `error: ...` on stderr and exit 2, like every error our CLIs raise themselves, instead of a boxed panel.

    app = typer.Typer(cls=OneLineErrors)              # an app with several commands
    @app.command(cls=OneLineErrorsCommand)            # an app of one command
"""

import sys
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


class OneLineErrors(typer.core.TyperGroup):
    def main(self, *args: Any, **kwargs: Any) -> Any:
        return _main(super().main, *args, **kwargs)


class OneLineErrorsCommand(typer.core.TyperCommand):
    def main(self, *args: Any, **kwargs: Any) -> Any:
        return _main(super().main, *args, **kwargs)
