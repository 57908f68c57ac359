"""What a run leaves in its directory: metrics.jsonl, summary.json, report.md, reward_curve.png.

Every text written here comes from governed data: redacted feedback, the policy's replies, lesson
texts and numbers. Raw feedback never reaches this module.

metrics.jsonl has one line per training step and one per validation (`"split": "val"`), with TRL's metric
names (training/metrics.py, training/grpo.py); every tracker gets the same records (training/tracking.py).
Each key and what a healthy run shows: docs/training.md.
"""

import json
import logging
import os
import random
import sqlite3
import statistics
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rewards import COMPONENTS, GATES
from training.metrics import reward_metrics
from training.rollouts import RolloutResult
from training.run_dir import RunDirError
from training.tracking import Trackers

logger = logging.getLogger("training")


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


class MetricsLog:
    """Append-only JSON lines, each also sent to the trackers; on resume, lines past the checkpointed step are
    dropped so steps continue."""

    def __init__(self, path: Path, resume_after_step: int | None = None, trackers: Trackers | None = None):
        self.path = path
        self.trackers = trackers
        if resume_after_step is not None and path.exists():
            kept = [line for line in path.read_text().splitlines()
                    if line.strip() and json.loads(line).get("step", 0) <= resume_after_step]
            path.write_text("".join(line + "\n" for line in kept))

    def append(self, record: dict[str, Any]) -> None:
        try:
            with self.path.open("a") as f:
                f.write(json.dumps(record) + "\n")
        except OSError as e:
            raise RunDirError(f"{self.path}: cannot write the step's metrics ({e.strerror or e})") from None
        if self.trackers is not None:
            self.trackers.log_record(record)

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]


@dataclass
class ValResult:
    step: int
    reward_mean: float
    components: dict[str, float]
    answered: int
    decisions: dict[str, int]
    results: list[RolloutResult]


def paired_gain_interval(before: ValResult, after: ValResult, *, resamples: int = 2000,
                         seed: int = 0) -> list[float] | None:
    """95% bootstrap interval of the mean val-reward gain, paired by task (each task's reply after minus before).

    Why: 16-32 val tasks with a reward std of ~0.4 give a mean that moves by +-0.1 between two validations of
    nearly the same policy, so a gain means little without its interval. None with fewer than 2 paired tasks."""
    def by_task(val: ValResult) -> dict[str, list[float]]:
        rewards: dict[str, list[float]] = {}
        for r in val.results:
            if r.answered and r.reward is not None:
                rewards.setdefault(r.task_id, []).append(r.reward)
        return rewards

    first, last = by_task(before), by_task(after)
    gains = [statistics.fmean(last[t]) - statistics.fmean(first[t]) for t in sorted(first.keys() & last.keys())]
    if len(gains) < 2:
        return None
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(gains, k=len(gains))) for _ in range(resamples))
    return [round(means[int(0.025 * resamples)], 4), round(means[int(0.975 * resamples) - 1], 4)]


def summarize_rewards(results: list[RolloutResult]) -> tuple[float, float, dict[str, float]]:
    """Mean and std of the reward, and component means, over rollouts that produced a reply."""
    m = reward_metrics(results)
    if not m:
        return 0.0, 0.0, {}
    return m["reward"], m["reward_std"], {name: m[f"rewards/{name}/mean"] for name in (*COMPONENTS, *GATES)}


