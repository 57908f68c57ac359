"""`--mode distributed`: the same GRPO learner on torch.distributed, one process per device.

    oneclick --mode distributed --nproc N   re-runs itself under `python -m torch.distributed.run`
                                            (torchrun's elastic agent), or is started by torchrun directly
    every rank    its device (LOCAL_RANK), the policy wrapped in DDP (or FSDP2 with --fsdp), a reference
                  model, and a PolicyServer replica of the current policy
    rank 0        also the agl algorithm, the store server, the runners and Mubit; it sends each update's
                  batch to every rank on a gloo group (a waiting rank never holds its GPU)
    each update   rank r learns on samples r, r+N, ...; DDP averages the gradients, so every rank takes the
                  same optimizer step; every replica loads the same new weights before the next rollouts

Backends: nccl on CUDA and ROCm (ROCm builds report `torch.version.hip` and keep the name nccl), gloo on CPU.
"""

import logging
import math
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from training.grpo import GRPOConfig, Sample, group_advantages, loss_normaliser

if TYPE_CHECKING:  # the policy server's imports (transformers, uvicorn) are not needed to launch torchrun
    from training.policy_update import PolicyUpdate

logger = logging.getLogger("training")
DEVICES = ("cpu", "cuda")


class DistributedSetupError(ValueError):
    """A device or process-count request this machine cannot meet; one line."""


def torchrun_env() -> bool:
    """True inside a process started by torchrun (it sets LOCAL_RANK, RANK, WORLD_SIZE, MASTER_ADDR...)."""
    return "LOCAL_RANK" in os.environ and "WORLD_SIZE" in os.environ


def check_device(device: str, nproc: int | None) -> int:
    """Validate `--device` / `--nproc` before anything starts; returns the number of processes per node."""
    if device not in DEVICES:
        raise DistributedSetupError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "cuda":
        if not torch.cuda.is_available():
            raise DistributedSetupError(f"--device cuda: torch {torch.__version__} sees no CUDA or ROCm GPU on this "
                                        "machine; use --device cpu")
        gpus = torch.cuda.device_count()
        if nproc is not None and nproc > gpus:
            raise DistributedSetupError(f"--nproc {nproc}: this machine has {gpus} GPU(s), one process each")
        return nproc or gpus
    return nproc or 2


