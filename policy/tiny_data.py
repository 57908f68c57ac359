"""Warm-start text for the built-in policies: redacted feedback, reference replies and the lessons paired with them.

The tiny scratch policy learns from every reference (and its tokenizer from this text); SmolLM2's warm start
from the good references only. Nothing here ever returns raw personal data: each task's feedback is redacted
before it is used.
"""

import inspect
import random
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

import agents.prompt
from agents.prompt import build_messages
from data import DATA_DIR, LESSONS_PATH, Lesson

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


class PairingRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    quality: str
    sentiment: str | None = None
    count: int | list[int] = 1
    lessons: list[str] = Field(min_length=1)


class LessonPairingConfig(BaseModel):
    """The `lesson_pairing:` section of a warm start: which lessons a prompt carries for a reference reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    distractors: list[str]
    distractors_per_prompt: int = Field(ge=0)
    rules: list[PairingRule] = Field(min_length=1)


@dataclass(frozen=True)
class SftExample:
    """One supervised example: the prompt messages (same format as the agent's) and the reply to learn."""

    task_id: str
    quality: str
    messages: list[dict]
    reply: str


def governed_feedback(tasks) -> dict[str, tuple[str, str]]:
    """feedback text -> (redacted text, sentiment label), from the governance stage in one batch: the warm
    start sees exactly the placeholders and labels the agent will put in its prompts."""
    from agents.governance import govern_many

    texts = list(dict.fromkeys(task["feedback"] for task in tasks))
    return {text: (g.redacted_text, g.sentiment.label) for text, g in zip(texts, govern_many(texts), strict=True)}


class LessonPairing:
    """Draws the lessons a warm-start prompt carries for a reference reply (rules: `lesson_pairing` in
    configs/policy_*.yaml)."""

    def __init__(self, config: LessonPairingConfig, lessons: list[Lesson]):
        self.text = {lesson.id: lesson.text for lesson in lessons}
        known = set(self.text)
        for lesson_id in [*config.distractors, *(i for rule in config.rules for i in rule.lessons)]:
            if lesson_id not in known:
                raise ValueError(f"lesson_pairing names unknown lesson id '{lesson_id}'")
        self.config = config

    def draw(self, quality: str, sentiment: str, rng: random.Random) -> list[str]:
        rule = next(
            (r for r in self.config.rules if r.quality == quality and r.sentiment in (None, sentiment)), None
        )
        if rule is None:
            raise ValueError(f"lesson_pairing has no rule for quality '{quality}'")
        low, high = rule.count if isinstance(rule.count, list) else (rule.count, rule.count)
        chosen = rng.sample(rule.lessons, min(rng.randint(low, high), len(rule.lessons)))
        chosen += rng.sample(self.config.distractors, self.config.distractors_per_prompt)
        rng.shuffle(chosen)
        return [self.text[i] for i in chosen]


def sft_examples(tasks, pairing: LessonPairing, seed: int, qualities: set[str] | None = None) -> list[SftExample]:
    """Every reference reply (of `qualities`, default all) of every answerable task, each with its own prompt
    and lessons."""
    rng = random.Random(seed)
    tasks = [t for t in tasks if t["expected_action"] in (None, "answer") and t["references"]]
    governed = governed_feedback(tasks)  # escalated and rejected feedback never reaches the policy
    examples = []
    for task in tasks:
        feedback, label = governed[task["feedback"]]
        for reference in task["references"]:
            if qualities is not None and reference["quality"] not in qualities:
                continue
            lessons = pairing.draw(reference["quality"], label, rng)
            messages = build_messages(feedback, label, lessons)
            examples.append(SftExample(task["id"], reference["quality"], messages, reference["text"]))
    return examples


def tokenizer_corpus(tasks, lessons: list[Lesson], fixed: list[str]) -> list[str]:
    """The texts the tokenizer is trained on: redacted feedback, every reference, the lessons, the template."""
    texts = list(fixed) + [lesson.text for lesson in lessons]
    governed = governed_feedback(tasks)
    for task in tasks:
        texts.append(governed[task["feedback"]][0])
        texts.extend(reference["text"] for reference in task["references"])
    return texts


def hash_training_inputs(digest) -> None:
    """Feed `digest` (hashlib) everything a warm start's examples depend on: the train and val splits, the
    lessons, governance's configs (the redacted text and the sentiment labels) and the prompt format."""
    governance = [CONFIGS / "governance.yaml", CONFIGS / "sentiment.yaml"]
    for path in (DATA_DIR / "feedback_train.jsonl", DATA_DIR / "feedback_val.jsonl", LESSONS_PATH, *governance):
        digest.update(path.read_bytes())
    digest.update(inspect.getsource(agents.prompt).encode())
