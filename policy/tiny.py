"""The default policy, built locally (never downloaded): `python -m policy.tiny build`.

1. a byte-level BPE tokenizer trained with `tokenizers` on the redacted train split, its references, the
   seed lessons and the prompt template, wrapped as a `transformers` fast tokenizer with a chat template;
2. a small GPT-2-style `GPT2LMHeadModel` (size in configs/policy_tiny.yaml);
3. a supervised warm start on the train split's reference replies of ALL qualities, each conditioned on the
   agent's prompt format with lessons that explain it (a good reply with helpful lessons, an oversold one
   with "promise it is guaranteed", ...), loss on the reply tokens only, so the policy learns to follow
   lessons and leaves room for RL;
4. saved in Hugging Face format under a cache directory keyed by a hash of the config, the training data
   and the prompt format: the second build is instant. The build also samples replies to the val split and
   reports their mean reward next to the dataset's references.

Downstream code loads the result with `AutoModelForCausalLM` / `AutoTokenizer`, so any local HF causal LM
with a chat template can stand in for it (`--model PATH`).
"""

import hashlib
import json
import os
import random
import shutil
import statistics
import time
import uuid
from pathlib import Path
from typing import Annotated

import torch
import typer
from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.table import Table
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
from transformers.utils import logging as hf_logging

import agents.prompt
from agents.prompt import build_messages
from common.cli import OneLineErrors, run_cli
from common.config_files import load_yaml_model
from data import DatasetError, load_feedback, load_lessons
from policy.server import PolicyEngine, SamplingRow
from policy.sft import TrainConfig, encode_example, progress_steps, train_sft
from policy.tiny_data import (
    LessonPairing,
    LessonPairingConfig,
    governed_feedback,
    hash_training_inputs,
    sft_examples,
    tokenizer_corpus,
)
from rewards import default_scorer

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG_PATH = REPO_ROOT / "configs" / "policy_tiny.yaml"
DEFAULT_CACHE_DIR = REPO_ROOT / ".cache" / "policy"  # POLICY_CACHE_DIR overrides it
RECIPE_VERSION = 2  # bump when the build recipe changes in a way the config does not show (2: governed text)

END, PAD = "<|end|>", "<|pad|>"
ROLE_TOKENS = ["<|system|>", "<|user|>", "<|assistant|>"]
# Renders `agents.prompt.build_messages` output (and an assistant turn) as <|role|>content<|end|>...
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


# ----------------------------------------------------------------------------------------------------------
# Config


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenizerConfig(_Strict):
    vocab_size: int = Field(ge=300)
    min_frequency: int = Field(ge=1)


class ModelConfig(_Strict):
    n_layer: int = Field(ge=1)
    n_head: int = Field(ge=1)
    n_embd: int = Field(ge=8)
    n_positions: int = Field(ge=64)


class SamplingConfig(_Strict):
    temperature: float = Field(ge=0, le=2)
    top_p: float = Field(gt=0, le=1)
    max_tokens: int = Field(ge=1)


class EvaluationConfig(_Strict):
    lessons_per_task: int = Field(ge=0)


class PolicyConfig(_Strict):
    seed: int
    tokenizer: TokenizerConfig
    model: ModelConfig
    train: TrainConfig
    sampling: SamplingConfig
    lesson_pairing: LessonPairingConfig
    evaluation: EvaluationConfig


class PolicyConfigError(ValueError):
    """A policy config that cannot be used; the message names the file and the field."""


def load_policy_config(path: Path = DEFAULT_CONFIG_PATH) -> PolicyConfig:
    return load_yaml_model(path, PolicyConfig, PolicyConfigError)


# ----------------------------------------------------------------------------------------------------------
# Tokenizer and model


