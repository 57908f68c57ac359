"""The GRPO math and learner on a tiny GPT-2 (loss types, metrics, non-finite gradients), and exact checkpoint
resume."""

import math
import random

import numpy as np
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from training.checkpoint import CheckpointError, latest_checkpoint, restore_training_state, save_checkpoint
from training.config import load_run_config
from training.grpo import (
    GRPOConfig,
    GRPOLearner,
    Sample,
    group_advantages,
    grpo_loss,
    loss_normaliser,
    response_logprobs,
)

VOCAB = 32
CPU = torch.device("cpu")


def GRPOConfig_(**settings) -> GRPOConfig:  # noqa: N802 - reads like the config it builds
    """configs/oneclick.yaml's learner settings with `settings` over them."""
    return GRPOConfig.model_validate({**load_run_config().grpo.model_dump(), **settings})


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
    loss, stats = grpo_loss(new_req, old, new.detach(), adv, mask, clip_eps=0.2, kl_coef=0.1, loss_type="grpo")
    loss.backward()
    assert loss.item() == pytest.approx(-1.2, abs=1e-5)
    assert stats["clip_ratio/high"].item() == 2 and stats["clip_ratio/low"].item() == 0  # token counts
    assert stats["clip_ratio/high_max"].item() == 1.0 and stats["kl"].item() == pytest.approx(0.0, abs=1e-6)
    assert torch.allclose(new_req.grad, torch.zeros_like(new_req.grad), atol=1e-6)


def test_loss_types_normalise_tokens_as_trl_does():
    """One reply of 1 token with advantage +1 and one of 3 tokens with -1, ratio 1, no KL: per-token losses are
    -1 and +1. grpo averages per sequence ((-1) + (+1)) / 2 = 0; dapo over tokens (-1 + 3) / 4 = 0.5 (the long
    reply's tokens count fully); dr_grpo sums per sequence over max_tokens 4: (-1 + 3) / 4 / 2 = 0.25."""
    logp = torch.zeros(2, 3)
    mask = torch.tensor([[1.0, 0, 0], [1, 1, 1]])
    adv = torch.tensor([1.0, -1.0])
    samples = [Sample("g", [1], [2], 1.0), Sample("g", [1], [3, 4, 5], -1.0)]
    expected = {"grpo": 0.0, "dapo": 0.5, "dr_grpo": 0.25}
    for loss_type, value in expected.items():
        loss, _ = grpo_loss(logp, logp, None, adv, mask, 0.2, 0.0, loss_type, max_completion_length=4)
        assert loss.item() / loss_normaliser(samples, loss_type) == pytest.approx(value), loss_type
    with pytest.raises(ValueError, match="max_completion_length"):
        grpo_loss(logp, logp, None, adv, mask, 0.2, 0.0, "dr_grpo")


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo"])
def test_every_loss_type_learns(loss_type):
    model, ref = tiny_model(), tiny_model()
    learner = GRPOLearner(model, ref, GRPOConfig_(lr=1e-2, kl_coef=0.0, loss_type=loss_type), pad_token_id=0,
                          max_completion_length=8)
    good, bad = [7, 8, 9], [10, 11, 12, 13, 14]
    batch = [Sample("t", [1, 2], good, 1.0), Sample("t", [1, 2], bad, -1.0)] * 2

    def margin():
        with torch.no_grad():
            lp = [response_logprobs(model, [Sample("t", [1, 2], r, 0)], 0, CPU).logprobs.sum().item()
                  for r in (good, bad)]
        return lp[0] - lp[1]

    before = margin()
    for _ in range(5):
        learner.step(batch)
    assert margin() > before + 1.0


def test_step_metrics_come_from_the_models_logits():
    """Entropy is the policy's on the response tokens; the logprob gap is |learner - behaviour| before the
    update: 0 when the server reported this very model's logprobs, the offset when it did not."""
    model = tiny_model().eval()  # dropout off, as the learner runs it
    learner = GRPOLearner(model, None, GRPOConfig_(lr=1e-3, kl_coef=0.0), pad_token_id=0)
    batch = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [3], [9, 10, 11], -1.0)]
    with torch.no_grad():
        logp, mask, entropy = response_logprobs(model, batch, 0, CPU, entropy=True)
        probs = torch.softmax(model(torch.tensor([[1, 2, 7, 8]])).logits[0, 1], -1)
    first = -2  # responses are right-aligned: sample 0's first response token
    assert entropy[0, first].item() == pytest.approx(-(probs * probs.log()).sum().item(), rel=1e-4)
    for s, row, n in zip(batch, logp, (2, 3), strict=True):
        s.behaviour_logprobs = (row[-n:] - 0.25).tolist()  # a server 0.25 nats off on every token
    metrics = learner.step(batch)
    assert metrics["sampling/sampling_logp_difference/mean"] == pytest.approx(0.25, abs=1e-5)
    assert metrics["sampling/sampling_logp_difference/max"] == pytest.approx(0.25, abs=1e-5)
    assert metrics["entropy"] == pytest.approx(((entropy * mask).sum() / mask.sum()).item(), rel=1e-5)
    assert 0 < metrics["entropy"] <= math.log(VOCAB)
    assert metrics["learning_rate"] == 1e-3 and metrics["update_skipped"] == 0.0 and metrics["response_tokens"] == 5


