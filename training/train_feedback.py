"""The training CLI.

    python -m training.train_feedback oneclick [--output-dir DIR] [--steps N] [--smoke] [--resume DIR] [KEY=VALUE...]
    python -m training.train_feedback oneclick --mode distributed [--nproc N] [--device cuda|cpu] [--fsdp] ...
    python -m training.train_feedback eval [--split val] [--limit N] [--model PATH | --llm-endpoint URL --model NAME]
    python -m training.train_feedback runners [--n-runners N]      # on another host, with AGL_* set (README)

Both run the real stack in one process tree: the embedded Mubit engine and the policy server in this
process, an agl Trainer with the client/server strategy, the SQLite store and the Mubit credit hook, and
agl runner processes that execute `agents.feedback_agent.feedback_response_agent`. `--mode distributed`
runs the learner in N torchrun processes, each serving a policy replica (training/distributed.py); rank 0
holds everything else.

Any setting of the run config (configs/oneclick.yaml) can be overridden after the command as a dotted
`KEY=VALUE`, e.g. `oneclick grpo.lr=1e-4 rollouts.group_size=8 tracking.report_to=[tensorboard,wandb]`;
`--steps`, `--seed` and `--model` are short for `steps=`, `seed=` and `policy.model=`. The resolved config is
written to `<run>/config.yaml` and `--resume` continues with it.
"""

import json
import logging
import os
import socket
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from common.cli import OneLineErrors, run_cli
from data import SPLITS, DatasetError, load_feedback
from policy.loading import PolicyLoadError, PolicyName, check_policy_dir
from training.config import (
    RunConfig,
    RunConfigError,
    load_run_config,
    read_run_config,
    resolve_run_config,
    saved_run_config,
    write_resolved_config,
)
from training.run_dir import RunDirError

app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True, help=__doc__.split("\n\n")[0])
logger = logging.getLogger("training")
PolicyChoice = PolicyName  # typer shows the Literal's values as the option's choices


Overrides = Annotated[list[str] | None, typer.Argument(
    metavar="KEY=VALUE...", show_default=False,
    help="Settings of the run config to override, e.g. grpo.lr=1e-4 rollouts.group_size=8 (configs/oneclick.yaml).")]


class UserError(Exception):
    """A mistake in the command line, config or data: reported as one line, exit code 2."""


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def _setup_logging() -> None:
    """Our progress lines at INFO on stderr; libraries keep their own (warning) levels."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    for name in ("training", "al_integration"):
        ours = logging.getLogger(name)
        ours.setLevel(logging.INFO)
        ours.addHandler(handler)
        ours.propagate = False
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars on every model load


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RUN_DIR_HELD_ENV = "TRAIN_FEEDBACK_RUN_DIR_HELD_BY"  # set by the distributed launcher, which holds the lock
_claimed: list = []  # the run directories this process holds (their locks live as long as the process)


def _new_run_dir() -> Path:
    return Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S")


def _run_dir(path: Path, *, resume: bool = False, overwrite: bool = False, claim: bool = True) -> Path:
    """The run directory, locked for this process (training/run_dir.py); `claim=False` for a torchrun worker whose
    launcher (or rank 0) holds it."""
    from training.run_dir import claim_run_dir

    if not claim:
        path.mkdir(parents=True, exist_ok=True)
        return path
    _claimed.append(claim_run_dir(path, resume=resume, overwrite=overwrite))
    return path


def _check_mubit_files(cfg: RunConfig) -> None:
    """The run's Mubit config and seed lessons, read before the slow start-up (governance, the policy)."""
    from al_integration.mubit_config import ConfigError, load_mubit_config
    from al_integration.mubit_seed import SeedLessonError, read_seed_lessons

    try:
        mubit = load_mubit_config(cfg.resolve(cfg.mubit.config))
        if mubit.seed_lessons is not None:
            read_seed_lessons(mubit.seed_lessons)
    except (ConfigError, SeedLessonError) as e:
        raise UserError(str(e)) from None


def _use_stage_configs(cfg: RunConfig) -> None:
    """Point the reward and governance at the run config's files, here and in the runner processes (they are
    started from this one and inherit its environment): a bad file fails now, in one line."""
    from agents.governance import ConfigError as GovernanceConfigError
    from agents.governance import load_config as load_governance_config
    from rewards import ConfigError as RewardConfigError
    from rewards import load_config as load_reward_config

    reward, governance = cfg.resolve(cfg.reward.config), cfg.resolve(cfg.governance.config)
    try:
        load_reward_config(reward)
        load_governance_config(governance)
    except (RewardConfigError, GovernanceConfigError) as e:
        raise UserError(str(e)) from None
    os.environ["REWARD_CONFIG"], os.environ["GOVERNANCE_CONFIG"] = str(reward), str(governance)


