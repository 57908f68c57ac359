from rewards.cli import app

app(prog_name="python -m rewards")
