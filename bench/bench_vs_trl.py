"""Our GRPO training step against TRL's `GRPOTrainer` on the same work: completions/s, response tokens/s, s/step.

    python bench/bench_vs_trl.py [--policy tiny|default|both] [--rounds 2] [--steps 3] [--warmup 1] [--json]

The same work on both sides: the same model directory, the same prompts, the same reward, the same GRPO settings
(`WORK`: configs/oneclick.yaml's tasks per step x group size completions per step, temperature, top_p, max new
tokens, lr, KL beta and micro-batch size; one optimizer step per step's completions; fp32).

- Ours ("A"): the real thing, `python -m training.train_feedback oneclick` in a subprocess (agl Trainer, SQLite
  store, runner processes, policy server, Mubit credit hook), with configs/oneclick.yaml and `WORK` over it;
  the step times come from its metrics.jsonl (`timing/step_s`: rollouts, learner step and weight sync).
- TRL ("B"): `trl.GRPOTrainer` in a subprocess on the prompts our run just sent (read back from its store.db, in
  step order: the chat messages with the recalled lessons, rendered by the tokenizer's chat template), scored by
  `rewards.default_scorer()` on the same redacted feedback. A callback times each optimizer step (generation,
  reward, reference and policy passes). `bf16=False`: TRL's default bf16 autocast would make TRL ~10x slower
  on a CPU without native bf16 (this one), which would flatter us; `gradient_checkpointing=False`: TRL 1.x
  defaults it to True, which recomputes the forward in backward (memory for time) and would flatter us too;
  `use_cpu`, `disable_dropout`, `report_to=[]` as docs/performance.md says.

The first `--warmup` steps of every run are left out; runs alternate A B A B (`--rounds`), both sides get the
same environment and torch's default thread count. Each side's figures pool its measured steps over the rounds;
the ratios are ours / TRL's (for s/step: TRL's / ours, so > 1 means we are faster everywhere).
`--policy default` is the policy `make oneclick` trains (SmolLM2-135M-Instruct with LoRA, configs/oneclick.yaml);
`--policy tiny` the 1.1M-parameter scratch policy with the same LoRA settings. TRL gets the same LoRA
(`peft_config` from `policy.lora.lora_config`: rank, alpha, dropout, target modules) and the same loader.
TRL is an optional dependency of the bench only: `pip install -e '.[bench]'`.
"""

import al_integration  # noqa: F401  (offline defaults first; the subprocesses inherit them)

# isort: split

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.table import Table

from training.config import REPO_ROOT, load_run_config

app = typer.Typer(add_completion=False)
def _work() -> dict[str, Any]:
    """The GRPO work of a oneclick step, from configs/oneclick.yaml (the one source of its values)."""
    cfg = load_run_config()
    return {"tasks_per_step": cfg.rollouts.tasks_per_step, "group_size": cfg.rollouts.group_size,
            "temperature": cfg.sampling.temperature, "top_p": cfg.sampling.top_p, "max_tokens": cfg.sampling.max_tokens,
            "lr": cfg.grpo.lr, "kl_coef": cfg.grpo.kl_coef, "micro_batch_size": cfg.grpo.micro_batch_size}


WORK = _work()


def _log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def _run(argv: list[str], log_path: Path, what: str) -> None:
    with log_path.open("w") as log:
        code = subprocess.run(argv, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT).returncode
    if code != 0:
        tail = "\n".join(log_path.read_text().splitlines()[-15:])
        raise SystemExit(f"error: {what} failed (exit {code}); last lines of {log_path}:\n{tail}")


# -- ours: oneclick with WORK over the config -----------------------------------------------------------------
def ours_config(policy: str, steps: int) -> dict[str, Any]:
    """configs/oneclick.yaml with `WORK` over it, for the built-in `policy` (default: the config's own choice)."""
    cfg = load_run_config()
    r, s, g = cfg.rollouts, cfg.sampling, cfg.grpo
    chosen = cfg.policy if policy == "default" else cfg.policy.model_copy(update={"name": policy, "model": None})
    return cfg.model_copy(update={
        "steps": steps, "checkpoint_every": steps, "val_every": steps, "policy": chosen,
        "data": cfg.data.model_copy(update={"val_limit": 1}),  # validation is not timed: keep it short
        "rollouts": r.model_copy(update={"tasks_per_step": WORK["tasks_per_step"], "group_size": WORK["group_size"]}),
        "sampling": s.model_copy(update={k: WORK[k] for k in ("temperature", "top_p", "max_tokens")}),
        "grpo": g.model_copy(update={k: WORK[k] for k in ("lr", "kl_coef", "micro_batch_size")}),
    }).model_dump(mode="json")


def run_ours(config: dict[str, Any], run_dir: Path) -> list[dict]:
    run_dir.mkdir(parents=True)
    config_path = run_dir.parent / f"{run_dir.name}.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    _run([sys.executable, "-m", "training.train_feedback", "oneclick", "--config", str(config_path), "--output-dir",
          str(run_dir)], run_dir.parent / f"{run_dir.name}.log", "our oneclick run")
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return [{"step": r["step"], "seconds": r["timing/step_s"], "completions": r["rollouts"],
             "response_tokens": r["response_tokens"], "rollout_seconds": r.get("timing/rollouts_s"),
             "update_seconds": r.get("timing/learner_s", 0) + r.get("timing/weight_sync_s", 0)}
            for r in records if r.get("split") == "train"]