def launch(argv: list[str], nproc: int) -> int:
    """Run `python -m training.train_feedback ARGV` as `nproc` workers under torchrun on this host; returns the
    exit code. Several hosts: start torchrun yourself on each (README, "Several machines").

    torchrun runs in its own session, so a Ctrl-C reaches this process only; it is passed on to the workers
    (rank 0 checkpoints and releases the others), not to torchrun's agent, which would kill them mid-save."""
    import psutil

    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
           "-m", "training.train_feedback", *argv]
    env = {"OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // nproc)), **os.environ}
    logger.info("launching %d processes: %s", nproc, " ".join(cmd[1:]))
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            for worker in psutil.Process(proc.pid).children():
                worker.send_signal(signal.SIGINT)


def handle_interrupts(ctx: "DistContext") -> None:
    """Rank 0 turns its first SIGINT into KeyboardInterrupt (checkpoint, then release the others) and ignores
    more, so a second Ctrl-C cannot break the checkpoint being written; the other ranks ignore SIGINT: they
    stop when rank 0 says so."""

    def first_interrupt(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, first_interrupt if ctx.is_main else signal.SIG_IGN)


@dataclass(frozen=True)
class DistContext:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device
    backend: str
    control: Any  # a gloo process group: batches and commands travel as pickled objects on the CPU

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def describe(self) -> str:
        where = str(self.device)
        if self.device.type == "cuda":
            where += f" ({torch.cuda.get_device_name(self.device)})"
            if torch.version.hip:
                where += f", ROCm/HIP {torch.version.hip}"
            elif torch.version.cuda:
                where += f", CUDA {torch.version.cuda}"
        return f"world size {self.world_size}, backend {self.backend}, rank {self.rank} on {where}"


def init_distributed(device: str, timeout_minutes: float) -> DistContext:
    """Join the process group torchrun set up (env:// rendezvous), on this rank's device."""
    local_rank = int(os.environ["LOCAL_RANK"])
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if device == "cuda":
        check_device("cuda", local_world)
        torch_device = torch.device("cuda", local_rank)
        torch.cuda.set_device(torch_device)
        backend = "nccl"
    else:
        torch_device, backend = torch.device("cpu"), "gloo"
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // local_world))  # one core share per rank
    timeout = timedelta(minutes=timeout_minutes)  # ranks > 0 wait this long for rank 0's rollouts
    dist.init_process_group(backend, timeout=timeout, device_id=torch_device if backend == "nccl" else None)
    control = dist.new_group(backend="gloo", timeout=timeout) if backend == "nccl" else dist.group.WORLD
    ctx = DistContext(dist.get_rank(), local_rank, dist.get_world_size(), torch_device, backend, control)
    logger.info("distributed: %s", ctx.describe())
    return ctx


def bf16_autocast(device: torch.device) -> torch.dtype | None:
    """bf16 autocast on GPUs that support it (Ampere and later, MI200 and later); fp32 elsewhere."""
    return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else None


def wrap_model(model: nn.Module, ctx: DistContext, fsdp: bool) -> nn.Module:
    """DDP (a full replica per rank, gradients all-reduced), or FSDP2 (parameters, gradients and optimizer
    state sharded per transformer block) for models that do not fit one device."""
    model.to(ctx.device)
    if not fsdp:
        return DistributedDataParallel(model, device_ids=[ctx.device.index] if ctx.device.type == "cuda" else None)
    from torch.distributed.fsdp import fully_shard

    block_types = set(getattr(model, "_no_split_modules", None) or [])  # HF names its transformer block class
    for module in model.modules():
        if type(module).__name__ in block_types:
            fully_shard(module)
    fully_shard(model)
    return model


class Shard(NamedTuple):
    """One rank's part of a batch, in the order of `GRPOLearner.step`'s arguments."""

    samples: list[Sample]
    advantages: torch.Tensor
    loss_scale: float
    micro_batches: int


def shard(samples: list[Sample], rank: int, world_size: int, config: GRPOConfig) -> Shard:
    """Samples rank, rank + N, ...; their advantages over the WHOLE batch (GRPO groups span ranks); the loss
    scale that makes the wrapper's gradient average the single-process gradient (the loss type's normaliser
    over the whole batch); and the micro-batch count of the largest shard, which every rank runs (the
    collectives must match)."""
    advantages = group_advantages([s.reward for s in samples], [s.group_id for s in samples], config.adv_eps)
    micro_batches = math.ceil(math.ceil(len(samples) / world_size) / config.micro_batch_size)
    index = list(range(rank, len(samples), world_size))
    if not index:  # fewer samples than ranks: join the collectives with a zero contribution
        return Shard(samples[:1], advantages[:1], 0.0, micro_batches)
    scale = world_size / loss_normaliser(samples, config.loss_type)
    return Shard([samples[i] for i in index], advantages[index], scale, micro_batches)


def weights_fingerprint(model: nn.Module) -> list[float]:
    """Per-parameter float64 sums: equal on every rank exactly when the replicas hold the same weights
    (one device-to-host copy for all of them)."""
    return torch.stack([p.detach().double().sum() for p in model.parameters()]).tolist()


def _combine(parts: list[tuple[dict[str, float], int]], world_size: int) -> dict[str, float]:
    """The whole batch's metrics from each rank's (metrics, samples it learned on): token means weighted by each
    rank's response tokens, minima and maxima over ranks, the slowest rank's times, counts added. Each rank's
    loss is already scaled to the whole batch, so they add up (over world_size, as the wrapper averages
    gradients). A rank with no sample of its own counts for nothing."""
    counted = [(m, m.get("response_tokens", 0) if n else 0) for m, n in parts]
    tokens = sum(t for _, t in counted) or 1
    merged: dict[str, float] = {}
    for key in parts[0][0]:
        values = [m[key] for m, t in counted if t]
        if key == "response_tokens":
            merged[key] = sum(values)
        elif key == "loss":
            merged[key] = sum(m[key] for m, _ in parts) / world_size
        elif key in ("grad_norm", "learning_rate", "update_skipped"):  # the same on every rank after all-reduce
            merged[key] = parts[0][0][key]
        elif key.startswith("timing/"):  # the slowest rank holds the others at the next collective
            merged[key] = max(m[key] for m, _ in parts)
        elif key.endswith("_min"):
            merged[key] = min(values, default=0.0)
        elif key.endswith("_max") or key.endswith("/max"):
            merged[key] = max(values, default=0.0)
        else:
            merged[key] = sum(m[key] * t for m, t in counted) / tokens
    return merged


class DistributedPolicyUpdate:
    """`PolicyUpdate` over all ranks. Rank 0's algorithm calls `apply` / `save` / `close`; the other ranks sit
    in `follow` and do the same collective work when rank 0's command arrives."""

    def __init__(self, local: "PolicyUpdate", ctx: DistContext):
        self.local, self.ctx = local, ctx
        # FSDP ranks hold different shards by design: only DDP replicas can be compared
        self.check_sync = isinstance(local.learner.model, DistributedDataParallel)

    # -- rank 0 ---------------------------------------------------------------------------------------------
    def apply(self, samples: list[Sample]) -> dict[str, float]:
        self._send(("update", samples))
        return self._update(samples)

    def save(self, step: int, metrics: dict[str, Any]) -> None:
        self._send(("save", step, metrics))
        self.local.save(step, metrics)

    def close(self) -> None:
        self._send(("stop",))

    def _send(self, command: tuple) -> None:
        dist.broadcast_object_list([command], src=0, group=self.ctx.control)

    # -- every rank -----------------------------------------------------------------------------------------
    def follow(self) -> None:
        """Ranks > 0: serve rank 0's commands until it says stop."""
        while True:
            box: list[Any] = [None]
            dist.broadcast_object_list(box, src=0, group=self.ctx.control)
            command, *args = box[0]
            if command == "update":
                self._update(*args)
            elif command == "save":
                self.local.save(*args)
            elif command == "stop":
                return

    def _update(self, samples: list[Sample]) -> dict[str, float]:
        learner = self.local.learner
        mine = shard(samples, self.ctx.rank, self.ctx.world_size, learner.config)
        metrics = self.local.apply(*mine)
        fingerprint = weights_fingerprint(learner.model) if self.check_sync else None
        parts: list[Any] = [None] * self.ctx.world_size
        counted = len(mine.samples) if mine.loss_scale else 0
        dist.all_gather_object(parts, (metrics, counted, fingerprint), group=self.ctx.control)
        merged = _combine([(m, n) for m, n, _ in parts], self.ctx.world_size)
        if self.check_sync:
            merged["replicas_in_sync"] = all(f == parts[0][2] for _, _, f in parts)
            if not merged["replicas_in_sync"]:
                logger.error("the ranks' weights differ after this update: the replicas no longer agree")
        return merged
