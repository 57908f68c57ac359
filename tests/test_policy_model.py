"""The prompt format, the warm-start data (redaction, lesson pairing, loss mask) and the cached policy build.

The build test uses a tiny config so it runs in seconds; the real build's figures come from
`python -m policy.tiny build` (docs/policy.md)."""

import json
import random
import time

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from typer.testing import CliRunner

from agents.prompt import SENTIMENT_PREFIX, build_messages
from data import load_feedback, load_lessons
from policy.sft import _batch, encode_example
from policy.tiny import PolicyConfigError, app, build_policy, load_policy_config, train_tokenizer
from policy.tiny_data import LessonPairing, sft_examples, tokenizer_corpus

LESSONS = {lesson.id: lesson.text for lesson in load_lessons()}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def config():
    return load_policy_config()


@pytest.fixture(scope="module")
def train_tasks():
    return load_feedback("train")


@pytest.fixture(scope="module")
def examples(config, train_tasks):
    return sft_examples(train_tasks, LessonPairing(config.lesson_pairing, load_lessons()), config.seed)


def test_prompt_has_task_lessons_sentiment_and_feedback():
    system, user = build_messages("  The sample is <PERSON_1>'s.  ", "negative", ["Be honest.", " ", "Cite  sources."])
    assert system["role"] == "system" and user == {"role": "user", "content": "The sample is <PERSON_1>'s."}
    lines = system["content"].splitlines()
    assert "research team" in lines[0] and "No placeholders" in lines[1]  # who the model is, what a reply is
    assert lines[2:] == ["Lessons:", "- Be honest.", "- Cite sources.", "Sentiment of the feedback: negative"]
    assert "Lessons:" not in build_messages("x", "neutral", [])[0]["content"]
    with pytest.raises(ValueError, match="sentiment_label"):
        build_messages("x", "angry", [])


def test_warm_start_texts_never_contain_raw_pii(train_tasks, examples, config):
    values = {p["value"] for task in train_tasks for p in task["pii"]}
    assert len(values) > 50  # the train split does carry injected personal data
    corpus = "\n".join(tokenizer_corpus(train_tasks, load_lessons(), []))
    prompts = "\n".join(m["content"] for e in examples for m in e.messages)
    for value in values:
        assert value not in corpus and value not in prompts
    assert "<PERSON_1>" in prompts and "<EMAIL_1>" in prompts  # the governance stage's placeholders


def test_every_reference_is_paired_with_the_lessons_that_explain_it(examples, train_tasks):
    answerable = [t for t in train_tasks if t["expected_action"] == "answer"]
    assert len(examples) == 5 * len(answerable)
    helpful = {LESSONS[f"lesson-{i:02d}"] for i in range(1, 14)}
    distractors = {LESSONS["lesson-21"], LESSONS["lesson-22"]}
    explaining = {
        "too_short": {LESSONS["lesson-15"]},
        "oversold": {LESSONS[i] for i in ("lesson-14", "lesson-16", "lesson-19", "lesson-24")},
        "generic": {LESSONS["lesson-18"]},
        "off_tone": {LESSONS["lesson-17"], LESSONS["lesson-23"]},
    }
    for example in examples:
        lessons = {line[2:] for line in example.messages[0]["content"].splitlines() if line.startswith("- ")}
        assert len(lessons & distractors) == 1
        cause = lessons - distractors
        if example.quality == "good":
            assert 1 <= len(cause) <= 2 and cause <= helpful
        else:
            assert len(cause) == 1 and cause <= explaining[example.quality]
        if example.quality == "off_tone":
            praise = example.messages[0]["content"].endswith(f"{SENTIMENT_PREFIX} positive")
            assert cause == {LESSONS["lesson-23" if praise else "lesson-17"]}


def test_unknown_lesson_id_in_the_pairing_is_rejected(config):
    rules = config.lesson_pairing.model_copy(update={"distractors": ["lesson-99"]})
    with pytest.raises(ValueError, match="lesson-99"):
        LessonPairing(rules, load_lessons())


def test_encoding_equals_the_chat_template_and_masks_the_prompt(examples):
    tokenizer = train_tokenizer(tokenizer_corpus(load_feedback("val"), load_lessons(), []),
                                load_policy_config().tokenizer.model_copy(update={"vocab_size": 600}))
    example = examples[0]
    ids, prompt_len = encode_example(tokenizer, example, max_reply_tokens=500)
    full = tokenizer.apply_chat_template([*example.messages, {"role": "assistant", "content": example.reply}],
                                         return_dict=True)["input_ids"]
    assert ids == list(full)
    assert tokenizer.decode(ids[prompt_len:], skip_special_tokens=True) == example.reply
    short = encode_example(tokenizer, example, max_reply_tokens=3)[0]
    assert len(short) == prompt_len + 3 and short[-1] != tokenizer.eos_token_id  # cut replies get no end token
    input_ids, mask, labels = _batch([(ids, prompt_len), (ids[:prompt_len + 2], prompt_len)], tokenizer.pad_token_id)
    assert (labels[:, :prompt_len] == -100).all()  # no loss on the prompt
    assert labels[0, prompt_len:].tolist() == ids[prompt_len:]
    assert (labels[1, prompt_len + 2 :] == -100).all() and mask[1].sum() == prompt_len + 2  # nor on padding