def _check_trackers(cfg: RunConfig) -> None:
    import importlib.util

    for name in cfg.tracking.report_to:
        if importlib.util.find_spec(name) is None:
            raise UserError(f"tracking.report_to has {name}, but the {name} package is not installed "
                            f"(pip install -e '.[{name}]')")


def _governed_tasks(source: str, limit: int | None) -> tuple[list[dict], dict[str, int]]:
    """Load tasks and pass them through governance here, before they enter the store: a rollout's input is
    persisted, so it carries the redacted feedback only (plus id, category, topic for the Mubit query) and the
    governance result, which the agent uses instead of governing each of a group's G rollouts again.
    Returns the answerable tasks and the count of each decision."""
    rows = list(load_feedback(source))  # a bad file fails here, before governance loads its models
    from agents.governance import govern_many

    governed = govern_many([r["feedback"] for r in rows])
    decisions: dict[str, int] = {}
    tasks = []
    for row, g in zip(rows, governed, strict=True):
        decisions[g.decision] = decisions.get(g.decision, 0) + 1
        if g.decision == "answer":
            tasks.append({"id": row["id"], "feedback": g.redacted_text, "category": row["category"],
                          "topic": row["topic"], "governance": g.to_json_dict()})
    return (tasks[:limit] if limit else tasks), decisions


@dataclass
class Policy:
    endpoint: str
    model_name: str
    engine: Any = None  # the in-process PolicyEngine, when we serve the model ourselves


@contextmanager
def _serve_policy(engine, host: str = "127.0.0.1"):
    """Serve `engine` (a policy.server.PolicyEngine) over HTTP for the runners, on `host`, a free port."""
    from policy.server import PolicyServer

    with PolicyServer(engine, host=host) as server:
        yield Policy(server.endpoint, engine.model_name, engine)


def _policy_path(cfg: RunConfig, model: Path | None = None) -> Path:
    """The directory the run starts from (eval's `--model`, `policy.model`, or the built-in `policy.name`)."""
    from policy.loading import resolve_policy_dir

    p = cfg.policy
    chosen = model if model is not None else (cfg.resolve(p.model) if p.model is not None else None)
    return resolve_policy_dir(p.name, chosen, tiny_config=cfg.resolve(p.tiny_config),
                              smollm2_config=cfg.resolve(p.smollm2_config))


@contextmanager
def _credit_loop(cfg: RunConfig, run_dir: Path, credit_modes: list[str] | None):
    from al_integration.mubit_config import load_mubit_config
    from al_integration.mubit_loop import start_credit_loop

    loop = start_credit_loop(load_mubit_config(cfg.resolve(cfg.mubit.config)), run_dir, credit_modes=credit_modes)
    try:
        yield loop
    finally:
        loop.close()


def _load_reward_before_fork() -> None:
    """Build the reward scorer and load its spaCy parser in this process, once: agl forks the runner processes
    from it, and each runner would otherwise load the parser on its first reply (seconds of CPU apiece, n_runners
    times over, all at the first validation)."""
    from rewards import default_scorer
    from rewards.sentences import load_parser

    load_parser(default_scorer().config.coherence.spacy_model)


def _fit(algorithm, store, hook, n_runners: int) -> None:
    import agentlightning as agl

    from agents.feedback_agent import feedback_response_agent
    from al_integration.execution import SupervisedStrategy
    from al_integration.runner import QueueBell

    # The store server: 127.0.0.1 on a free port, unless AGL_SERVER_HOST / AGL_SERVER_PORT say where runners
    # on other hosts will connect (README, "Several machines").
    host = os.environ.get("AGL_SERVER_HOST", "127.0.0.1")
    port = int(os.environ.get("AGL_SERVER_PORT") or _free_port())
    bell = QueueBell()  # runners wait for it instead of polling the store (al_integration/runner.py)
    store.ring_on_enqueue(bell.ring)
    _load_reward_before_fork()
    trainer = agl.Trainer(
        algorithm=algorithm, n_runners=n_runners, store=store, hooks=[hook],
        # Runners wait on a bell the store rings when it enqueues (al_integration/runner.py), not on HTTP polls.
        runner={"type": "al_integration.runner.QueueBellRunner", "bell": bell, "poll_interval": 1.0},
        # agl's client/server strategy with a store only this run's runners may use, runners that die with
        # this process, and a lost runner's rollouts retried at once (al_integration/execution.py).
        strategy=SupervisedStrategy(role="both", n_runners=n_runners, server_host=host, server_port=port),
    )
    trainer.fit(feedback_response_agent, train_dataset=[{"id": "unused"}])


