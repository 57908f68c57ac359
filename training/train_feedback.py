"""The training CLI: `python -m training.train_feedback oneclick|eval ...`."""

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)


@app.command()
def oneclick() -> None:
    """Train the policy with GRPO on CPU (the product's main job)."""
    typer.echo(
        "oneclick training is not available yet: the GRPO learner lands with issue #7 "
        "(the reward, `python -m rewards`, and the dataset are ready).",
        err=True,
    )
    raise typer.Exit(code=2)


@app.command("eval")
def evaluate() -> None:
    """Evaluate the agent over a dataset split."""
    typer.echo("eval is not available yet: it lands with issue #6.", err=True)
    raise typer.Exit(code=2)


if __name__ == "__main__":
    app()