def decision_counts(results: list[RolloutResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        key = r.decision or ("failed" if r.status != "succeeded" else "unknown")
        counts[key] = counts.get(key, 0) + 1
    return counts


def val_result(step: int, results: list[RolloutResult]) -> ValResult:
    mean, _, comps = summarize_rewards(results)
    return ValResult(step, mean, comps, sum(r.answered for r in results), decision_counts(results), results)


def top_lessons(mubit_db: Path, limit: int = 10) -> list[dict[str, Any]]:
    """Lessons by learned credit, read from the embedded Mubit engine's file (empty if hosted or absent)."""
    if not mubit_db.exists():
        return []
    with closing(sqlite3.connect(f"file:{mubit_db}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT text, success_count, failure_count, signal_sum, outcome_count, alpha_mass, beta_mass "
            "FROM entries WHERE entry_type = 'lesson'").fetchall()
    lessons = [{"text": t, "successes": s, "failures": f, "signal_sum": round(sig, 3), "outcomes": n,
                "credit": round(a / (a + b), 3) if (a + b) > 0 else 0.5}
               for t, s, f, sig, n, a, b in rows]
    if any(x["outcomes"] for x in lessons):  # credited lessons first; the rest never earned any
        lessons = [x for x in lessons if x["outcomes"]]
    lessons.sort(key=lambda x: (-x["credit"], -x["outcomes"]))
    return lessons[:limit]


def _series(records: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    points = [(r["step"], r[key]) for r in records if isinstance(r.get(key), int | float)]
    return [p[0] for p in points], [float(p[1]) for p in points]


def plot_reward_curve(records: list[dict[str, Any]], path: Path) -> None:
    """One PNG, six panels: the reward (train and validation), its components, KL, entropy, reply length with
    the share cut at max_tokens, and the learner's health (gradient norm, clipped tokens, server-learner gap)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    train = [r for r in records if r.get("split") == "train"]
    val = [r for r in records if r.get("split") == "val"]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    (reward_ax, comp_ax, kl_ax), (ent_ax, len_ax, health_ax) = axes

    steps, mean = _series(train, "reward")
    _, std = _series(train, "reward_std")
    if steps:
        reward_ax.plot(steps, mean, label="train (rollout mean)", alpha=0.8)
        if len(std) == len(mean):
            reward_ax.fill_between(steps, [m - s for m, s in zip(mean, std, strict=True)],
                                   [m + s for m, s in zip(mean, std, strict=True)], alpha=0.15, label="train ± std")
    reward_ax.plot(*_series(val, "reward"), "o-", label="val (fixed-seed sampling)")
    reward_ax.set_title("Reward")
    for name in (*COMPONENTS, *GATES):
        comp_ax.plot(*_series(train, f"rewards/{name}/mean"), label=name)
    comp_ax.set_title("Reward components (train means)")
    kl_ax.plot(*_series(train, "kl"), color="tab:red")
    kl_ax.set_title("KL to the warm start (k3)")
    ent_ax.plot(*_series(train, "entropy"), color="tab:purple")
    ent_ax.set_title("Policy entropy (nats per token)")
    len_ax.plot(*_series(train, "completions/mean_length"), label="mean length")
    len_ax.plot(*_series(train, "completions/max_length"), ":", label="max length")
    len_ax.set_ylabel("tokens")
    clipped = len_ax.twinx()
    clipped.plot(*_series(train, "completions/clipped_ratio"), "--", color="tab:gray", label="clipped ratio")
    clipped.set_ylim(0, 1)
    clipped.set_ylabel("cut at max_tokens")
    len_ax.set_title("Reply length")
    health_ax.plot(*_series(train, "grad_norm"), label="grad norm (before clipping)")
    health_ax.plot(*_series(train, "clip_ratio/region_mean"), label="clipped tokens (share)")
    gap = health_ax.twinx()  # ~1e-6 when server and learner agree: its own log axis
    gap_steps, gap_values = _series(train, "sampling/sampling_logp_difference/mean")
    if any(v > 0 for v in gap_values):
        gap.set_yscale("log")
    gap.plot(gap_steps, gap_values, ":", color="tab:green", label="|logp server - learner| (right)")
    health_ax.set_title("Learner health")
    for ax in axes.flat:
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper left")
    clipped.legend(fontsize=8, loc="upper right")
    gap.legend(fontsize=8, loc="lower right")
    fig.suptitle("GRPO training", fontsize=14)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _component_table(before: ValResult | None, after: ValResult) -> list[str]:
    names = ["total", *COMPONENTS, *GATES]

    def value(v: ValResult, name: str) -> float | None:
        return v.reward_mean if name == "total" else v.components.get(name)

    if before is None:
        rows = [(n, value(after, n)) for n in names if value(after, n) is not None]
        return ["| component | mean |", "| --- | ---: |", *(f"| {n} | {a:+.3f} |" for n, a in rows)]
    lines = ["| component | before | after | change |", "| --- | ---: | ---: | ---: |"]
    for n in names:
        b, a = value(before, n), value(after, n)
        if a is not None and b is not None:
            lines.append(f"| {n} | {b:+.3f} | {a:+.3f} | {a - b:+.3f} |")
    return lines


def _feedback_of(result: RolloutResult) -> str:
    for message in result.prompt_messages or []:
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def _quote(text: str, limit: int = 700) -> str:
    text = " ".join((text or "").split())
    return "> " + (text[:limit] + "..." if len(text) > limit else text or "(empty)")


def write_report(path: Path, title: str, summary: dict[str, Any], before: ValResult | None, after: ValResult,
                 lessons: list[dict[str, Any]], examples: int = 3) -> None:
    lines = [f"# {title}", ""]
    if summary.get("warning"):
        lines += [f"> **Warning:** {summary['warning']}.", ""]
    lines += [f"- {k}: `{json.dumps(v)}`" for k, v in summary.items() if not isinstance(v, dict)]
    lines += ["", "## Reward per component (validation, replies only)", "", *_component_table(before, after), ""]
    if after.decisions:
        lines += ["Governance decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(after.decisions.items())), ""]
    lines += ["## Example replies (redacted feedback)", ""]
    before_by_task = {r.task_id: r for r in (before.results if before else []) if r.answered}
    shown = 0
    for r in after.results:
        if not r.answered or shown >= examples:
            continue
        shown += 1
        lines += [f"### Task {r.task_id}", "", "Feedback:", "", _quote(_feedback_of(r)), ""]
        if r.task_id in before_by_task:
            b = before_by_task[r.task_id]
            lines += [f"Before (reward {b.reward:+.3f}):", "", _quote(b.reply), ""]
            lines += [f"After (reward {r.reward:+.3f}):", "", _quote(r.reply), ""]
        else:
            lines += [f"Reply (reward {r.reward:+.3f}):", "", _quote(r.reply), ""]
    if lessons:
        lines += ["## Top lessons by learned credit (Mubit)", "",
                  "| credit | outcomes | successes | failures | lesson |", "| ---: | ---: | ---: | ---: | --- |"]
        lines += [f"| {x['credit']:.2f} | {x['outcomes']} | {x['successes']} | {x['failures']} | {x['text']} |"
                  for x in lessons]
        lines.append("")
    path.write_text("\n".join(lines))


class ProgressReporter:
    """A rich progress bar on a terminal; plain log lines otherwise."""

    def __init__(self, total_steps: int, first_step: int = 0):
        self.console = Console(stderr=True)
        self.interactive = self.console.is_terminal and sys.stderr.isatty()
        self._progress: Progress | None = None
        self._task = None
        if self.interactive:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"), TimeElapsedColumn(), console=self.console, transient=False)
            self._progress.start()
            self._task = self._progress.add_task("GRPO", total=total_steps, completed=first_step, info="")

    def phase(self, text: str) -> None:
        if self.interactive:
            self._progress.update(self._task, info=text)
        else:
            logger.info(text)

    def step(self, step: int, total: int, info: str) -> None:
        if self.interactive:
            self._progress.update(self._task, completed=step, info=info)
        else:
            logger.info("step %d/%d  %s", step, total, info)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