def train_tokenizer(corpus: list[str], config: TokenizerConfig) -> PreTrainedTokenizerFast:
    """Byte-level BPE (any text encodes; nothing is unknown) with the chat template's special tokens."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=config.vocab_size,
        min_frequency=config.min_frequency,
        special_tokens=[PAD, END, *ROLE_TOKENS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token=END, pad_token=PAD, additional_special_tokens=ROLE_TOKENS
    )
    wrapped.chat_template = CHAT_TEMPLATE
    return wrapped


def build_model(config: ModelConfig, tokenizer: PreTrainedTokenizerFast) -> GPT2LMHeadModel:
    gpt2 = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=config.n_positions,
        n_embd=config.n_embd,
        n_layer=config.n_layer,
        n_head=config.n_head,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = GPT2LMHeadModel(gpt2)
    model.loss_type = "ForCausalLM"  # the default, named: transformers warns when it is unset
    return model


# ----------------------------------------------------------------------------------------------------------
# Val reward of sampled replies


def evaluate_policy(engine: PolicyEngine, config: PolicyConfig, console: Console, split: str = "val") -> dict:
    """Sample one reply per answerable task at the agent's sampling parameters and score it with the reward.

    Three lesson conditions: `random` (k seed lessons drawn at random: recall with no memory of what
    works, the headline figure), `helpful` (k helpful ones) and `misleading` (k misleading ones). The
    dataset's reference replies to the same tasks are scored alongside."""
    scorer = default_scorer()
    tasks = [t for t in load_feedback(split) if t["expected_action"] in (None, "answer")]
    lessons = load_lessons()
    pools = {
        "random": [lesson.text for lesson in lessons],
        "helpful": [lesson.text for lesson in lessons if lesson.helpful],
        "misleading": [lesson.text for lesson in lessons if not lesson.helpful],
    }
    rng = random.Random(config.seed)
    sampling = config.sampling
    k = config.evaluation.lessons_per_task
    governed = governed_feedback(tasks)
    feedbacks = [governed[t["feedback"]][0] for t in tasks]
    labels = [governed[t["feedback"]][1] for t in tasks]
    figures: dict = {"split": split, "n_tasks": len(tasks), "lessons_per_task": k, "sampling": sampling.model_dump()}
    examples = []
    rows_by_condition = {}
    for condition, pool in pools.items():
        rows_by_condition[condition] = [
            SamplingRow(
                prompt_ids=engine.prompt_ids(build_messages(f, label, rng.sample(pool, k))),
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                max_tokens=sampling.max_tokens,
                seed=config.seed * 100_003 + i,
            )
            for i, (f, label) in enumerate(zip(feedbacks, labels, strict=True))
        ]
    chunk = 16
    total = sum(len(rows) for rows in rows_by_condition.values())
    with progress_steps(console, f"sampling {split} replies", total) as advance:
        for condition, rows in rows_by_condition.items():
            rewards, words = [], []
            for start in range(0, len(rows), chunk):
                for offset, sample in enumerate(engine.generate(rows[start : start + chunk])):
                    reply = engine.decode(sample.token_ids)
                    rewards.append(scorer(reply, feedbacks[start + offset]).total)
                    words.append(len(reply.split()))
                    if condition == "random" and len(examples) < 3 and start + offset in (0, 11, 23):
                        examples.append({"task": tasks[start + offset]["id"], "reply": reply})
                advance(len(rows[start : start + chunk]), note=condition)
            figures[f"policy_{condition}_lessons"] = {
                "reward_mean": statistics.fmean(rewards),
                "acceptable_share": sum(r >= 0 for r in rewards) / len(rewards),
                "words_mean": statistics.fmean(words),
            }
    by_quality: dict[str, list[float]] = {}
    for task, feedback in zip(tasks, feedbacks, strict=True):
        for reference in task["references"]:
            by_quality.setdefault(reference["quality"], []).append(scorer(reference["text"], feedback).total)
    figures["references_reward_mean"] = {q: statistics.fmean(v) for q, v in by_quality.items()}
    figures["examples"] = examples
    return figures


# ----------------------------------------------------------------------------------------------------------
# Build and cache


def cache_key(config: PolicyConfig) -> str:
    """Hash of everything the build depends on: the recipe version, the config, the chat template and the
    training inputs (data, lessons, governance's configs, the prompt format)."""
    digest = hashlib.sha256()
    digest.update(f"recipe {RECIPE_VERSION}\n".encode())
    digest.update(config.model_dump_json().encode())
    digest.update(CHAT_TEMPLATE.encode())
    hash_training_inputs(digest)
    return digest.hexdigest()[:16]


def default_cache_dir() -> Path:
    return Path(os.environ.get("POLICY_CACHE_DIR", DEFAULT_CACHE_DIR))