def prompts_of(store_path: Path) -> list[dict]:
    """Each train step's tasks as our agent saw them: the prompt messages it sent and the redacted feedback, in
    step order, one row per task (TRL repeats each `num_generations` times)."""
    from al_integration.store import SqliteLightningStore
    from al_integration.store.report import iter_rollouts, rollout_record

    async def read() -> list[dict]:
        store = SqliteLightningStore(store_path, read_only=True)
        rows: dict[tuple[int, int], dict] = {}
        try:
            async for rollout in iter_rollouts(store):
                meta = rollout.metadata or {}
                if rollout.mode != "train" or meta.get("copy") != 0:
                    continue
                record = await rollout_record(store, rollout)
                prompt = next((s["attributes"]["agentlightning.message.body"] for s in record["spans"]
                               if s["attributes"].get("role") == "prompt"), None)
                if prompt is not None:
                    rows[(meta["step"], len(rows))] = {"prompt": json.loads(prompt),
                                                       "feedback": rollout.input["feedback"]}
        finally:
            await store.close()
        return [rows[k] for k in sorted(rows)]

    return asyncio.run(read())


# -- TRL ------------------------------------------------------------------------------------------------------
def run_trl(model: Path, prompts: list[dict], steps: int, out_dir: Path, threads: int | None,
            lora: dict | None) -> list[dict]:
    out_dir.mkdir(parents=True)
    spec = {"model": str(model), "prompts": prompts, "steps": steps, "threads": threads, "lora": lora,
            "output_dir": str(out_dir)}
    (out_dir / "spec.json").write_text(json.dumps(spec))
    _run([sys.executable, str(Path(__file__).resolve()), "--trl-worker", str(out_dir / "spec.json")],
         out_dir.parent / f"{out_dir.name}.log", "the TRL run")
    return json.loads((out_dir / "steps.json").read_text())


def trl_worker(spec_path: Path) -> None:
    """In its own process: GRPOTrainer on the prompts, one timed record per optimizer step into steps.json."""
    spec = json.loads(spec_path.read_text())
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from policy.loading import load_model, load_tokenizer
    from policy.lora import LoraSettings, lora_config
    from rewards import default_scorer

    if spec["threads"]:
        torch.set_num_threads(spec["threads"])
    scorer = default_scorer()

    def reward(prompts, completions, feedback, **_):
        return [scorer(completion[0]["content"], text).total for completion, text in zip(completions, feedback,
                                                                                          strict=True)]

    steps: list[dict] = []

    class StepTimer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            steps.append({"step": state.global_step, "seconds": time.perf_counter() - self.started})

    per_step = WORK["tasks_per_step"] * WORK["group_size"]
    accumulation = per_step // WORK["micro_batch_size"]
    config = GRPOConfig(
        output_dir=spec["output_dir"], use_cpu=True, bf16=False, disable_dropout=True, report_to=[],
        save_strategy="no", logging_steps=1, seed=7, shuffle_dataset=False, max_steps=spec["steps"],
        gradient_checkpointing=False,  # TRL's default True recomputes activations in backward; we do not
        per_device_train_batch_size=WORK["micro_batch_size"], gradient_accumulation_steps=accumulation,
        num_generations=WORK["group_size"], max_completion_length=WORK["max_tokens"],
        temperature=WORK["temperature"], top_p=WORK["top_p"], learning_rate=WORK["lr"], beta=WORK["kl_coef"],
    )
    model = load_model(Path(spec["model"]))  # our loader: the same weights our run starts from
    peft_config = lora_config(model, LoraSettings(**spec["lora"], enabled=True)) if spec["lora"] else None
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=config, peft_config=peft_config,
                          train_dataset=Dataset.from_list(spec["prompts"]),
                          processing_class=load_tokenizer(Path(spec["model"])), callbacks=[StepTimer()])
    trainer.train()
    lengths = [h["completions/mean_length"] for h in trainer.state.log_history if "completions/mean_length" in h]
    for record, mean_length in zip(steps, lengths, strict=True):
        record.update({"completions": per_step, "response_tokens": round(mean_length * per_step),
                       "torch_threads": torch.get_num_threads()})
    (Path(spec["output_dir"]) / "steps.json").write_text(json.dumps(steps))


# -- the comparison -------------------------------------------------------------------------------------------
def pooled(runs: list[list[dict]], warmup: int) -> dict[str, float]:
    measured = [step for run in runs for step in run[warmup:]]
    seconds = sum(s["seconds"] for s in measured)
    return {
        "steps": len(measured),
        "completions_per_s": sum(s["completions"] for s in measured) / seconds,
        "tokens_per_s": sum(s["response_tokens"] for s in measured) / seconds,
        "seconds_per_step": statistics.median(s["seconds"] for s in measured),
        "response_tokens_per_completion": sum(s["response_tokens"] for s in measured)
        / sum(s["completions"] for s in measured),
    }


