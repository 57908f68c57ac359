"""Throughput of the GRPO learner under torch.distributed: learner samples/s at 1, 2, ... processes.

What one measured step is: `DistributedPolicyUpdate.apply`, the update of `--mode distributed` without the
rollouts: rank 0 sends the batch to every rank; each rank takes its shard (`shard`), runs
`GRPOLearner.step` on the policy wrapped by `wrap_model` (DDP, or FSDP2 with `--fsdp`) with a reference
model for the KL term (kl_coef 0.05, as configs/oneclick.yaml), and loads the new weights into its policy
replica (a `PolicyEngine`, not serving here); the metrics and weight fingerprints are gathered. The batch
is synthetic and seeded: GRPO groups of 4 with random rewards, ~120-token prompts, ~100-token responses.

Weak scaling: every rank learns on `--batch-per-rank` samples, so the global batch grows with the process count.
After `--warmup` steps and a barrier, rank 0 times `--steps` steps; samples/s = global batch * steps / wall time,
and the scaling efficiency at N processes = samples/s(N) / (N * samples/s(1)) (target: >= 0.85). The counts are
measured `--rounds` times, alternating, and each keeps its fastest round, so a busy machine skews them alike.

- CPU (default without a GPU): gloo, one torch thread per process, so 1 vs 2 processes compares one core
  against two (the default `--nproc 1,2`);
- GPU: nccl, one process per GPU on cuda:LOCAL_RANK, bf16 autocast where supported (as training does), every
  count 1..torch.cuda.device_count() by default.

The processes are started by torch's elastic launcher (`elastic_launch`, what torchrun runs), once per count.
The default policy (~1.12M-parameter GPT-2) is built first if it is not cached; `--model` takes any local
Hugging Face causal LM directory whose tokenizer has a chat template (what the policy server needs).

    python bench/bench_distributed.py [--device cpu|cuda] [--nproc 1,2] [--steps 8] [--warmup 2]
                                      [--batch-per-rank 16] [--rounds 2] [--model PATH] [--fsdp] [--json]
"""

import al_integration  # noqa: F401  (offline defaults first)

# isort: split

import json
import logging
import os
import random
import statistics
import time
import uuid
from pathlib import Path
from typing import Annotated, Any

import torch
import typer
from rich.console import Console
from rich.table import Table
from torch.distributed.launcher.api import LaunchConfig, elastic_launch

from training.config import load_run_config
from training.grpo import Sample

app = typer.Typer(add_completion=False)
TARGET_EFFICIENCY = 0.85
GROUP_SIZE = 4


def synthetic_batch(n: int, vocab_size: int, prompt_len: int, response_len: int, seed: int) -> list[Sample]:
    """`n` samples in GRPO groups of 4; lengths within +-20% of the given ones; the same for every rank."""
    rng = random.Random(seed)

    def tokens(mean: int) -> list[int]:
        return [rng.randrange(vocab_size) for _ in range(rng.randint(int(mean * 0.8), int(mean * 1.2)))]

    return [Sample(group_id=f"g{i // GROUP_SIZE}", prompt_ids=tokens(prompt_len), response_ids=tokens(response_len),
                   reward=rng.random()) for i in range(n)]