# ---------------------------------------------------------------------------------------------------------
@app.command("eval")
def evaluate(
    split: Annotated[str, typer.Option(help=f"A split ({', '.join(SPLITS)}) or a JSONL/CSV file.")] = "val",
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N answerable tasks.")] = None,
    model: Annotated[str | None, typer.Option(help="A local HF model dir, or the model NAME with --llm-endpoint.")]
    = None,
    llm_endpoint: Annotated[str | None, typer.Option(help="An OpenAI-compatible base URL (key: OPENAI_API_KEY).")]
    = None,
    output_dir: Annotated[Path | None, typer.Option(help="Default runs/<timestamp>.")] = None,
    config: Annotated[Path | None, typer.Option(help="Run config YAML (default configs/oneclick.yaml).")] = None,
    policy: Annotated[PolicyChoice | None, typer.Option(help="The built-in policy to evaluate (default: the "
                                                        "config's policy.name).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace the run already in --output-dir.")] = False,
    overrides: Overrides = None,
) -> None:
    """Run the agent over a split with a real agl Trainer and write store.db, mubit.db, summary.json, report.md."""
    _setup_logging()
    try:
        cfg = resolve_run_config(*read_run_config(config), overrides=overrides)
        _use_stage_configs(cfg)
        if llm_endpoint is not None and not model:
            raise UserError("--llm-endpoint needs --model NAME (the model the endpoint serves)")
        model_path = Path(model) if model and llm_endpoint is None else None
        if model_path is not None:
            check_policy_dir(model_path)
        if policy is not None:
            cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(update={"name": policy})})
        _check_mubit_files(cfg)
        run_dir = _run_dir(output_dir or _new_run_dir(), overwrite=overwrite)
        tasks, decisions = _governed_tasks(split, limit)
        if not tasks:
            raise UserError(f"{split}: no task that governance lets through to the agent")
    except (UserError, RunConfigError, DatasetError, PolicyLoadError, RunDirError) as e:
        _fail(str(e))
    started = time.monotonic()
    _run_eval(cfg, run_dir, tasks, split, model_path, llm_endpoint, model)
    logger.info("eval finished in %.0f s: %s", time.monotonic() - started, run_dir)


def _run_eval(cfg: RunConfig, run_dir: Path, tasks: list[dict], split: str, model_path: Path | None,
              llm_endpoint: str | None, model_name: str | None) -> None:
    import agentlightning as agl

    from al_integration.store import SqliteLightningStore
    from training.algorithm import EvalAlgorithm, llm_resource
    from training.outputs import (
        ProgressReporter,
        summarize_rewards,
        top_lessons,
        val_result,
        write_json_atomic,
        write_report,
    )

    started = time.monotonic()
    mode = split if split in SPLITS else "test"
    sampling = {"temperature": cfg.sampling.temperature, "top_p": cfg.sampling.top_p,
                "max_tokens": cfg.sampling.max_tokens, "seed": cfg.val_seed}
    progress = ProgressReporter(total_steps=len(tasks))
    with _credit_loop(cfg, run_dir, credit_modes=None) as loop:
        if llm_endpoint is not None:
            policy_cm = _external(llm_endpoint, model_name)
        else:
            from policy.server import PolicyEngine

            model_path = _policy_path(cfg, model_path).resolve()
            policy_cm = _serve_policy(PolicyEngine.from_pretrained(model_path, model_name="policy"))
        with policy_cm as policy:
            rollout_config = agl.RolloutConfig(timeout_seconds=cfg.rollouts.timeout_seconds,
                                               max_attempts=cfg.rollouts.max_attempts,
                                               retry_condition=["timeout", "unresponsive"])
            algo = EvalAlgorithm(tasks, llm_resource(policy.endpoint, policy.model_name, sampling), mode,
                                 rollout_config, on_progress=lambda done, total: progress.step(done, total, "rollouts"))
            # No more runner processes than tasks.
            _fit(algo, SqliteLightningStore(run_dir / "store.db"), loop.hook, min(cfg.rollouts.n_runners, len(tasks)))
        progress.close()
        report = loop.report()
    results = algo.results
    val = val_result(0, results)
    mean, std, comps = summarize_rewards(results)
    summary = {"split": split, "n": len(results), "reward_mean": mean, "reward_std": std,
               "reward_by_component": comps, "decisions": val.decisions, "answered": val.answered,
               "model": str(model_path) if model_path is not None else model_name, "mubit_outages": report.outage_total,
               **_memory_fields(report, len(results)), "wall_seconds": round(time.monotonic() - started, 1)}
    write_json_atomic(run_dir / "summary.json", summary)
    write_report(run_dir / "report.md", f"Evaluation on {split}", summary, None, val,
                 top_lessons(run_dir / "mubit.db"), examples=3)
    if summary["warning"]:
        logger.warning("warning: %s", summary["warning"])
    typer.echo(json.dumps(summary))


