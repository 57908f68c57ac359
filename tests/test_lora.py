"""LoRA GRPO on a tiny GPT-2 with the real peft: adapters train and the base stays frozen, the policy server
receives the adapters and then computes what the learner computes, a LoRA checkpoint resumes bit-exactly,
its merged directory loads with plain transformers, and adapter directories load as policies."""

import copy
import random

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel

from policy.loading import load_model, load_tokenizer
from policy.lora import LoraSettings, add_lora, is_lora, load_adapter, merged_copy, reference_mode, trainable_state
from policy.server import PolicyEngine, SamplingRow
from policy.tiny import TokenizerConfig, train_tokenizer
from training.checkpoint import latest_checkpoint, restore_training_state
from training.grpo import GRPOConfig, GRPOLearner, Sample, response_logprobs
from training.policy_update import PolicyUpdate

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CORPUS = ["Thank you for the question about the sample.", "We will verify the sampling method and report back.",
          "The results are preliminary and the evidence is not yet conclusive."] * 4
MESSAGES = [{"role": "system", "content": "Reply to the feedback."},
            {"role": "user", "content": "The sample is small; how was it drawn?"}]
SETTINGS = LoraSettings(r=4, alpha=8)


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory):
    """A tiny GPT-2 with our tokenizer and chat template, saved in Hugging Face format."""
    torch.manual_seed(0)
    tokenizer = train_tokenizer(CORPUS, TokenizerConfig(vocab_size=300, min_frequency=1))
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    path = tmp_path_factory.mktemp("base")
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def lora_model(base_dir, seed: int = 1):
    torch.manual_seed(seed)
    return add_lora(load_model(base_dir), SETTINGS)


def batch(offset: float = 0.0) -> list[Sample]:
    return [Sample("t", [1, 2, 3], [7, 8, 9], 1.0 + offset), Sample("t", [1, 2, 3], [9, 10, 11], -1.0 + offset),
            Sample("u", [4, 5], [12, 13], 0.5 + offset), Sample("u", [4, 5], [14], -0.5 + offset)]


def learner_of(model, kl_coef: float = 0.1) -> GRPOLearner:
    return GRPOLearner(model, None, GRPOConfig(lr=5e-2, kl_coef=kl_coef), pad_token_id=0,
                       reference_mode=lambda: reference_mode(model))


def test_adapters_train_and_the_base_stays_frozen(base_dir):
    model = lora_model(base_dir)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    learner = learner_of(model)
    assert {id(p) for group in learner.optimizer.param_groups for p in group["params"]} == \
        {id(p) for p in model.parameters() if p.requires_grad}  # the optimizer holds the adapters only
    for _ in range(2):
        metrics = learner.step(batch())
    changed = {name for name, p in model.named_parameters() if not torch.equal(p, before[name])}
    adapters = {name for name, p in model.named_parameters() if p.requires_grad}
    assert adapters and all("lora_" in name for name in adapters)
    assert changed == adapters  # every adapter moved, no base weight did
    assert metrics["kl"] > 0  # the reference (adapters disabled) now differs from the policy


def test_reference_mode_computes_the_base_model(base_dir):
    model = lora_model(base_dir)
    learner_of(model, kl_coef=0.0).step(batch())  # B != 0 from here on: the adapters change the outputs
    base = load_model(base_dir)
    with torch.no_grad():
        trained, _ = response_logprobs(model, batch(), 1.0, 0, torch.device("cpu"))
        with reference_mode(model):
            reference, _ = response_logprobs(model, batch(), 1.0, 0, torch.device("cpu"))
        plain, _ = response_logprobs(base, batch(), 1.0, 0, torch.device("cpu"))
    assert torch.equal(reference, plain)
    assert not torch.allclose(trained, plain)


def test_served_policy_equals_the_learner_after_an_update(base_dir, tmp_path):
    model = lora_model(base_dir)
    tokenizer = load_tokenizer(base_dir)
    engine = PolicyEngine(copy.deepcopy(model), tokenizer, model_name="policy")
    update = PolicyUpdate(learner_of(model), engine, tokenizer, tmp_path, {})
    update.apply(batch())
    version = engine.weights_version
    assert version == 1

    prompt = engine.prompt_ids(MESSAGES)
    served = engine.generate([SamplingRow(prompt, temperature=1.0, max_tokens=12, seed=3)])[0]
    with torch.no_grad():
        learned, _ = response_logprobs(model, [Sample("x", prompt, served.token_ids, 0.0)], 1.0, 0,
                                       torch.device("cpu"))
    assert torch.allclose(torch.tensor(served.logprobs), learned[0, : len(served.token_ids)], atol=1e-5)
    assert trainable_state(model.state_dict(), model).keys() == {n for n, p in model.named_parameters()
                                                                if p.requires_grad}


def test_lora_checkpoint_resumes_bit_exactly_and_its_merged_model_loads_plainly(base_dir, tmp_path):
    tokenizer = load_tokenizer(base_dir)

    def run(steps: int, resume=None):
        model = lora_model(base_dir)
        engine = PolicyEngine(copy.deepcopy(model), tokenizer, model_name="policy")
        update = PolicyUpdate(learner_of(model), engine, tokenizer, tmp_path, {"seed": 1})
        start = 0
        if resume is not None:
            ckpt = latest_checkpoint(resume)
            load_adapter(model, ckpt.path / "adapter")
            restore_training_state(ckpt, model, update.learner.optimizer)
            start = ckpt.step
        else:
            random.seed(1), np.random.seed(1), torch.manual_seed(1)
        for step in range(start + 1, steps + 1):
            noise = torch.rand(1).item() + random.random() + np.random.rand()  # RNG streams must continue
            update.apply(batch(noise))
            if step == 2 and resume is None:
                update.save(step, {})
        return model

    straight = run(4)
    ckpt = latest_checkpoint(tmp_path)
    assert ckpt.step == 2 and (ckpt.path / "adapter" / "adapter_config.json").is_file()
    resumed = run(4, resume=tmp_path)
    for (name, p), q in zip(straight.named_parameters(), resumed.parameters(), strict=True):
        assert torch.equal(p, q), name

    # The merged `model/` is a plain HF directory: plain transformers loads it, and it computes the policy.
    plain = AutoModelForCausalLM.from_pretrained(ckpt.model_dir)
    assert not is_lora(plain) and type(plain).__name__ == "GPT2LMHeadModel"
    at_step_2 = lora_model(base_dir)
    load_adapter(at_step_2, ckpt.path / "adapter")
    ids = torch.tensor([[1, 2, 3, 7, 8, 9]])
    with torch.no_grad():
        assert torch.allclose(plain(ids).logits, at_step_2(ids).logits, atol=1e-5)


def test_an_adapter_directory_loads_as_a_policy(base_dir, tmp_path):
    model = lora_model(base_dir)
    learner_of(model, kl_coef=0.0).step(batch())
    model.save_pretrained(tmp_path / "adapter")
    loaded = load_model(tmp_path / "adapter")
    assert is_lora(loaded)
    ids = torch.tensor([[1, 2, 3, 7]])
    with torch.no_grad():
        assert torch.allclose(loaded(ids).logits, model(ids).logits, atol=1e-6)
        assert torch.allclose(merged_copy(loaded)(ids).logits, model(ids).logits, atol=1e-5)
    engine = PolicyEngine.from_pretrained(tmp_path / "adapter", model_name="policy")  # the tokenizer: the base's
    assert engine.prompt_ids(MESSAGES)
