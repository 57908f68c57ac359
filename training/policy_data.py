"""Training text for the default policy: redacted feedback, reference replies and the lessons paired with them.

Nothing here ever returns raw personal data: each task's feedback is redacted before it is used.
"""

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agents.prompt import build_messages
from rewards import default_scorer
from training.data import Lesson


@dataclass(frozen=True)
class SftExample:
    """One supervised example: the prompt messages (same format as the agent's) and the reply to learn."""

    task_id: str
    quality: str
    messages: list[dict]
    reply: str


def redact_listed_pii(text: str, pii: Iterable[dict]) -> str:
    """Stand-in for governance redaction until `agents.governance.govern` is merged: replace each value the
    dataset lists in a task's `pii` field with a typed placeholder (`<PERSON_1>`, `<EMAIL_ADDRESS_1>`, ...),
    numbered per type in reading order, the same style `govern` writes. Switch to `govern` once merged."""
    values = {(item["type"], item["value"]) for item in pii if item["value"]}
    if not values:
        return text
    by_value = {value: kind for kind, value in values}
    pattern = re.compile("|".join(re.escape(v) for v in sorted(by_value, key=len, reverse=True)))
    placeholders: dict[str, str] = {}
    counts: dict[str, int] = {}

    def placeholder(match: re.Match) -> str:
        value = match.group(0)
        if value not in placeholders:
            kind = by_value[value]
            counts[kind] = counts.get(kind, 0) + 1
            placeholders[value] = f"<{kind}_{counts[kind]}>"
        return placeholders[value]

    return pattern.sub(placeholder, text)


def sentiment_label(redacted_feedback: str) -> str:
    """VADER's label for the feedback, as the reward reads it (the governance stage labels with VADER too)."""
    return default_scorer().analyze_feedback(redacted_feedback).label


class LessonPairing:
    """Draws the lessons a warm-start prompt carries for a reference reply (rules in configs/policy.yaml)."""

    def __init__(self, config, lessons: list[Lesson]):
        self.text = {lesson.id: lesson.text for lesson in lessons}
        known = set(self.text)
        for lesson_id in [*config.distractors, *(i for rule in config.rules for i in rule.lessons)]:
            if lesson_id not in known:
                raise ValueError(f"configs/policy.yaml: lesson_pairing names unknown lesson id '{lesson_id}'")
        self.config = config

    def draw(self, quality: str, sentiment: str, rng: random.Random) -> list[str]:
        rule = next(
            (r for r in self.config.rules if r.quality == quality and r.sentiment in (None, sentiment)), None
        )
        if rule is None:
            raise ValueError(f"configs/policy.yaml: no lesson_pairing rule for quality '{quality}'")
        low, high = rule.count if isinstance(rule.count, list) else (rule.count, rule.count)
        chosen = rng.sample(rule.lessons, min(rng.randint(low, high), len(rule.lessons)))
        chosen += rng.sample(self.config.distractors, self.config.distractors_per_prompt)
        rng.shuffle(chosen)
        return [self.text[i] for i in chosen]


def sft_examples(tasks, pairing: LessonPairing, seed: int) -> list[SftExample]:
    """Every reference reply (all qualities) of every answerable task, each with its own prompt and lessons."""
    rng = random.Random(seed)
    examples = []
    for task in tasks:
        if task["expected_action"] not in (None, "answer") or not task["references"]:
            continue  # escalated and rejected feedback never reaches the policy
        feedback = redact_listed_pii(task["feedback"], task["pii"])
        label = sentiment_label(feedback)
        for reference in task["references"]:
            lessons = pairing.draw(reference["quality"], label, rng)
            messages = build_messages(feedback, label, lessons)
            examples.append(SftExample(task["id"], reference["quality"], messages, reference["text"]))
    return examples


def tokenizer_corpus(tasks, lessons: list[Lesson], fixed: list[str]) -> list[str]:
    """The texts the tokenizer is trained on: redacted feedback, every reference, the lessons, the template."""
    texts = list(fixed) + [lesson.text for lesson in lessons]
    for task in tasks:
        texts.append(redact_listed_pii(task["feedback"], task["pii"]))
        texts.extend(reference["text"] for reference in task["references"])
    return texts
