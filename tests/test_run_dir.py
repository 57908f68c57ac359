"""Runs that cannot destroy each other or themselves, checked before a run starts (no training here):
the run-directory lock and refusals, writability, checkpoints that fail without losing the previous one,
the up-front one-line errors of the training CLI, and what a summary says about a partial run."""

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from typer.testing import CliRunner

from al_integration.mubit_loop import CreditReport
from training.algorithm import TrainState
from training.checkpoint import checkpoint_interval, latest_checkpoint, save_checkpoint
from training.config import load_run_config
from training.outputs import ValResult, paired_gain_interval, write_report
from training.rollouts import RolloutResult
from training.run_dir import LOCK_NAME, RunDirError, claim_run_dir
from training.train_feedback import _summary, _write_outputs, app

REPO = Path(__file__).resolve().parent.parent
HOLD = "import sys, time; from pathlib import Path; from training.run_dir import claim_run_dir; " \
       "claim_run_dir(Path(sys.argv[1]), resume=True); print('held', flush=True); time.sleep(600)"


def finished_run(path: Path) -> Path:
    """A directory as a finished run leaves it (the files that matter here)."""
    (path / "checkpoints").mkdir(parents=True)
    (path / "metrics.jsonl").write_text('{"step": 1, "split": "train"}\n')
    (path / "summary.json").write_text("{}\n")
    return path


