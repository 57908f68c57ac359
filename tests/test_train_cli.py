"""The training CLI's user mistakes: one line naming what is wrong, exit code 2, no traceback."""

import pytest
import torch
from typer.testing import CliRunner

from training.train_feedback import app

runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["oneclick", "--mode", "gpu"], "Invalid value for '--mode': 'gpu' is not one of 'cpu', 'distributed'"),
    (["oneclick", "--device", "cuda"], "--nproc, --device and --fsdp go with --mode distributed"),
    (["oneclick", "--mode", "distributed", "--device", "tpu"], "'tpu' is not one of 'cpu', 'cuda'"),
    (["oneclick", "--stepz", "3"], "No such option: --stepz"),
    (["oneclick", "grpo.lrr=1"], "grpo.lrr: unknown setting (did you mean grpo.lr?"),
    (["oneclick", "lr=1e-4"], "lr: unknown setting (did you mean grpo.lr?"),
    (["oneclick", "grpo.lr=fast"], "grpo.lr=fast: Input should be a valid number"),
    (["oneclick", "rollouts.group_size=1"], "rollouts.group_size=1: Input should be greater than or equal to 2"),
    (["oneclick", "grpo.loss_type=ppo"], "grpo.loss_type=ppo: Input should be 'grpo', 'dapo' or 'dr_grpo'"),
    (["oneclick", "grpo.lr"], "'grpo.lr': an override is KEY=VALUE"),
    (["oneclick", "reward.config=/nonexistent/reward.yaml"], "/nonexistent/reward.yaml: cannot read"),
    (["oneclick", "governance.config=/nonexistent/gov.yaml"], "/nonexistent/gov.yaml: cannot read"),
    (["eval", "sampling.temperature=0"], "sampling.temperature=0: Input should be greater than 0"),
    (["oneclick", "--config", "/nonexistent/oneclick.yaml"], "/nonexistent/oneclick.yaml: cannot read"),
    (["oneclick", "--resume", "/nonexistent/run"], "no checkpoint to resume from"),
    (["eval", "--split", "/nonexistent/tasks.jsonl"], "/nonexistent/tasks.jsonl: no such file"),
    (["eval", "--llm-endpoint", "http://127.0.0.1:9/v1"], "--llm-endpoint needs --model NAME"),
    (["eval", "--model", "/nonexistent/model"], "not a local Hugging Face model directory"),
])
def test_mistakes_are_one_line_errors(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_one_line_error():
    result = runner.invoke(app, ["oneclick", "--mode", "distributed", "--device", "cuda"])
    assert result.exit_code == 2
    assert result.output.startswith("error: --device cuda: torch ") and "sees no CUDA or ROCm GPU" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_bad_config_field_names_the_field(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("rollouts: {group_size: 1}\n")
    result = runner.invoke(app, ["oneclick", "--config", str(config)])
    assert result.exit_code == 2 and f"{config}: field 'rollouts.group_size'" in result.output
