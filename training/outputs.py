"""What a run leaves in its directory: metrics.jsonl, summary.json, report.md, reward_curve.png.

Every text written here comes from governed data: redacted feedback, the policy's replies, lesson
texts and numbers. Raw feedback never reaches this module.

metrics.jsonl, one line per training step (and one per validation, with "split": "val"):
    step, split ("train"), reward_mean, reward_std, reward/<component> (means), loss, kl, clip_frac,
    grad_norm, adv_abs_mean, samples (rollouts with an LLM call), rollouts, response_tokens,
    tokens_per_s (response tokens generated per second of rollout time), rollouts_per_s, step_seconds,
    elapsed_seconds (since the run started, resumes included), and in `--mode distributed` with DDP
    replicas_in_sync (every rank holds the same weights after the update).
"""

import json
import logging
import os
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
from training.rollouts import RolloutResult
from training.run_dir import RunDirError

logger = logging.getLogger("training")


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


class MetricsLog:
    """Append-only JSON lines; on resume, lines past the checkpointed step are dropped so steps continue."""

    def __init__(self, path: Path, resume_after_step: int | None = None):
        self.path = path
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


def summarize_rewards(results: list[RolloutResult]) -> tuple[float, float, dict[str, float]]:
    """Mean and std of the reward, and component means, over rollouts that produced a reply."""
    scored = [r for r in results if r.answered and r.reward is not None]
    if not scored:
        return 0.0, 0.0, {}
    rewards = [r.reward for r in scored]
    comps = {name: statistics.fmean(r.components.get(name, 0.0) for r in scored) for name in (*COMPONENTS, *GATES)}
    return statistics.fmean(rewards), statistics.pstdev(rewards), comps


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


def plot_reward_curve(records: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train = [r for r in records if r.get("split") == "train" and "reward_mean" in r]
    val = [r for r in records if r.get("split") == "val"]
    fig, ax = plt.subplots(figsize=(7, 4))
    if train:
        ax.plot([r["step"] for r in train], [r["reward_mean"] for r in train], label="train (rollout mean)", alpha=0.7)
    if val:
        ax.plot([r["step"] for r in val], [r["reward_mean"] for r in val], "o-", label="val (fixed-seed sampling)")
    ax.set_xlabel("step")
    ax.set_ylabel("reward")
    ax.set_title("Reward during GRPO training")
    ax.grid(alpha=0.3)
    ax.legend()
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
