"""SmolLM2's warm start (policy.pretrained): the examples are the train split's good references cut to whole
sentences, the LoRA SFT changes the projections and nothing else, and the merged result is a plain Hugging Face
directory. The SFT runs on a tiny GPT-2 here (the real one takes minutes: docs/policy.md has its figures)."""

import io
import json
import re

import pytest
import torch
from rich.console import Console
from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel

from data import load_feedback
from policy.lora import LoraSettings
from policy.pretrained import load_source, warm_start, warm_start_examples, warm_start_key, whole_sentences
from policy.sft import TrainConfig
from policy.tiny import TokenizerConfig, train_tokenizer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def config():
    return load_source().warm_start


def test_whole_sentences_keeps_the_leading_sentences_that_fit():
    text = "One two three. Four five six seven! Eight nine? Ten."
    assert whole_sentences(text, 7) == "One two three. Four five six seven!"
    assert whole_sentences(text, 3) == "One two three."
    assert whole_sentences(text, 2) == "One two three."  # never empty: the first sentence stays
    assert whole_sentences(text, 100) == text


def test_the_examples_are_good_references_cut_to_whole_sentences(config):
    examples = warm_start_examples(config)
    assert len(examples) == config.examples
    assert len({e.task_id for e in examples}) == len(examples)  # one good reference per task
    tasks = {t["id"]: t for t in load_feedback("train")}
    for example in examples:
        task = tasks[example.task_id]
        good = next(r["text"] for r in task["references"] if r["quality"] == "good")
        assert example.quality == "good" and good.startswith(example.reply)
        assert len(example.reply.split()) <= config.max_reply_words and re.search(r"[.!?]$", example.reply)
        prompt = example.messages[1]["content"]  # the redacted feedback: no raw personal data
        assert not [p["value"] for p in task["pii"] if p["type"] != "LOCATION" and p["value"] in prompt]
    assert warm_start_examples(config) == examples  # seeded


def test_the_cache_key_follows_the_settings(config):
    source = load_source()
    assert warm_start_key(source) == warm_start_key(load_source())
    changed = source.model_copy(update={"warm_start": config.model_copy(update={"examples": 3})})
    assert warm_start_key(changed) != warm_start_key(source)


def test_the_sft_changes_the_projections_and_the_merged_directory_loads_plain(tmp_path, config):
    torch.manual_seed(0)
    examples = warm_start_examples(config)[:4]
    corpus = [m["content"] for e in examples for m in e.messages] + [e.reply for e in examples]
    tokenizer = train_tokenizer(corpus, TokenizerConfig(vocab_size=400, min_frequency=1))
    gpt2 = GPT2Config(vocab_size=len(tokenizer), n_positions=1024, n_embd=16, n_layer=1, n_head=2,
                      eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    base = tmp_path / "base"
    GPT2LMHeadModel(gpt2).save_pretrained(base)
    tokenizer.save_pretrained(base)
    small = config.model_copy(update={
        "examples": 4,
        "lora": LoraSettings(enabled=True, r=2, alpha=4, dropout=0.0, target_modules="all-linear"),
        "train": TrainConfig(epochs=1, batch_size=2, learning_rate=5e-2, weight_decay=0.0, warmup_steps=0,
                             max_reply_tokens=64),
    })
    report = warm_start(base, small, tmp_path / "warm", Console(file=io.StringIO()))
    assert report["examples"] == 4 and report["base"] == str(base) and report["train"]["steps"] == 2
    assert json.loads((tmp_path / "warm" / "build_report.json").read_text())["examples"] == 4
    assert not (tmp_path / "warm" / "adapter_config.json").exists()  # merged: a plain model directory
    before = AutoModelForCausalLM.from_pretrained(base).state_dict()
    after = AutoModelForCausalLM.from_pretrained(tmp_path / "warm").state_dict()
    assert set(before) == set(after)
    changed = {name for name in before if not torch.equal(before[name], after[name])}
    assert changed and all(name.endswith(("c_attn.weight", "c_proj.weight", "c_fc.weight")) for name in changed)
