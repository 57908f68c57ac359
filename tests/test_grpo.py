"""The GRPO math and learner on a tiny GPT-2, and exact checkpoint resume."""

import random

import numpy as np
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from training.checkpoint import CheckpointError, latest_checkpoint, restore_training_state, save_checkpoint
from training.grpo import GRPOConfig, GRPOLearner, Sample, group_advantages, grpo_loss, response_logprobs

VOCAB = 32


def tiny_model(seed: int = 0) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2))


def test_group_advantages_normalise_within_each_group():
    adv = group_advantages([1.0, 0.0, 0.5, 0.5, 2.0, -2.0], ["a", "a", "b", "b", "c", "c"]).tolist()
    assert adv[0] > 0 > adv[1] and adv[0] == pytest.approx(-adv[1])
    assert adv[2] == adv[3] == 0  # equal rewards: no signal
    assert adv[4] == pytest.approx(adv[0], rel=1e-4)  # scale-free within a group


def test_loss_is_clipped_and_kl_is_zero_against_itself():
    new = torch.log(torch.tensor([[0.5, 0.5]]))
    mask = torch.ones(1, 2)
    adv = torch.tensor([1.0])
    # Ratio 2 with positive advantage: clipped at 1 + eps, so the gradient through the ratio vanishes.
    old = new - torch.log(torch.tensor(2.0))
    new_req = new.clone().requires_grad_(True)
    loss, stats = grpo_loss(new_req, old, new.detach(), adv, mask, clip_eps=0.2, kl_coef=0.1)
    loss.backward()
    assert loss.item() == pytest.approx(-1.2, abs=1e-5)
    assert stats["clip_frac"].item() == 1.0 and stats["kl"].item() == pytest.approx(0.0, abs=1e-6)
    assert torch.allclose(new_req.grad, torch.zeros_like(new_req.grad), atol=1e-6)


def test_response_logprobs_match_a_manual_forward():
    model = tiny_model().eval()
    s = Sample("g", prompt_ids=[1, 2, 3], response_ids=[4, 5], reward=0.0)
    short = Sample("g", prompt_ids=[1], response_ids=[6], reward=0.0)
    logp, mask = response_logprobs(model, [s, short], temperature=0.7, pad_id=0, device=torch.device("cpu"))
    logits = model(torch.tensor([[1, 2, 3, 4, 5]])).logits[0] / 0.7
    expected = torch.log_softmax(logits, -1)[[2, 3], [4, 5]]
    assert torch.allclose(logp[0], expected, atol=1e-5)
    assert mask.tolist() == [[1, 1], [1, 0]]


def test_learner_raises_probability_of_rewarded_responses():
    model, ref = tiny_model(), tiny_model()
    learner = GRPOLearner(model, ref, GRPOConfig(lr=1e-2, kl_coef=0.0), pad_token_id=0)
    good, bad = [7, 8, 9], [10, 11, 12]
    batch = [Sample("t", [1, 2], good, 1.0), Sample("t", [1, 2], bad, -1.0)] * 2

    def logp(resp):
        with torch.no_grad():
            lp, _ = response_logprobs(model, [Sample("t", [1, 2], resp, 0)], 1.0, 0, torch.device("cpu"))
        return lp.sum().item()

    before = logp(good) - logp(bad)
    for _ in range(5):
        metrics = learner.step(batch)
    assert logp(good) - logp(bad) > before + 1.0
    assert metrics["response_tokens"] == 12 and metrics["grad_norm"] > 0


def test_kl_penalty_pulls_toward_the_reference():
    batch = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)]
    drift = {}
    for beta in (0.0, 5.0):
        model, ref = tiny_model(), tiny_model()
        learner = GRPOLearner(model, ref, GRPOConfig(lr=1e-2, kl_coef=beta), pad_token_id=0)
        for _ in range(8):
            metrics = learner.step(batch)
        assert metrics["kl"] >= 0
        with torch.no_grad():
            new, mask = response_logprobs(model, batch, 1.0, 0, torch.device("cpu"))
            old, _ = response_logprobs(ref, batch, 1.0, 0, torch.device("cpu"))
        drift[beta] = ((new - old).abs() * mask).sum().item()
    assert drift[5.0] < 0.5 * drift[0.0]