def test_a_non_finite_gradient_skips_the_step():
    model = tiny_model()
    learner = GRPOLearner(model, None, GRPOConfig_(lr=1e-2, kl_coef=0.0), pad_token_id=0)
    before = [p.detach().clone() for p in model.parameters()]
    poisoned = [Sample("t", [1, 2], [7, 8], 1.0, behaviour_logprobs=[-math.inf, -1.0]),
                Sample("t", [1, 2], [9, 10], -1.0)]  # ratio exp(+inf) on a positive advantage: NaN gradient
    metrics = learner.step(poisoned)
    assert metrics["update_skipped"] == 1.0 and not math.isfinite(metrics["grad_norm"])
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before, strict=True))
    assert not learner.optimizer.state  # Adam's moments were never touched
    fine = learner.step([Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)])
    assert fine["update_skipped"] == 0.0 and math.isfinite(fine["grad_norm"])
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before, strict=True))


def test_response_logprobs_match_a_manual_forward():
    model = tiny_model().eval()
    s = Sample("g", prompt_ids=[1, 2, 3], response_ids=[4, 5], reward=0.0)
    short = Sample("g", prompt_ids=[1], response_ids=[6], reward=0.0)
    logp, mask, entropy = response_logprobs(model, [s, short], pad_id=0, device=CPU)
    logits = model(torch.tensor([[1, 2, 3, 4, 5]])).logits[0]  # raw: the server reports temperature-1 logprobs
    expected = torch.log_softmax(logits, -1)[[2, 3], [4, 5]]
    assert torch.allclose(logp[0], expected, atol=1e-5)
    short_logits = model(torch.tensor([[1, 6]])).logits[0]  # the left-padded short row computes the same
    assert torch.allclose(logp[1, 1], torch.log_softmax(short_logits, -1)[0, 6], atol=1e-5)
    assert mask.tolist() == [[1, 1], [0, 1]] and entropy is None  # responses are right-aligned


def _groups(seed: int) -> list[Sample]:
    """Three GRPO groups whose prompts differ in length, interleaved, with responses of 1 to 9 tokens."""
    gen = random.Random(seed)
    prompts = {g: [gen.randrange(1, VOCAB) for _ in range(n)] for g, n in (("a", 5), ("b", 9), ("c", 2))}
    return [Sample(g, prompts[g], [gen.randrange(1, VOCAB) for _ in range(gen.randint(1, 9))], gen.uniform(-1, 1))
            for _ in range(3) for g in prompts]


@pytest.mark.parametrize("architecture", ["gpt2", "llama"])
def test_a_shared_prompt_pass_gives_the_whole_sequence_logprobs_and_gradients(architecture):
    """A group's prompt run once, its cache repeated for each response, must give the same logprobs, entropy
    and gradients as every sequence run whole (GPT-2: the tiny policy; Llama: SmolLM2's architecture)."""
    if architecture == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                             max_position_embeddings=64))
    else:
        model = tiny_model()
    model.eval()
    samples = _groups(seed=1)
    results = {}
    for shared in (False, True):
        model.zero_grad()
        out = response_logprobs(model, samples, 0, CPU, entropy=True, share_prompts=shared)
        (out.logprobs * torch.linspace(0.5, 1.5, out.logprobs.shape[1])).sum().backward()
        results[shared] = out, [p.grad.clone() for p in model.parameters()]
    (whole, whole_grads), (once, once_grads) = results[False], results[True]
    assert torch.equal(whole.mask, once.mask)
    assert torch.allclose(whole.logprobs, once.logprobs, atol=1e-5)
    assert torch.allclose(whole.entropy, once.entropy, atol=1e-5)
    for g, h in zip(whole_grads, once_grads, strict=True):
        assert torch.allclose(g, h, atol=1e-5, rtol=1e-4)