@contextmanager
def _external(endpoint: str, model_name: str):
    yield Policy(endpoint, model_name)


# ---------------------------------------------------------------------------------------------------------
@app.command()
def oneclick(
    output_dir: Annotated[Path | None, typer.Option(help="Default runs/<timestamp>.")] = None,
    steps: Annotated[int | None, typer.Option(min=0, help="Training steps (overrides the config).")] = None,
    config: Annotated[Path | None, typer.Option(help="Run config YAML (default configs/oneclick.yaml).")] = None,
    resume: Annotated[Path | None, typer.Option(help="Continue the run in DIR from its last checkpoint.")] = None,
    seed: Annotated[int | None, typer.Option(help="Overrides the config's seed.")] = None,
    smoke: Annotated[bool, typer.Option(help="A minimal run (few tasks, 2 steps), as CI runs it.")] = False,
    model: Annotated[Path | None, typer.Option(help="A local HF causal LM (or a LoRA adapter directory) instead "
                                               "of the built-in policy.")] = None,
    policy: Annotated[PolicyChoice | None, typer.Option(help="The built-in policy: smollm2 (the pretrained chat "
                                                        "model, default) or tiny (the scratch GPT-2 of --smoke).")]
    = None,
    mode: Annotated[Literal["cpu", "distributed"], typer.Option(
        help="cpu (one process) or distributed (torchrun, a process per device).")] = "cpu",
    nproc: Annotated[int | None, typer.Option(min=1, help="distributed: processes on this host (default: one per "
                                              "GPU with --device cuda, 2 with --device cpu).")] = None,
    device: Annotated[Literal["cpu", "cuda"], typer.Option(
        help="distributed: cuda (CUDA or ROCm GPUs, nccl) or cpu (gloo).")] = "cpu",
    fsdp: Annotated[bool, typer.Option(help="distributed: shard the model with FSDP instead of replicating it "
                                       "with DDP.")] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace the run already in --output-dir (its files are "
                                            "deleted).")] = False,
    overrides: Overrides = None,
) -> None:
    """Train the policy with GRPO (the product's main job) and write the run's outputs."""
    _setup_logging()
    from training.distributed import DistributedSetupError, check_device, torchrun_env

    worker = mode == "distributed" and torchrun_env()  # started by torchrun: one rank of the learner
    try:
        if mode == "cpu" and (nproc is not None or device != "cpu" or fsdp):
            raise UserError("--nproc, --device and --fsdp go with --mode distributed")
        if mode == "distributed":
            nproc = check_device(device, nproc)
        if worker and output_dir is None and resume is None:
            raise UserError("under torchrun, give --output-dir or --resume: every rank must use the same run directory")
        if model is not None:
            check_policy_dir(model)
        flags = [f"{key}={value}" for key, value in (("steps", steps), ("seed", seed), ("policy.name", policy),
                                                     ("policy.model", model and model.resolve())) if value is not None]
        # Under torchrun the launcher (or, started by hand, rank 0) holds the run directory for every rank.
        claim = not worker or (RUN_DIR_HELD_ENV not in os.environ and os.environ.get("RANK", "0") == "0")
        cfg, run_dir, ckpt = _prepare_run(config, resume, output_dir, smoke, [*(overrides or []), *flags],
                                          overwrite, claim)
        if ckpt is not None and ckpt.step > cfg.steps:
            raise UserError(f"{resume}: checkpoint is at step {ckpt.step}, past --steps {cfg.steps}")
        _use_stage_configs(cfg)
        _check_trackers(cfg)
        _check_mubit_files(cfg)
        if mode == "distributed" and not worker:  # a bad data file fails here, once, not in every rank
            for source in (cfg.data.train, cfg.data.val):
                list(load_feedback(source))
        if resume is None:  # claimed last, so that a mistake above leaves no directory behind
            _run_dir(run_dir, overwrite=overwrite, claim=claim)
    except (UserError, RunConfigError, DatasetError, DistributedSetupError, PolicyLoadError, RunDirError) as e:
        _fail(str(e))
    if mode == "distributed" and not worker:
        os.environ[RUN_DIR_HELD_ENV] = str(os.getpid())  # the workers inherit it and leave the lock to us
        _policy_path(cfg)  # builds the default policy once, before N processes look for it
        argv = _worker_argv(run_dir, resume is not None, config, smoke, device, fsdp, [*(overrides or []), *flags])
        from training.distributed import launch

        code = launch(argv, nproc)
        summary_path = run_dir / "summary.json"
        if code == 0 and summary_path.is_file() and json.loads(summary_path.read_text()).get("interrupted"):
            code = 130  # rank 0 stopped cleanly on Ctrl-C (exit 0, so torchrun reports no failure)
        raise typer.Exit(code=code)

    from training.checkpoint import CheckpointError
    from training.tracking import TrackerError

    ctx = None
    if worker:
        from training.distributed import handle_interrupts, init_distributed

        try:  # under a torchrun started by hand, more processes than GPUs fail here
            ctx = init_distributed(device, cfg.distributed.timeout_minutes)
        except DistributedSetupError as e:
            _fail(str(e))
        handle_interrupts(ctx)
    train_tasks, val_tasks = [], []
    if ctx is None or ctx.is_main:  # only the algorithm needs tasks
        try:
            train_tasks, _ = _governed_tasks(cfg.data.train, None)
            val_tasks, _ = _governed_tasks(cfg.data.val, cfg.data.val_limit)
            if not train_tasks:
                raise UserError(f"{cfg.data.train}: no task that governance lets through to the agent")
        except (UserError, DatasetError) as e:
            _fail(str(e))
    try:
        summary = _train(cfg, run_dir, ckpt, train_tasks, val_tasks, ctx, fsdp)
    except (CheckpointError, TrackerError, RunDirError) as e:
        _fail(str(e))
    finally:
        if ctx is not None:
            import torch.distributed as dist

            dist.destroy_process_group()
    if summary is None:  # a rank > 0: rank 0 writes the outputs
        return
    typer.echo(json.dumps(summary))
    if summary["interrupted"] and ctx is None:  # under torchrun the launcher exits 130
        raise typer.Exit(code=130)


