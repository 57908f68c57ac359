"""Run under torchrun by tests/test_distributed.py: two GRPO steps on fixed batches, DDP or FSDP over gloo.

    python -m torch.distributed.run --standalone --nproc-per-node 2 tests/distributed_learner_check.py OUT \
        [--fsdp] [--loss-type grpo|dapo|dr_grpo]

Each rank learns on its shard of the batch exactly as `DistributedPolicyUpdate` does (training/distributed.py)
and writes OUT/rank<r>.pt: its full gradients after step 1 and its full weights after each step. Rank 0 also
writes OUT/single.pt: the same two steps by one plain process on the whole batches.
"""

import al_integration  # noqa: F401  (offline defaults)

# isort: split

import sys
from pathlib import Path

import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel

from training.config import load_run_config
from training.distributed import DistContext, shard, wrap_model
from training.grpo import GRPOConfig, GRPOLearner, Sample

MAX_TOKENS = 10  # dr_grpo's normaliser


def learner_config(loss_type: str) -> GRPOConfig:
    """configs/oneclick.yaml's learner with a large lr; micro-batches of 2 so that DDP's no_sync path runs too."""
    return GRPOConfig.model_validate({**load_run_config().grpo.model_dump(), "lr": 1e-2, "kl_coef": 0.1,
                                      "micro_batch_size": 2, "loss_type": loss_type})


def tiny_model() -> GPT2LMHeadModel:
    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=128,
                                      bos_token_id=0, eos_token_id=0))


def fixed_batch(step: int) -> list[Sample]:
    """3 GRPO groups of 3 samples of different lengths: 9 samples, so rank 0 gets 5 and rank 1 gets 4 and
    every group spans both ranks."""
    g = torch.Generator().manual_seed(step)
    samples = []
    for task in range(3):
        for _ in range(3):
            prompt = torch.randint(1, 64, (int(torch.randint(4, 12, (1,), generator=g)),), generator=g).tolist()
            response = torch.randint(1, 64, (int(torch.randint(3, 10, (1,), generator=g)),), generator=g).tolist()
            samples.append(Sample(f"task-{task}", prompt, response, reward=float(torch.rand(1, generator=g))))
    return samples


def full(tensor: torch.Tensor) -> torch.Tensor:
    """An FSDP2 shard (DTensor) gathered whole; a plain tensor as it is."""
    return (tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor).detach().clone()


def snapshot(model: torch.nn.Module, grads: bool) -> dict[str, torch.Tensor]:
    return {name.removeprefix("module."): full(p.grad if grads else p) for name, p in model.named_parameters()}


def main(out: Path, fsdp: bool, config: GRPOConfig) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    ctx = DistContext(dist.get_rank(), dist.get_rank(), dist.get_world_size(), torch.device("cpu"), "gloo",
                      dist.group.WORLD)
    learner = GRPOLearner(wrap_model(tiny_model(), ctx, fsdp), tiny_model(), config, pad_token_id=0,
                          max_completion_length=MAX_TOKENS)
    result: dict[str, object] = {}
    for step in (1, 2):
        learner.step(*shard(fixed_batch(step), ctx.rank, ctx.world_size, config))
        if step == 1:
            result["grads"] = snapshot(learner.model, grads=True)
        result[f"weights_{step}"] = snapshot(learner.model, grads=False)
    torch.save(result, out / f"rank{ctx.rank}.pt")

    if ctx.rank == 0:
        single = GRPOLearner(tiny_model(), tiny_model(), config, pad_token_id=0, max_completion_length=MAX_TOKENS)
        expected: dict[str, object] = {}
        for step in (1, 2):
            single.step(fixed_batch(step))
            if step == 1:
                expected["grads"] = snapshot(single.model, grads=True)
            expected[f"weights_{step}"] = snapshot(single.model, grads=False)
        torch.save(expected, out / "single.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    args = sys.argv[2:]
    loss_type = args[args.index("--loss-type") + 1] if "--loss-type" in args else load_run_config().grpo.loss_type
    main(Path(sys.argv[1]), fsdp="--fsdp" in args, config=learner_config(loss_type))