def compare(policy: str, rounds: int, steps: int, warmup: int, out: Path, trl_threads: int | None) -> dict[str, Any]:
    config = ours_config(policy, warmup + steps)
    model = policy_dir(config)
    lora = {k: v for k, v in config["lora"].items() if k != "enabled"} if config["lora"]["enabled"] else None
    ours_runs, trl_runs = [], []
    for k in range(1, rounds + 1):
        _log(f"{policy}: round {k}/{rounds}: ours (oneclick, {warmup + steps} steps)")
        run_dir = out / f"{policy}-ours-{k}"
        ours_runs.append(run_ours(config, run_dir))
        _log(f"{policy}: round {k}/{rounds}: TRL GRPOTrainer on the same prompts")
        trl_runs.append(run_trl(model, prompts_of(run_dir / "store.db"), warmup + steps, out / f"{policy}-trl-{k}",
                                trl_threads, lora))
    ours, trl = pooled(ours_runs, warmup), pooled(trl_runs, warmup)
    return {
        "policy": policy, "model": str(model), "lora": lora, "rounds": rounds, "warmup_steps": warmup, "ours": ours,
        "trl": trl,
        "ratio": {"completions_per_s": ours["completions_per_s"] / trl["completions_per_s"],
                  "tokens_per_s": ours["tokens_per_s"] / trl["tokens_per_s"],
                  "seconds_per_step": trl["seconds_per_step"] / ours["seconds_per_step"]},
        "per_round": {"ours": ours_runs, "trl": trl_runs},
    }


def policy_dir(config: dict[str, Any]) -> Path:
    """The model directory our run starts from (built or converted on first use): TRL starts from it too."""
    from policy.loading import resolve_policy_dir
    from training.config import RunConfig

    p = RunConfig.model_validate(config).policy
    cfg = load_run_config()
    return resolve_policy_dir(p.name, cfg.resolve(p.model) if p.model is not None else None,
                              tiny_config=cfg.resolve(p.tiny_config), smollm2_config=cfg.resolve(p.smollm2_config))


def print_table(results: list[dict]) -> None:
    per_step = WORK["tasks_per_step"] * WORK["group_size"]
    table = Table(title=f"our GRPO step vs TRL GRPOTrainer, same work ({per_step} completions/step), pooled over "
                        "rounds")
    for column in ("policy", "side", "completions/s", "tokens/s", "s/step (median)", "tokens/completion", "steps"):
        table.add_column(column, justify="left" if column in ("policy", "side") else "right")
    for r in results:
        for side in ("ours", "trl"):
            f = r[side]
            table.add_row(r["policy"], side, f"{f['completions_per_s']:.2f}", f"{f['tokens_per_s']:.0f}",
                          f"{f['seconds_per_step']:.2f}", f"{f['response_tokens_per_completion']:.0f}",
                          str(f["steps"]))
        q = r["ratio"]
        table.add_row(r["policy"], "ours / TRL", f"{q['completions_per_s']:.2f}x", f"{q['tokens_per_s']:.2f}x",
                      f"{q['seconds_per_step']:.2f}x faster", "", "", end_section=True)
    Console(width=120).print(table)


@app.command()
def main(
    policy: Annotated[str, typer.Option(help="tiny, default (what `make oneclick` trains) or both")] = "both",
    rounds: Annotated[int, typer.Option(min=1, help="A B rounds (ours, then TRL on the same prompts)")] = 2,
    steps: Annotated[int, typer.Option(min=1, help="measured steps per run")] = 3,
    warmup: Annotated[int, typer.Option(min=0, help="steps left out at the start of every run")] = 1,
    trl_threads: Annotated[int | None, typer.Option(min=1, help="torch threads for TRL (default: torch's)")] = None,
    output_dir: Annotated[Path | None, typer.Option(help="runs and logs (default runs/bench-vs-trl-<time>)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    trl_worker_spec: Annotated[Path | None, typer.Option("--trl-worker", hidden=True)] = None,
) -> None:
    if trl_worker_spec is not None:
        trl_worker(trl_worker_spec)
        return
    if policy not in ("tiny", "default", "both"):
        raise typer.BadParameter("must be tiny, default or both", param_hint="--policy")
    try:
        import trl  # noqa: F401
    except ImportError:
        typer.echo("error: TRL is not installed; install the bench extra: pip install -e '.[bench]'", err=True)
        raise typer.Exit(2) from None
    out = output_dir or REPO_ROOT / "runs" / f"bench-vs-trl-{datetime.now():%Y%m%d-%H%M%S}"
    out.mkdir(parents=True, exist_ok=True)
    results = [compare(name, rounds, steps, warmup, out, trl_threads)
               for name in (["tiny", "default"] if policy == "both" else [policy])]
    summary = {"work": WORK, "cpus": os.cpu_count(), "output_dir": str(out), "results": results}
    (out / "result.json").write_text(json.dumps(summary, indent=1))
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        print_table(results)
        typer.echo(f"runs, logs and result.json: {out}")


if __name__ == "__main__":
    app()