def _worker_argv(run_dir: Path, resume: bool, config: Path | None, smoke: bool, device: str, fsdp: bool,
                 overrides: list[str]) -> list[str]:
    """The command line each torchrun worker runs: this one, with the run directory fixed for every rank."""
    argv = ["oneclick", "--mode", "distributed", "--device", device, "--resume" if resume else "--output-dir",
            str(run_dir)]
    if config is not None:
        argv += ["--config", str(config)]
    return argv + ["--smoke"] * smoke + ["--fsdp"] * fsdp + overrides


def _prepare_run(config: Path | None, resume: Path | None, output_dir: Path | None, smoke: bool,
                 overrides: list[str], overwrite: bool = False, claim: bool = True):
    """The resolved config, the run directory (claimed here only with --resume) and the checkpoint to resume
    from (None for a new run)."""
    from training.checkpoint import CheckpointError, latest_checkpoint

    if resume is None:
        cfg = resolve_run_config(*read_run_config(config), smoke=smoke, overrides=overrides)
        return cfg, output_dir or _new_run_dir(), None
    if overwrite:
        raise UserError("--overwrite replaces a run, --resume continues it: give one of them")
    if output_dir is not None and output_dir.resolve() != resume.resolve():
        raise UserError("--resume continues the run in its own directory; drop --output-dir")
    if resume.is_dir():  # a run still going there holds it: say that, not "no checkpoint yet"
        _run_dir(resume, resume=True, claim=claim)
    try:
        ckpt = latest_checkpoint(resume)
    except CheckpointError as e:
        raise UserError(str(e)) from None
    # The run's own config.yaml (older runs: the checkpoint's copy), unless --config names another.
    saved = None if config is not None else (saved_run_config(resume) or ckpt.config)
    cfg = resolve_run_config(*read_run_config(config, saved=saved, saved_from=f"{resume}/config.yaml"), smoke=smoke,
                             overrides=overrides)
    return cfg, resume, ckpt


def _policy_path_once(cfg: RunConfig, ctx) -> Path:
    """Under torchrun, the first process of each host builds the default policy if needed; the others wait."""
    if ctx is None:
        return _policy_path(cfg)
    import torch.distributed as dist

    path = _policy_path(cfg) if ctx.local_rank == 0 else None
    dist.barrier(group=ctx.control)
    return path or _policy_path(cfg)