def test_behaviour_logprobs_are_used_for_the_ratio():
    model = tiny_model()
    learner = GRPOLearner(model, None, GRPOConfig(lr=1e-3, kl_coef=0.0, clip_eps=0.2), pad_token_id=0)
    stale = [Sample("t", [1, 2], [7, 8], 1.0, behaviour_logprobs=[-9.0, -9.0]),
             Sample("t", [1, 2], [9, 10], -1.0, behaviour_logprobs=[-9.0, -9.0])]
    assert learner.step(stale)["clip_frac"] == 1.0  # far-off behaviour policy: every token clipped
    fresh = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)]
    assert learner.step(fresh)["clip_frac"] == 0.0  # no behaviour logprobs: ratio 1


def test_padding_micro_batches_leave_the_update_unchanged():
    """Under FSDP every rank runs the same number of micro-batches; the extra ones must add nothing."""
    batch = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0), Sample("u", [3], [4], 0.5)]
    plain, padded = tiny_model(), tiny_model()
    config = GRPOConfig(lr=1e-2, kl_coef=0.0, micro_batch_size=2)
    metrics = GRPOLearner(plain, None, config, pad_token_id=0).step(batch)
    padded_metrics = GRPOLearner(padded, None, config, pad_token_id=0).step(batch, micro_batches=4)
    assert metrics == padded_metrics
    for p, q in zip(plain.parameters(), padded.parameters(), strict=True):
        assert torch.equal(p, q)


def test_checkpoint_resume_is_exact(tmp_path):
    batch = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)]

    def run(steps, resume=None):
        model = tiny_model()
        learner = GRPOLearner(model, None, GRPOConfig(lr=1e-2, kl_coef=0.0), pad_token_id=0)
        start = 0
        if resume is not None:
            ckpt = latest_checkpoint(resume)
            model.load_state_dict(GPT2LMHeadModel.from_pretrained(ckpt.model_dir).state_dict())
            restore_training_state(ckpt, model, learner.optimizer)
            start = ckpt.step
        else:
            random.seed(1), np.random.seed(1), torch.manual_seed(1)
        for step in range(start + 1, steps + 1):
            noise = torch.rand(1).item() + random.random() + np.random.rand()  # RNG streams must continue
            learner.step([Sample(s.group_id, s.prompt_ids, s.response_ids, s.reward + noise) for s in batch])
            if step == 2 and resume is None:
                save_checkpoint(tmp_path, step, model, None, learner.optimizer, {"seed": 1})
        return model

    straight = run(4)
    resumed = run(4, resume=tmp_path)
    for p, q in zip(straight.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(p, q)
    assert latest_checkpoint(tmp_path).step == 2


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint to resume from"):
        latest_checkpoint(tmp_path)


def test_checkpoints_with_an_index_keyed_optimizer_still_resume(tmp_path):
    """Checkpoints written before the name-keyed format hold `optimizer.state_dict()` as it is."""
    model = tiny_model()
    learner = GRPOLearner(model, None, GRPOConfig(lr=1e-2, kl_coef=0.0), pad_token_id=0)
    learner.step([Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)])
    path = save_checkpoint(tmp_path, 1, model, None, learner.optimizer, {"seed": 1})
    torch.save(learner.optimizer.state_dict(), path / "optimizer.pt")
    fresh = GRPOLearner(tiny_model(), None, GRPOConfig(lr=1e-2, kl_coef=0.0), pad_token_id=0)
    restore_training_state(latest_checkpoint(tmp_path), fresh.model, fresh.optimizer)
    restored = fresh.optimizer.state_dict()["state"]
    for index, state in learner.optimizer.state_dict()["state"].items():
        assert torch.equal(restored[index]["exp_avg"], state["exp_avg"])