@pytest.fixture(scope="module")
def tiny_config(config):
    return config.model_copy(update={
        "tokenizer": config.tokenizer.model_copy(update={"vocab_size": 512}),
        "model": config.model.model_copy(update={"n_layer": 1, "n_head": 2, "n_embd": 32, "n_positions": 1024}),
        "train": config.train.model_copy(update={"epochs": 0.1, "batch_size": 8, "warmup_steps": 2}),
        "sampling": config.sampling.model_copy(update={"max_tokens": 6}),
    })


def test_build_saves_a_loadable_hf_policy_and_caches_it(tiny_config, tmp_path, train_tasks):
    path, report = build_policy(tiny_config, cache_dir=tmp_path)
    assert path.parent == tmp_path and not list(tmp_path.glob(".tmp-*"))
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.vocab_size == len(tokenizer) == report["vocab_size"]
    messages = build_messages("The sample is small.", "neutral", ["Be honest."])
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=True)["input_ids"]
    assert tokenizer.convert_ids_to_tokens(prompt[-1]) == "<|assistant|>"
    assert tokenizer.eos_token == "<|end|>" and tokenizer.pad_token == "<|pad|>"
    assert report["train"]["steps"] == round(0.1 * 930 / 8)
    evaluation = report["evaluation"]
    assert evaluation["n_tasks"] == sum(t["expected_action"] == "answer" for t in load_feedback("val"))
    assert {"policy_random_lessons", "policy_helpful_lessons", "policy_misleading_lessons"} <= set(evaluation)
    assert evaluation["references_reward_mean"]["good"] > 0.8 > evaluation["references_reward_mean"]["oversold"]
    vocabulary = " ".join(tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))).replace("Ġ", "")
    for value in {p["value"] for task in train_tasks for p in task["pii"] if p["type"] == "EMAIL_ADDRESS"}:
        assert value.split("@")[0] not in vocabulary

    mtime = (path / "model.safetensors").stat().st_mtime_ns
    started = time.monotonic()
    again, cached = build_policy(tiny_config, cache_dir=tmp_path)
    assert again == path and cached == report and time.monotonic() - started < 5
    assert (path / "model.safetensors").stat().st_mtime_ns == mtime  # not retrained
    assert build_policy(tiny_config.model_copy(update={"seed": 8}), cache_dir=tmp_path)[0] != path


def test_training_is_seeded(tiny_config, tmp_path):
    a, _ = build_policy(tiny_config, cache_dir=tmp_path / "a")
    b, _ = build_policy(tiny_config, cache_dir=tmp_path / "b")
    state_a = AutoModelForCausalLM.from_pretrained(a).state_dict()
    state_b = AutoModelForCausalLM.from_pretrained(b).state_dict()
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)


def test_bad_config_is_one_line_error(tmp_path):
    bad = tmp_path / "policy.yaml"
    bad.write_text(json.dumps({**load_policy_config().model_dump(), "model": {"n_layer": 0}}))
    with pytest.raises(PolicyConfigError, match=r"policy.yaml: field 'model.n_layer'"):
        load_policy_config(bad)
    result = CliRunner().invoke(app, ["build", "--config", str(bad), "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2 and "model.n_layer" in result.output and "Traceback" not in result.output


def test_lesson_draws_are_reproducible(config):
    pairing = LessonPairing(config.lesson_pairing, load_lessons())
    draws = [pairing.draw("good", "neutral", random.Random(5)) for _ in range(2)]
    assert draws[0] == draws[1]


def test_build_cli_prints_the_path_and_the_val_figures_then_reuses_the_cache(tiny_config, tmp_path):
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(json.dumps(tiny_config.model_dump()))
    args = ["build", "--config", str(config_path), "--cache-dir", str(tmp_path / "cache")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    built = next((tmp_path / "cache").glob("policy-*"))
    assert f"policy: {built}" in first.output
    for row in ("3 random lessons", "3 helpful lessons", "3 misleading lessons", "reference: good"):
        assert row in first.output
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0 and "this call 0.0s" in second.output