def _train(cfg: RunConfig, run_dir: Path, ckpt, train_tasks: list[dict],
           val_tasks: list[dict], ctx=None, fsdp: bool = False) -> dict | None:
    """Train alone (`ctx` None) or as one rank of the distributed learner. Returns the summary on the process
    that ran the algorithm, None on the other ranks."""
    import copy
    import random

    import numpy as np
    import torch
    import torch.distributed as dist

    from policy.loading import adapter_base, is_adapter_dir, load_model, load_tokenizer
    from policy.lora import is_lora, reference_mode
    from policy.server import PolicyEngine
    from training.checkpoint import restore_training_state
    from training.distributed import DistributedPolicyUpdate, bf16_autocast, wrap_model
    from training.grpo import GRPOLearner
    from training.policy_update import PolicyUpdate, start_fingerprint

    wall_started = time.monotonic()
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)  # also seeds the adapters' initialisation
    device = ctx.device if ctx is not None else torch.device("cpu")
    base_path = _policy_path_once(cfg, ctx)
    tokenizer = load_tokenizer(base_path)
    policy_model = _learner_model(cfg, base_path, ckpt)
    lora = is_lora(policy_model)
    start_dir = ckpt.model_dir if ckpt is not None else (base_path if not is_adapter_dir(base_path)
                                                         else adapter_base(base_path))
    start_sha = start_fingerprint(policy_model, start_dir / "model.safetensors")
    autocast = bf16_autocast(device)
    replica = copy.deepcopy(policy_model).to(device=device, dtype=autocast)  # the policy server's own copy
    reference = None
    if cfg.grpo.kl_coef > 0 and not lora:  # full fine-tuning: the starting weights, as a second model
        reference = load_model(base_path).to(device)
    learner_model = wrap_model(policy_model, ctx, fsdp) if ctx is not None else policy_model
    # The shared-prompt pass runs two forwards per micro-batch, which DDP and FSDP have not been run with here.
    grpo = cfg.grpo if ctx is None else cfg.grpo.model_copy(update={"share_prompts": False})
    if grpo.share_prompts != cfg.grpo.share_prompts:
        logger.info("grpo.share_prompts is off under --mode distributed: every sequence runs whole")
    learner = GRPOLearner(
        learner_model, reference, grpo,
        pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
        device=device, autocast_dtype=autocast,
        reference_mode=(lambda: reference_mode(learner_model)) if lora else None,  # LoRA: the base itself
        max_completion_length=cfg.sampling.max_tokens,
    )
    start_step, elapsed_before = 0, 0.0
    if ckpt is not None:
        restore_training_state(ckpt, learner.model, learner.optimizer)  # and the RNG states: task sampling continues
        for group in learner.optimizer.param_groups:  # the resolved config's lr, not the checkpoint's
            group["lr"] = cfg.grpo.lr
        start_step, elapsed_before = ckpt.step, float(ckpt.metrics.get("elapsed_seconds", 0.0))
        logger.info("resuming %s from step %d", run_dir, start_step)
    host = cfg.distributed.policy_host if ctx is not None else "127.0.0.1"
    with _serve_policy(PolicyEngine(replica, tokenizer, model_name="policy", device=device), host) as policy:
        update = PolicyUpdate(learner, policy.engine, tokenizer, run_dir, cfg.model_dump(mode="json"))
        endpoints = [policy.endpoint]
        if ctx is not None:
            update = DistributedPolicyUpdate(update, ctx)
            endpoints = [None] * ctx.world_size
            dist.all_gather_object(endpoints, policy.endpoint, group=ctx.control)
            if not ctx.is_main:
                update.follow()  # until rank 0 says stop
                return None
        try:
            algo, credit = _run_algorithm(cfg, run_dir, update, endpoints, policy.model_name, train_tasks,
                                          val_tasks, start_step, elapsed_before)
        finally:
            update.close()
    if algo.state.write_error:  # the run directory stopped taking writes; what was saved before is kept
        raise RunDirError(algo.state.write_error)

    from training.outputs import MetricsLog

    records = MetricsLog(run_dir / "metrics.jsonl").records()
    summary = _summary(cfg, records, algo, credit, ctx, fsdp, elapsed_before + time.monotonic() - wall_started)
    summary.update({"model": str(base_path.resolve()), "policy": cfg.policy.name if cfg.policy.model is None
                    else None, "warm_start": _warm_start_summary(base_path),
                    "adapter": _adapter_summary(cfg, run_dir) if lora else None,
                    "resumed_from_step": start_step if ckpt is not None else None, "start_weights_sha256": start_sha})
    _write_outputs(run_dir, records, algo, summary)
    return summary