def worker(model_path: str, device_kind: str, batch_per_rank: int, steps: int, warmup: int, fsdp: bool,
           prompt_len: int, response_len: int, seed: int) -> dict[str, Any] | None:
    """One rank (the elastic launcher's entrypoint). Rank 0 times `DistributedPolicyUpdate.apply`, the update
    `--mode distributed` runs: the batch sent to every rank, each rank's learner step on its shard, the new
    weights loaded into each rank's serving replica, the metrics gathered; the other ranks follow."""
    import tempfile

    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from policy.server import PolicyEngine
    from training.distributed import DistributedPolicyUpdate, bf16_autocast, init_distributed, wrap_model
    from training.grpo import GRPOLearner
    from training.policy_update import PolicyUpdate

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    ctx = init_distributed(device_kind, timeout_minutes=10)
    # One core per process (init_distributed gives a CPU rank cpu_count // N threads: 2 for 1 process here), so
    # 1 vs 2 processes compares one core against two; on a GPU the CPU threads only feed the device.
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        tokenizer = AutoTokenizer.from_pretrained(model_path)
        model = AutoModelForCausalLM.from_pretrained(model_path)
        reference = AutoModelForCausalLM.from_pretrained(model_path).to(ctx.device)
        autocast = bf16_autocast(ctx.device)
        engine = PolicyEngine(AutoModelForCausalLM.from_pretrained(model_path, dtype=autocast or torch.float32),
                              tokenizer, device=ctx.device)  # the replica; not serving here, only loading weights
        run = load_run_config()  # the learner settings of configs/oneclick.yaml
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        learner = GRPOLearner(wrap_model(model, ctx, fsdp), reference, run.grpo, pad_token_id=pad_id,
                              device=ctx.device, autocast_dtype=autocast,
                              max_completion_length=run.sampling.max_tokens)
        update = DistributedPolicyUpdate(PolicyUpdate(learner, engine, tokenizer, Path(tempfile.gettempdir()), {}),
                                         ctx)
        if not ctx.is_main:
            update.follow()
            return None
        batch = synthetic_batch(batch_per_rank * ctx.world_size, model.config.vocab_size, prompt_len, response_len,
                                seed)
        for _ in range(warmup):
            update.apply(batch)
        step_seconds, tokens = [], 0
        started = time.perf_counter()
        for _ in range(steps):  # each apply ends in an all-gather: every rank has finished the step
            t0 = time.perf_counter()
            metrics = update.apply(batch)
            step_seconds.append(time.perf_counter() - t0)
            tokens += int(metrics["response_tokens"])
        wall = time.perf_counter() - started
        update.close()
        return {
            "world_size": ctx.world_size,
            "device_name": torch.cuda.get_device_name(ctx.device) if ctx.device.type == "cuda" else "cpu",
            "backend": ctx.backend,
            "autocast": str(autocast).removeprefix("torch.") if autocast else "fp32",
            "torch_threads": torch.get_num_threads(),
            "parameters": sum(p.numel() for p in model.parameters()),
            "wall_s": wall,
            "step_s": step_seconds,
            "response_tokens": tokens,
            "replicas_in_sync": bool(metrics.get("replicas_in_sync", True)),
        }
    finally:
        import torch.distributed as dist

        dist.destroy_process_group()


def measure(nproc: int, args: tuple) -> dict[str, Any]:
    """Start `nproc` workers on this host with torch's elastic launcher; return rank 0's figures."""
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=nproc, rdzv_backend="c10d",
                          rdzv_endpoint="127.0.0.1:0", run_id=f"bench-{uuid.uuid4().hex[:8]}", max_restarts=0,
                          monitor_interval=0.5)
    return elastic_launch(config, worker)(*args)[0]


def default_model() -> Path:
    from policy.tiny import ensure_default_policy

    cfg = load_run_config()
    return ensure_default_policy(cfg.resolve(cfg.policy.tiny_config))


def parse_counts(nproc: str | None, device: str) -> list[int]:
    if nproc is None:
        counts = list(range(1, torch.cuda.device_count() + 1)) if device == "cuda" else [1, 2]
    else:
        try:
            counts = sorted({int(n) for n in nproc.split(",") if n.strip()})
        except ValueError as err:
            raise typer.BadParameter(f"a comma-separated list of process counts, got {nproc!r}",
                                     param_hint="--nproc") from err
    if not counts or counts[0] < 1:
        raise typer.BadParameter("process counts must be >= 1", param_hint="--nproc")
    if device == "cuda" and counts[-1] > torch.cuda.device_count():
        raise typer.BadParameter(f"{counts[-1]} processes but {torch.cuda.device_count()} GPU(s), one each",
                                 param_hint="--nproc")
    return counts if counts[0] == 1 else [1, *counts]  # 1 process is the baseline of the efficiency