def test_the_learner_updates_the_same_with_and_without_shared_prompts():
    """Interleaved groups are regrouped into micro-batches; the loss, the metrics and the gradient (still on the
    parameters after the step) are those of the whole-sequence passes."""
    samples = _groups(seed=2)
    models, metrics = {shared: tiny_model() for shared in (False, True)}, {}
    for shared, model in models.items():
        learner = GRPOLearner(model, tiny_model(1), GRPOConfig_(lr=1e-2, kl_coef=0.05, micro_batch_size=3,
                                                               share_prompts=shared), pad_token_id=0)
        metrics[shared] = learner.step(samples)
    assert metrics[True]["response_tokens"] == metrics[False]["response_tokens"] == sum(
        len(s.response_ids) for s in samples)
    for key in ("loss", "kl", "entropy", "grad_norm"):
        assert metrics[True][key] == pytest.approx(metrics[False][key], rel=1e-4, abs=1e-6), key
    for p, q in zip(models[False].parameters(), models[True].parameters(), strict=True):
        assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6)


def test_learner_raises_probability_of_rewarded_responses():
    model, ref = tiny_model(), tiny_model()
    learner = GRPOLearner(model, ref, GRPOConfig_(lr=1e-2, kl_coef=0.0), pad_token_id=0)
    good, bad = [7, 8, 9], [10, 11, 12]
    batch = [Sample("t", [1, 2], good, 1.0), Sample("t", [1, 2], bad, -1.0)] * 2

    def logp(resp):
        with torch.no_grad():
            lp = response_logprobs(model, [Sample("t", [1, 2], resp, 0)], 0, CPU).logprobs
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
        learner = GRPOLearner(model, ref, GRPOConfig_(lr=1e-2, kl_coef=beta), pad_token_id=0)
        for _ in range(8):
            metrics = learner.step(batch)
        assert metrics["kl"] >= 0
        with torch.no_grad():
            new, mask, _ = response_logprobs(model, batch, 0, CPU)
            old = response_logprobs(ref, batch, 0, CPU).logprobs
        drift[beta] = ((new - old).abs() * mask).sum().item()
    assert drift[5.0] < 0.5 * drift[0.0]


def test_behaviour_logprobs_are_used_for_the_ratio():
    model = tiny_model()
    learner = GRPOLearner(model, None, GRPOConfig_(lr=1e-3, kl_coef=0.0, clip_eps=0.2), pad_token_id=0)
    stale = [Sample("t", [1, 2], [7, 8], 1.0, behaviour_logprobs=[-9.0, -9.0]),
             Sample("t", [1, 2], [9, 10], -1.0, behaviour_logprobs=[-9.0, -9.0])]
    # A far-off behaviour policy: every ratio is far above 1 + eps, so the positive reply's tokens are clipped
    # (high) and the negative one's are not (the min keeps the unclipped, larger penalty).
    metrics = learner.step(stale)
    assert metrics["clip_ratio/high_mean"] == 0.5 and metrics["clip_ratio/low_mean"] == 0.0
    assert metrics["clip_ratio/region_mean"] == 0.5 and metrics["clip_ratio/high_max"] == 1.0
    fresh = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)]
    assert learner.step(fresh)["clip_ratio/region_mean"] == 0.0  # no behaviour logprobs: ratio 1


def test_padding_micro_batches_leave_the_update_unchanged():
    """Under FSDP every rank runs the same number of micro-batches; the extra ones must add nothing."""
    batch = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0), Sample("u", [3], [4], 0.5)]
    plain, padded = tiny_model(), tiny_model()
    config = GRPOConfig_(lr=1e-2, kl_coef=0.0, micro_batch_size=2)
    metrics = GRPOLearner(plain, None, config, pad_token_id=0).step(batch)
    padded_metrics = GRPOLearner(padded, None, config, pad_token_id=0).step(batch, micro_batches=4)
    assert metrics == padded_metrics
    for p, q in zip(plain.parameters(), padded.parameters(), strict=True):
        assert torch.equal(p, q)


def test_checkpoint_resume_is_exact(tmp_path):
    batch = [Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)]

    def run(steps, resume=None):
        model = tiny_model()
        learner = GRPOLearner(model, None, GRPOConfig_(lr=1e-2, kl_coef=0.0), pad_token_id=0)
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
    learner = GRPOLearner(model, None, GRPOConfig_(lr=1e-2, kl_coef=0.0), pad_token_id=0)
    learner.step([Sample("t", [1, 2], [7, 8], 1.0), Sample("t", [1, 2], [9, 10], -1.0)])
    path = save_checkpoint(tmp_path, 1, model, None, learner.optimizer, {"seed": 1})
    torch.save(learner.optimizer.state_dict(), path / "optimizer.pt")
    fresh = GRPOLearner(tiny_model(), None, GRPOConfig_(lr=1e-2, kl_coef=0.0), pad_token_id=0)
    restore_training_state(latest_checkpoint(tmp_path), fresh.model, fresh.optimizer)
    restored = fresh.optimizer.state_dict()["state"]
    for index, state in learner.optimizer.state_dict()["state"].items():
        assert torch.equal(restored[index]["exp_avg"], state["exp_avg"])