def _learner_model(cfg: RunConfig, base_path: Path, ckpt):
    """What the learner trains: the base with LoRA adapters (fresh, or the checkpoint's), or, with
    `lora.enabled: false`, all the weights (of the checkpoint when resuming)."""
    from policy.loading import is_adapter_dir, load_model
    from policy.lora import add_lora, load_adapter

    if not cfg.lora.enabled:
        model = load_model(ckpt.model_dir if ckpt is not None else base_path)
        return model.merge_and_unload() if is_adapter_dir(base_path) and ckpt is None else model
    if is_adapter_dir(base_path):  # continue training a saved adapter
        model = load_model(base_path, trainable=True)
    else:
        model = add_lora(load_model(base_path), cfg.lora)
    if ckpt is not None:
        load_adapter(model, ckpt.path / "adapter")
    return model


def _warm_start_summary(model_dir: Path) -> dict | None:
    """What a warm-started built-in policy was trained from (its build report), so the run names the
    pretrained weights too; None for any other model."""
    try:
        report = json.loads((model_dir / "build_report.json").read_text())
    except (OSError, ValueError):
        return None
    return {"from": report["base"], "examples": report["examples"]} if "base" in report else None


def _adapter_summary(cfg: RunConfig, run_dir: Path) -> dict:
    """Where the run's adapter is and how it was configured, so a user can tell which weights a run used."""
    pointer = run_dir / "checkpoints" / "latest"
    latest = run_dir / "checkpoints" / pointer.read_text().strip() if pointer.is_file() else None
    return {**cfg.lora.model_dump(mode="json"), "path": str(latest / "adapter") if latest else None,
            "merged": str(latest / "model") if latest else None}


def _run_algorithm(cfg: RunConfig, run_dir: Path, update, endpoints: list[str], model_name: str,
                   train_tasks: list[dict], val_tasks: list[dict], start_step: int, elapsed_before: float):
    """FeedbackGRPO inside an agl Trainer with the store, the runners and the Mubit credit loop."""
    from al_integration.store import SqliteLightningStore
    from training.algorithm import FeedbackGRPO
    from training.outputs import MetricsLog, ProgressReporter
    from training.tracking import open_trackers

    write_resolved_config(cfg, run_dir)
    trackers = open_trackers(cfg, run_dir, resume_step=start_step if start_step else None)
    metrics = MetricsLog(run_dir / "metrics.jsonl", resume_after_step=start_step if start_step else None,
                         trackers=trackers)
    if not start_step and metrics.path.exists():
        metrics.path.unlink()
    validated_at_start = any(r.get("split") == "val" and r.get("step") == start_step for r in metrics.records())
    progress = ProgressReporter(cfg.steps, first_step=start_step)
    with _credit_loop(cfg, run_dir, credit_modes=cfg.mubit.credit_modes) as loop:
        algo = FeedbackGRPO(cfg, update=update, endpoints=endpoints, model_name=model_name, train_tasks=train_tasks,
                            val_tasks=val_tasks, metrics=metrics, progress=progress, start_step=start_step,
                            elapsed_before=elapsed_before, validated_at_start=validated_at_start)
        try:
            _fit(algo, SqliteLightningStore(run_dir / "store.db"), loop.hook, cfg.rollouts.n_runners)
        except KeyboardInterrupt:  # Ctrl-C: the algorithm saved a checkpoint; write what the run has so far
            algo.state.interrupted = True
        finally:
            progress.close()
            trackers.close()
        return algo, loop.report()


def _memory_fields(credit, rollouts: int) -> dict:
    """How much of the run had its memory: a run that lost it is not comparable with one that had it."""
    warning = credit.unavailable_warning(rollouts)
    return {"mubit_unavailable_rollouts": credit.rollouts_without_memory, "mubit_rollouts": rollouts,
            "comparable": warning is None, "warning": warning}


def _summary(cfg: RunConfig, records: list[dict], algo, credit, ctx, fsdp: bool, wall_seconds: float) -> dict:
    val_records = [r for r in records if r.get("split") == "val"]
    before = val_records[0].get("reward") if val_records else None
    after = val_records[-1].get("reward") if len(val_records) > 1 else None  # no validation after training: null
    this_run = algo.state.rollouts + sum(len(v.results) for v in algo.state.val)  # train and val, this process
    summary = {
        "val_reward_before": before,
        "val_reward_after": after,
        "val_reward_gain": after - before if after is not None and before is not None else None,
        "val_reward_gain_ci95": _gain_interval(algo.state.val, val_records, cfg.seed),
        "steps": algo.state.last_step,
        "wall_seconds": round(wall_seconds, 1),
        "rollouts": sum(r.get("rollouts", 0) for r in records if r.get("split") == "train"),
        "skipped_updates": int(sum(r.get("update_skipped", 0) for r in records if r.get("split") == "train")),
        "mubit_outages": credit.outage_total,
        **_memory_fields(credit, this_run),
        "interrupted": algo.state.interrupted,
        "seed": cfg.seed,
        "mode": "cpu" if ctx is None else "distributed",
        "device": "cpu" if ctx is None else ctx.device.type,
        "world_size": 1 if ctx is None else ctx.world_size,
        "backend": None if ctx is None else ctx.backend,
        "sharding": None if ctx is None else ("fsdp" if fsdp else "ddp"),
    }
    return summary