@app.command()
def main(
    device: Annotated[str | None, typer.Option(help="cpu (gloo) or cuda (nccl); default: cuda if available")] = None,
    nproc: Annotated[str | None, typer.Option(help="process counts, e.g. 1,2 (default: 1,2 on CPU, every GPU "
                                                   "count on cuda); 1 is always measured")] = None,
    steps: Annotated[int, typer.Option(help="timed learner steps per count")] = 8,
    warmup: Annotated[int, typer.Option(help="untimed learner steps first")] = 2,
    batch_per_rank: Annotated[int, typer.Option(help="samples per process per step (weak scaling)")] = 16,
    model: Annotated[Path | None, typer.Option(help="a Hugging Face causal LM directory (default: the default "
                                                    "policy, built if missing)")] = None,
    fsdp: Annotated[bool, typer.Option("--fsdp", help="FSDP2 instead of DDP (training's --fsdp)")] = False,
    prompt_len: Annotated[int, typer.Option(help="mean prompt tokens")] = 120,
    response_len: Annotated[int, typer.Option(help="mean response tokens")] = 100,
    rounds: Annotated[int, typer.Option(help="rounds over all counts, alternating; each count keeps its best "
                                             "(a busy machine skews every count alike)")] = 2,
    seed: Annotated[int, typer.Option(help="seeds the synthetic batch")] = 7,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
):
    """Measure GRPO learner samples/s at each process count and the scaling efficiency against 1 process."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device not in ("cpu", "cuda"):
        raise typer.BadParameter(f"cpu or cuda, got {device!r}", param_hint="--device")
    if device == "cuda" and not torch.cuda.is_available():
        raise typer.BadParameter(f"torch {torch.__version__} sees no GPU here; use --device cpu",
                                 param_hint="--device")
    if steps < 1 or warmup < 0 or batch_per_rank < 1 or rounds < 1:
        raise typer.BadParameter("--steps, --batch-per-rank and --rounds must be >= 1, --warmup >= 0")
    counts = parse_counts(nproc, device)
    if model is not None and not (model / "config.json").is_file():
        raise typer.BadParameter(f"{model} is not a Hugging Face model directory (no config.json)",
                                 param_hint="--model")
    logging.getLogger("torch.distributed.elastic").setLevel(logging.WARNING)
    model_path = model.resolve() if model is not None else default_model()
    args = (str(model_path), device, batch_per_rank, steps, warmup, fsdp, prompt_len, response_len, seed)

    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
    for _ in range(rounds):
        for n in counts:
            runs[n].append(measure(n, args))
    rows = []
    for n in counts:
        r = min(runs[n], key=lambda run: run["wall_s"])
        global_batch = batch_per_rank * n
        rows.append({
            "processes": n,
            "device": device if device == "cpu" else r["device_name"],
            "backend": r["backend"],
            "wrapper": "fsdp2" if fsdp else "ddp",
            "autocast": r["autocast"],
            "torch_threads_per_process": r["torch_threads"],
            "global_batch": global_batch,
            "step_s": r["wall_s"] / steps,
            "step_s_median": statistics.median(r["step_s"]),
            "samples_per_s": global_batch * steps / r["wall_s"],
            "response_tokens_per_s": r["response_tokens"] / r["wall_s"],
            "wall_s": r["wall_s"],
            "round_wall_s": [run["wall_s"] for run in runs[n]],
            "replicas_in_sync": r["replicas_in_sync"],
        })
    base = rows[0]["samples_per_s"]
    for row in rows:
        row["efficiency"] = row["samples_per_s"] / (row["processes"] * base)
        row["target_met"] = row["efficiency"] >= TARGET_EFFICIENCY if row["processes"] > 1 else None
    result = {
        "model": str(model_path),
        "parameters": r["parameters"],
        "device": device,
        "steps": steps,
        "warmup": warmup,
        "rounds": rounds,
        "batch_per_rank": batch_per_rank,
        "group_size": GROUP_SIZE,
        "grpo": load_run_config().grpo.model_dump(),
        "target_efficiency": TARGET_EFFICIENCY,
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "results": rows,
    }
    if as_json:
        typer.echo(json.dumps(result))
        return
    first = rows[0]
    setup = f"{first['backend']}, {first['wrapper']}, {first['autocast']}"
    if device == "cpu":
        setup += f", {first['torch_threads_per_process']} torch thread per process"
    title = (f"GRPO learner, weak scaling ({setup}): {batch_per_rank} samples per process, {steps} timed steps "
             f"after {warmup} warm-up, best of {rounds} round{'s' if rounds > 1 else ''}; {model_path.name}, "
             f"{result['parameters'] / 1e6:.2f}M parameters")
    table = Table(title=title)
    for column in ("procs", "device", "backend", "global batch", "step s", "samples/s", "tokens/s", "efficiency"):
        table.add_column(column, justify="right")
    for row in rows:
        verdict = "" if row["target_met"] is None else (" PASS" if row["target_met"] else " MISS")
        table.add_row(str(row["processes"]), row["device"], row["backend"], str(row["global_batch"]),
                      f"{row['step_s']:.3f}", f"{row['samples_per_s']:.1f}", f"{row['response_tokens_per_s']:,.0f}",
                      f"{row['efficiency']:.2f}{verdict}")
    console = Console()
    if not console.is_terminal:  # rich's 80 columns would cut the headers short in a log
        console = Console(width=120)
    console.print(table)
    console.print(f"efficiency = samples/s(N) / (N * samples/s(1)), target >= {TARGET_EFFICIENCY}; tokens/s: "
                  "response tokens per second over all processes; step s: rank 0's wall time per timed step; "
                  f"{os.cpu_count()} CPU core(s) here.")


if __name__ == "__main__":
    app()