def build_policy(
    config: PolicyConfig, *, cache_dir: Path | None = None, force: bool = False, console: Console | None = None
) -> tuple[Path, dict]:
    """Build the default policy (or reuse the cached one); returns its directory and its build report."""
    console = console or Console(stderr=True)
    cache_dir = cache_dir or default_cache_dir()
    target = cache_dir / f"policy-{cache_key(config)}"
    report_path = target / "build_report.json"
    if report_path.is_file() and not force:
        return target, json.loads(report_path.read_text())

    started = time.monotonic()
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    train_tasks = load_feedback("train")
    lessons = load_lessons()
    tokenizer = train_tokenizer(tokenizer_corpus(train_tasks, lessons, agents.prompt.fixed_texts()), config.tokenizer)
    examples = sft_examples(train_tasks, LessonPairing(config.lesson_pairing, lessons), config.seed)
    encoded = [encode_example(tokenizer, e, config.train.max_reply_tokens) for e in examples]
    longest = max(len(ids) for ids, _ in encoded)
    if longest > config.model.n_positions:
        raise PolicyConfigError(
            f"model.n_positions ({config.model.n_positions}) is shorter than the longest example ({longest} tokens)"
        )
    model = build_model(config.model, tokenizer)
    n_params = sum(p.numel() for p in model.parameters())
    console.print(
        f"policy: {n_params / 1e6:.2f}M parameters, vocab {len(tokenizer)}, {len(encoded)} SFT examples "
        f"(mean {statistics.fmean(len(ids) for ids, _ in encoded):.0f} tokens)",
        highlight=False,
    )
    train_stats = train_sft(model, encoded, config.train, tokenizer.pad_token_id, config.seed, console)
    train_seconds = time.monotonic() - started

    engine = PolicyEngine(model, tokenizer, model_name="default-policy", seed=config.seed)
    figures = evaluate_policy(engine, config, console)
    report = {
        "cache_key": target.name,
        "parameters": n_params,
        "vocab_size": len(tokenizer),
        "sft_examples": len(encoded),
        "train": train_stats,
        "train_seconds": train_seconds,
        "build_seconds": time.monotonic() - started,
        "evaluation": figures,
        "config": config.model_dump(),
    }
    staging = cache_dir / f".tmp-{uuid.uuid4().hex}"
    hf_logging.disable_progress_bar()  # a one-shard save needs no bar of its own
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    (staging / "build_report.json").write_text(json.dumps(report, indent=2))
    if force and target.exists():
        shutil.rmtree(target)
    try:
        staging.rename(target)  # atomic: a concurrent build finds either nothing or a complete directory
    except OSError:  # another process finished the same build first
        shutil.rmtree(staging, ignore_errors=True)
    return target, report


def ensure_default_policy(config_path: Path = DEFAULT_CONFIG_PATH, console: Console | None = None) -> Path:
    """The default policy's directory, built first if it is not cached (what eval and training call)."""
    path, _ = build_policy(load_policy_config(config_path), console=console)
    return path


# ----------------------------------------------------------------------------------------------------------
# CLI

app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True, help=__doc__.split("\n\n")[0])


@app.callback()
def main() -> None:
    """Build the default policy locally."""


def _figures_table(report: dict) -> Table:
    ev = report["evaluation"]
    table = Table(title=f"{ev['split']} reward ({ev['n_tasks']} answerable tasks)", title_justify="left")
    table.add_column("replies")
    table.add_column("reward mean", justify="right")
    table.add_column("acceptable", justify="right")
    for condition in ("random", "helpful", "misleading"):
        f = ev[f"policy_{condition}_lessons"]
        name = f"policy, {ev['lessons_per_task']} {condition} lessons"
        table.add_row(name, f"{f['reward_mean']:+.3f}", f"{f['acceptable_share']:.0%}")
    for quality, mean in ev["references_reward_mean"].items():
        table.add_row(f"reference: {quality}", f"{mean:+.3f}", "")
    return table


@app.command()
def build(
    config: Annotated[Path, typer.Option(help="policy config (YAML)")] = DEFAULT_CONFIG_PATH,
    force: Annotated[bool, typer.Option(help="rebuild even if the cache holds this build")] = False,
    cache_dir: Annotated[Path | None, typer.Option(help="cache directory [default: .cache/policy]")] = None,
) -> None:
    """Build (or reuse) the default policy; print where it is and the val reward of its sampled replies."""
    out, err = Console(), Console(stderr=True)
    try:
        started = time.monotonic()
        path, report = build_policy(load_policy_config(config), cache_dir=cache_dir, force=force, console=err)
    except (PolicyConfigError, DatasetError, ValueError) as e:
        err.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=2) from None
    out.print(f"policy: {path}  (built in {report['build_seconds']:.0f}s; this call {time.monotonic() - started:.1f}s)",
              highlight=False, soft_wrap=True)
    out.print(_figures_table(report))
    for example in report["evaluation"]["examples"][:2]:
        out.print(f"[dim]{example['task']}:[/] {example['reply']}", highlight=False, soft_wrap=True)


if __name__ == "__main__":
    run_cli(app)