def hold(path: Path) -> subprocess.Popen:
    """Another process holding the run directory, as a running run does."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    assert holder.stdout.readline().strip() == "held"
    return holder


def one_line_error(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


# -- the lock and the refusals ------------------------------------------------------------------------------
def test_a_directory_in_use_is_refused_and_the_lock_dies_with_its_process(tmp_path):
    run = finished_run(tmp_path / "run")
    holder = hold(run)
    try:
        for args in (["oneclick", "--output-dir", str(run)], ["oneclick", "--resume", str(run)],
                     ["oneclick", "--output-dir", str(run), "--overwrite"], ["eval", "--output-dir", str(run)]):
            assert f"{run}: in use by another run (pid {holder.pid})" in one_line_error(args)
        assert (run / "metrics.jsonl").read_text() == '{"step": 1, "split": "train"}\n'  # nothing was touched
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    claimed = claim_run_dir(run, resume=True)  # SIGKILL left no stale lock
    assert (run / LOCK_NAME).read_text().strip() == str(os.getpid())
    claimed.release()


def test_a_finished_run_is_refused_unless_resumed_or_overwritten(tmp_path):
    run = finished_run(tmp_path / "run")
    for command in ("oneclick", "eval"):
        line = one_line_error([command, "--output-dir", str(run)])
        assert f"{run}: already holds a run (checkpoints, metrics.jsonl, summary.json)" in line
        assert f"--resume {run}" in line and "--overwrite" in line
    claim_run_dir(run, resume=True).release()  # continuing it is fine
    claim_run_dir(run, overwrite=True).release()  # replacing it deletes the old run first
    assert sorted(p.name for p in run.iterdir()) == [LOCK_NAME]
    claim_run_dir(run).release()  # and what is left (only the lock file) is a fresh directory


def test_overwrite_never_deletes_a_directory_that_holds_no_run(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thesis.tex").write_text("years of work\n")
    line = one_line_error(["oneclick", "--output-dir", str(notes), "--overwrite"])
    assert "holds files that are not a run's (thesis.tex)" in line
    assert (notes / "thesis.tex").read_text() == "years of work\n"


def test_resume_and_overwrite_together_and_a_resume_without_checkpoint(tmp_path):
    run = finished_run(tmp_path / "run")
    assert "give one of them" in one_line_error(["oneclick", "--resume", str(run), "--overwrite"])
    empty = tmp_path / "empty"
    empty.mkdir()
    line = one_line_error(["oneclick", "--resume", str(empty)])
    assert line == f"error: {empty}: no checkpoint to resume from (expected {empty}/checkpoints/latest)"


def test_output_dir_that_is_a_file_or_cannot_be_written(tmp_path, make_unwritable):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory\n")
    assert f"{a_file}: exists and is not a directory" in one_line_error(["oneclick", "--output-dir", str(a_file)])
    line = one_line_error(["oneclick", "--output-dir", str(a_file / "run")])
    assert f"{a_file / 'run'}: cannot be used as a run directory (" in line
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    with make_unwritable(read_only):
        assert f"{read_only}: cannot be used as a run directory (" in one_line_error(
            ["oneclick", "--output-dir", str(read_only)])
        with pytest.raises(RunDirError, match="cannot be used as a run directory"):
            claim_run_dir(read_only / "run")


# -- checkpoints --------------------------------------------------------------------------------------------
def test_checkpoint_every_leaves_a_checkpoint_before_the_last_step():
    assert checkpoint_interval(10, 40) == 10
    assert checkpoint_interval(10, 5) == 2  # saves at 2, 4 and 5 instead of only at 5
    assert checkpoint_interval(10, 2) == 1 and checkpoint_interval(10, 1) == 1 and checkpoint_interval(3, 0) == 1


def test_a_failed_checkpoint_write_is_one_line_and_keeps_the_previous_checkpoint(tmp_path, make_unwritable):
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=32, n_positions=32, n_embd=16, n_layer=1, n_head=2))
    optimizer = torch.optim.AdamW(model.parameters())
    save_checkpoint(tmp_path, 1, model, None, optimizer, {"steps": 2})
    with make_unwritable(tmp_path / "checkpoints"):
        with pytest.raises(RunDirError) as failed:
            save_checkpoint(tmp_path, 2, model, None, optimizer, {"steps": 2})
    message = str(failed.value)
    assert "\n" not in message and f"{tmp_path}/checkpoints: checkpoint of step 2 could not be written" in message
    assert f"{tmp_path}/checkpoints/latest still names step-000001" in message
    assert latest_checkpoint(tmp_path).step == 1
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["latest", "step-000001"]


# -- the training CLI's other up-front checks ---------------------------------------------------------------
def test_a_model_directory_without_weights_or_tokenizer(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "gpt2"}\n')
    for command in ("oneclick", "eval"):
        assert "a Hugging Face model directory without weights" in one_line_error([command, "--model", str(model)])
    (model / "model.safetensors").write_bytes(b"")
    assert "without a tokenizer" in one_line_error(["oneclick", "--model", str(model)])


def test_bad_mubit_config_or_seed_lessons_fail_before_the_run_starts(tmp_path):
    mubit = tmp_path / "mubit.yaml"
    run_config = tmp_path / "run.yaml"
    run_config.write_text(f"mubit: {{config: {mubit}}}\n")
    out = tmp_path / "run"

    mubit.write_text("recall_limit: lots\n")
    started = time.monotonic()
    assert f"{mubit}: field 'recall_limit'" in one_line_error(["oneclick", "--config", str(run_config),
                                                               "--output-dir", str(out)])
    lessons = tmp_path / "lessons.jsonl"
    lessons.write_text('{"id": "l1", "text": "ok"}\n{"id": "l2", "text": ""}\n')
    mubit.write_text(f"seed_lessons: {lessons}\n")
    for command in ("oneclick", "eval"):
        line = one_line_error([command, "--config", str(run_config), "--output-dir", str(out)])
        assert f"{lessons}:2: field 'text' must be a non-empty string" in line
    assert not out.exists()  # refused before the run directory, governance or the policy
    logging.getLogger("training").info("bad Mubit files refused in %.1f s (3 CLI calls)", time.monotonic() - started)


# -- what the summary, report and last log line say ---------------------------------------------------------
def val(step: int, reward: float, n: int = 4) -> ValResult:
    results = [RolloutResult(f"ro-{step}-{i}", f"t{i}", "val", "succeeded") for i in range(n)]
    return ValResult(step, reward, {}, 0, {}, results)


def summary_of(records: list[dict], state: TrainState, credit: CreditReport) -> dict:
    return _summary(load_run_config(), records, SimpleNamespace(state=state), credit, None, False, 1.0)


def test_an_interrupted_run_before_any_later_validation_has_no_gain():
    credit = CreditReport("embedded", {}, 24, 0)
    first = {"step": 0, "split": "val", "reward": 0.3}
    train = {"step": 1, "split": "train", "rollouts": 8}
    interrupted = summary_of([first, train], TrainState(val=[val(0, 0.3)], last_step=1, rollouts=8,
                                                        interrupted=True), credit)
    assert (interrupted["val_reward_before"], interrupted["val_reward_after"], interrupted["val_reward_gain"]) == \
        (0.3, None, None)
    finished = summary_of([first, train, {"step": 1, "split": "val", "reward": 0.5}],
                          TrainState(val=[val(0, 0.3), val(1, 0.5)], last_step=1, rollouts=8), credit)
    assert finished["val_reward_gain"] == pytest.approx(0.2) and finished["comparable"] is True


def answered_val(step: int, rewards: list[float]) -> ValResult:
    results = [RolloutResult(f"ro-{step}-{i}", f"t{i}", "val", "succeeded", decision="answer", reward=r, reply="ok")
               for i, r in enumerate(rewards)]
    return ValResult(step, sum(rewards) / len(rewards), {}, len(rewards), {}, results)


def test_the_gain_comes_with_a_paired_interval_over_the_val_tasks():
    before = answered_val(0, [0.1, 0.5, -0.2, 0.8, 0.4, 0.0])
    assert paired_gain_interval(before, answered_val(20, [0.3, 0.7, 0.0, 1.0, 0.6, 0.2])) == [0.2, 0.2]
    mixed = answered_val(20, [0.9, -0.5, 0.6, 0.7, 0.1, 0.5])  # mean gain +0.05 from -0.9 ... +0.8
    low, high = paired_gain_interval(before, mixed)
    assert low < 0 < 0.05 < high
    assert paired_gain_interval(before, answered_val(20, [0.3])) is None  # one paired task: no interval
    credit = CreditReport("embedded", {}, 24, 0)
    records = [{"step": 0, "split": "val", "reward": before.reward_mean},
               {"step": 20, "split": "val", "reward": mixed.reward_mean}]
    summary = summary_of(records, TrainState(val=[before, mixed], last_step=20, rollouts=8), credit)
    assert summary["val_reward_gain_ci95"] == [low, high]
    resumed = summary_of(records, TrainState(val=[mixed], last_step=20, rollouts=8), credit)  # first val not here
    assert resumed["val_reward_gain_ci95"] is None


def test_a_run_without_its_memory_says_so_in_the_summary_report_and_last_log_line(tmp_path):
    outage = CreditReport("embedded", {"recall": 3, "record_outcome": 2}, 24, 0, rollouts_without_memory=4)
    state = TrainState(val=[val(0, 0.3), val(2, 0.1)], last_step=2, rollouts=8)
    records = [{"step": 0, "split": "val", "reward": 0.3}, {"step": 2, "split": "val", "reward": 0.1}]
    summary = summary_of(records, state, outage)
    expected = "Mubit memory was unavailable for 4 of 16 rollouts: the results are not comparable"
    assert summary["comparable"] is False and summary["warning"].startswith(expected)
    assert (summary["mubit_unavailable_rollouts"], summary["mubit_rollouts"]) == (4, 16)

    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    training_log = logging.getLogger("training")
    level = training_log.level
    training_log.addHandler(handler)
    training_log.setLevel(logging.INFO)  # as the CLI sets it: run on its own, the test must not rely on another
    try:
        _write_outputs(tmp_path, records, SimpleNamespace(state=state), summary)
    finally:
        training_log.removeHandler(handler)
        training_log.setLevel(level)
    assert json.loads((tmp_path / "summary.json").read_text())["warning"] == summary["warning"]
    report = (tmp_path / "report.md").read_text().splitlines()
    assert report[2].startswith(f"> **Warning:** {expected}")  # right under the title
    assert lines[-1].startswith(f"run finished: {tmp_path}; WARNING: {expected}")

    seeds_too = CreditReport("embedded", {"seed_lessons": 1}, 0, 0, rollouts_without_memory=0)
    assert "seed lessons could not be loaded" in seeds_too.unavailable_warning(16)
    write_report(tmp_path / "clean.md", "t", summary_of(records, state, CreditReport("embedded", {}, 24, 0)),
                 None, state.val[-1], [])
    assert "Warning" not in (tmp_path / "clean.md").read_text()
