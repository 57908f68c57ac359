"""An output path that is the input (the same path, a symlink to it, a hard link to it) is a one-line
error before anything is read, in every CLI that reads a file and writes one: the store export, the
governance stage and the reward scorer. Also: an unwritable `--output` is a one-line error."""

import asyncio
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.governance.__main__ import app as governance_app
from al_integration.store import SqliteLightningStore
from al_integration.store.cli import app as store_app
from rewards.cli import app as rewards_app

from .test_reward import FEEDBACK, GENUINE

REPO = Path(__file__).resolve().parent.parent
APPS = {"al_integration.store": store_app, "agents.governance": governance_app, "rewards": rewards_app}


def run_cli(module: str, *args: str):
    """The CLI in-process (the check runs before any model loads); returns (exit code, stderr)."""
    result = CliRunner().invoke(APPS[module], list(args))
    return result.exit_code, result.stderr


def store_file(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"

    async def fill():
        store = SqliteLightningStore(path)
        await store.enqueue_rollout(input={"task": 1})
        await store.close()

    asyncio.run(fill())
    return path


def replies_file(tmp_path: Path) -> Path:
    path = tmp_path / "replies.jsonl"
    path.write_text(json.dumps({"feedback": FEEDBACK, "response": GENUINE}) + "\n{a bad line\n")
    return path


def feedback_file(tmp_path: Path) -> Path:
    path = tmp_path / "feedback.jsonl"
    path.write_text(json.dumps({"id": "a", "feedback": "Hi, I'm Jane Doe (jane.doe@example.org)."}) + "\n")
    return path


COMMANDS = {
    "store export": (store_file, lambda src, dst: ["al_integration.store", "export", str(src), "--output", str(dst)]),
    "governance": (feedback_file, lambda src, dst: ["agents.governance", "--input", str(src), "--output", str(dst)]),
    "rewards score": (replies_file, lambda src, dst: ["rewards", "score", "--input", str(src), "--output", str(dst),
                                                      "--skip-invalid"]),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("alias", ["same path", "symlink", "hard link", "relative path"])
def test_output_that_is_the_input_is_refused_before_anything_is_read(tmp_path, monkeypatch, command, alias):
    make_input, argv = COMMANDS[command]
    monkeypatch.chdir(tmp_path)
    src = make_input(tmp_path)
    before = src.read_bytes()
    if alias == "same path":
        dst = src
    elif alias == "symlink":
        dst = tmp_path / "link.out"
        dst.symlink_to(src)
    elif alias == "hard link":
        dst = tmp_path / "hard.out"
        os.link(src, dst)
    else:
        dst = Path(os.path.relpath(src, REPO))
    if alias == "relative path":
        monkeypatch.chdir(REPO)
    # CliRunner catches exceptions: a traceback would show as a non-SystemExit exception (exit code 1).
    code, err = run_cli(*argv(src, dst))
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "error:" in lines[0] and "would replace the input" in lines[0], err
    assert src.read_bytes() == before  # nothing was replaced, not even the bad line
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))) == sorted(
        {src.name, dst.name} if alias in ("symlink", "hard link") else {src.name})  # no temporary file left


def test_rewards_output_that_cannot_be_written_is_a_one_line_error(tmp_path):
    src = replies_file(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    code, err = run_cli("rewards", "score", "--input", str(src), "--output", str(blocker / "scored.jsonl"),
                        "--skip-invalid")
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot write" in lines[0] and str(blocker / "scored.jsonl") in lines[0], err
    assert blocker.read_text() == "not a directory\n"


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_governance_on_an_empty_input_file_is_a_one_line_error(tmp_path, content):
    src, dst = tmp_path / "empty.jsonl", tmp_path / "governed.jsonl"
    src.write_text(content)
    code, err = run_cli("agents.governance", "--input", str(src), "--output", str(dst))
    assert code == 2 and err.strip() == f"error: {src}: no feedback rows to govern"
    assert not dst.exists()
