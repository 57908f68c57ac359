"""The run config: one typed model whose values live only in configs/oneclick.yaml, partial files and dotted
overrides laid over it, and the resolved config a run writes and `--resume` reads back."""

from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from training import grpo
from training.config import (
    GRPOConfig,
    RunConfig,
    RunConfigError,
    load_run_config,
    read_run_config,
    resolve_run_config,
    saved_run_config,
    write_resolved_config,
)


def test_defaults_live_only_in_the_yaml():
    """No field of the run config (nor of its sections in training/config.py) carries a default in code, and the
    learner reads the same GRPOConfig: a setting changed in configs/oneclick.yaml is the one the run uses."""

    def required(model) -> list[str]:
        missing = []
        for name, field in model.model_fields.items():
            if not field.is_required():
                missing.append(f"{model.__name__}.{name}")
            annotation = field.annotation
            # sections of the run config's own (policy/lora.py's LoraSettings also serves tests and benches)
            if isinstance(annotation, type) and issubclass(annotation, BaseModel) and \
                    annotation.__module__ == RunConfig.__module__:
                missing += required(annotation)
        return missing

    assert required(RunConfig) == []
    assert grpo.GRPOConfig is GRPOConfig
    assert load_run_config().grpo == GRPOConfig.model_validate(yaml.safe_load(
        (Path(__file__).parent.parent / "configs" / "oneclick.yaml").read_text())["grpo"])


def test_overrides_are_typed_by_the_field_they_name():
    cfg = load_run_config(overrides=[
        "grpo.lr=2e-4", "rollouts.group_size=8", "data.val_limit=16", "policy.model=/models/my model",
        "tracking.report_to=[tensorboard, mlflow]", "mubit.credit_modes=[train, val]", "data.train=123",
        "grpo.loss_type=grpo", "steps=5", "steps=7"])
    assert cfg.grpo.lr == 2e-4 and cfg.rollouts.group_size == 8 and cfg.data.val_limit == 16
    assert load_run_config(overrides=["data.val_limit=16", "data.val_limit=null"]).data.val_limit is None
    assert cfg.policy.model == Path("/models/my model") and cfg.data.train == "123"  # text fields keep the text
    assert cfg.tracking.report_to == ["tensorboard", "mlflow"] and cfg.mubit.credit_modes == ["train", "val"]
    assert cfg.grpo.loss_type == "grpo" and cfg.steps == 7  # the last one wins
    assert load_run_config(overrides=["tracking.report_to=none"]).tracking.report_to == []


def test_smoke_sizes_come_before_the_overrides():
    data, where = read_run_config()
    cfg = resolve_run_config(data, where, smoke=True, overrides=["rollouts.group_size=3"])
    smoke = load_run_config().smoke
    assert cfg.steps == smoke.steps and cfg.sampling.max_tokens == smoke.max_tokens
    assert cfg.rollouts.group_size == 3


@pytest.mark.parametrize("override, message", [
    ("grpo.lrr=1", "grpo.lrr: unknown setting (did you mean grpo.lr? grpo has: loss_type, lr,"),
    ("max_tokens=3", "max_tokens: unknown setting (did you mean sampling.max_tokens?"),
    ("grpo.lr.x=1", "grpo.lr.x: grpo.lr is a single setting, not a section"),
    ("grpo.micro_batch_size=2.5", "grpo.micro_batch_size=2.5: Input should be a valid integer"),
    ("tracking.report_to=[tensorboard, comet]", "tracking.report_to=[tensorboard, comet]: Input should be"),
    ("=3", "'=3': an override is KEY=VALUE"),
])
def test_a_bad_override_is_one_line_naming_the_key(override, message):
    with pytest.raises(RunConfigError) as e:
        load_run_config(overrides=[override])
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_a_partial_config_file_is_laid_over_the_defaults(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("grpo: {kl_coef: 0.1}\nreward: {config: /elsewhere/reward.yaml}\n")
    cfg = load_run_config(path)
    assert cfg.grpo.kl_coef == 0.1 and cfg.grpo.lr == load_run_config().grpo.lr
    assert cfg.reward.config == Path("/elsewhere/reward.yaml")
    path.write_text("- a list\n")
    with pytest.raises(RunConfigError, match="expected a mapping of settings, got list"):
        load_run_config(path)


def test_the_resolved_config_round_trips_and_fills_settings_an_old_run_lacked(tmp_path):
    cfg = load_run_config(overrides=["grpo.lr=2e-4", "seed=3"])
    write_resolved_config(cfg, tmp_path)
    assert resolve_run_config(*read_run_config(saved=saved_run_config(tmp_path))) == cfg
    old = cfg.model_dump(mode="json")
    del old["tracking"], old["grpo"]["loss_type"]  # a checkpoint written before these settings existed
    resumed = resolve_run_config(*read_run_config(saved=old))
    assert resumed.grpo.lr == 2e-4 and resumed.tracking == load_run_config().tracking
    assert resumed.grpo.loss_type == load_run_config().grpo.loss_type
