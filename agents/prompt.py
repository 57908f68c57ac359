"""The one prompt format: the agent asks the policy with it, and the policy's warm start is trained on it.

Two OpenAI chat messages: a short system message (the task, the recalled lessons as a bulleted list, the
feedback's sentiment label) and the redacted feedback as the user message. Kept short in tokens because
the default policy is tiny; any change here changes the default policy's cache key (it is rebuilt).
"""

TASK = "Write the research team's reply to this feedback."
LESSONS_HEADER = "Lessons:"
SENTIMENT_PREFIX = "Sentiment:"
SENTIMENT_LABELS = ("negative", "neutral", "positive")


def build_messages(redacted_feedback: str, sentiment_label: str, lessons: list[str]) -> list[dict]:
    """Chat messages for one reply. `redacted_feedback` must already have passed governance (no raw PII)."""
    if sentiment_label not in SENTIMENT_LABELS:
        raise ValueError(f"sentiment_label must be one of {', '.join(SENTIMENT_LABELS)}, got {sentiment_label!r}")
    lines = [TASK]
    texts = [" ".join(lesson.split()) for lesson in lessons if lesson.strip()]
    if texts:
        lines += [LESSONS_HEADER, *(f"- {text}" for text in texts)]
    lines.append(f"{SENTIMENT_PREFIX} {sentiment_label}")
    return [
        {"role": "system", "content": "\n".join(lines)},
        {"role": "user", "content": redacted_feedback.strip()},
    ]


def fixed_texts() -> list[str]:
    """The template's own words, so a tokenizer trained on our corpus encodes them compactly."""
    return [TASK, LESSONS_HEADER, *(f"{SENTIMENT_PREFIX} {label}" for label in SENTIMENT_LABELS)]