def _gain_interval(vals: list, val_records: list[dict], seed: int) -> list[float] | None:
    """The gain's 95% interval over the val tasks, when this process ran both the first and the last validation
    (a resumed run did not run the first)."""
    from training.outputs import paired_gain_interval

    if len(vals) < 2 or len(val_records) < 2 or vals[0].step != val_records[0].get("step"):
        return None
    return paired_gain_interval(vals[0], vals[-1], seed=seed)


def _write_outputs(run_dir: Path, records: list[dict], algo, summary: dict) -> None:
    from training.outputs import plot_reward_curve, top_lessons, write_json_atomic, write_report

    write_json_atomic(run_dir / "summary.json", summary)
    plot_reward_curve(records, run_dir / "reward_curve.png")
    vals = algo.state.val
    if vals:
        write_report(run_dir / "report.md", "GRPO training run", summary, vals[0] if len(vals) > 1 else None,
                     vals[-1], top_lessons(run_dir / "mubit.db"))
    warning = f"; WARNING: {summary['warning']}" if summary["warning"] else ""
    if algo.state.interrupted:
        logger.info("interrupted after step %d; continue with: --resume %s%s", algo.state.last_step, run_dir, warning)
    else:
        logger.info("run finished: %s%s", run_dir, warning)

# ---------------------------------------------------------------------------------------------------------
@app.command()
def runners(
    n_runners: Annotated[int, typer.Option(min=1, help="Runner processes on this host.")] = 4,
    config: Annotated[Path | None, typer.Option(help="Run config YAML (default configs/oneclick.yaml); its Mubit "
                                                "config is used.")] = None,
    log_dir: Annotated[Path, typer.Option(help="Where this host keeps its Mubit outage log.")] = Path("runs/runners"),
) -> None:
    """Extra rollout workers on another host for a running `oneclick`: agl's client-server strategy with
    AGL_CURRENT_ROLE=runner connects to the training host's store server at AGL_SERVER_HOST:AGL_SERVER_PORT
    and executes the agent's rollouts until stopped (Ctrl-C)."""
    _setup_logging()
    from al_integration import STORE_TOKEN_ENV
    from al_integration.mubit_config import ConfigError, load_mubit_config

    try:
        cfg = load_run_config(config)
        _use_stage_configs(cfg)
        unset = [name for name in ("AGL_SERVER_HOST", "AGL_SERVER_PORT") if not os.environ.get(name)]
        if unset or os.environ.get("AGL_CURRENT_ROLE") != "runner":
            raise UserError("runners: set AGL_CURRENT_ROLE=runner and AGL_SERVER_HOST / AGL_SERVER_PORT to the "
                            "training host's store server")
        if not os.environ.get(STORE_TOKEN_ENV):
            raise UserError(f"runners: set {STORE_TOKEN_ENV} to the token the training run was started with (its "
                            "store server refuses every other client)")
        mubit_path = cfg.resolve(cfg.mubit.config)
        if not (load_mubit_config(mubit_path).endpoint and os.environ.get("MUBIT_API_KEY")):
            raise UserError(f"runners: lessons are recalled and credited on this host, so it needs a Mubit every "
                            f"host reaches: set endpoint: in {mubit_path} and MUBIT_API_KEY")
    except (UserError, RunConfigError, ConfigError) as e:
        _fail(str(e))
    import agentlightning as agl

    from agents.feedback_agent import feedback_response_agent
    from al_integration.execution import SupervisedStrategy

    _load_reward_before_fork()
    with _credit_loop(cfg, log_dir, credit_modes=cfg.mubit.credit_modes) as loop:
        trainer = agl.Trainer(n_runners=n_runners, hooks=[loop.hook],
                              runner={"type": "agentlightning.LitAgentRunner", "poll_interval": 0.2},
                              strategy=SupervisedStrategy(n_runners=n_runners))  # role, server, token from env
        logger.info("%d runners for the store server at %s:%s", n_runners, os.environ["AGL_SERVER_HOST"],
                    os.environ["AGL_SERVER_PORT"])
        try:
            trainer.fit(feedback_response_agent)
        except KeyboardInterrupt:
            logger.info("runners stopped")


if __name__ == "__main__":
    run_cli(app)
