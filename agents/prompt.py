"""The one prompt format: the agent asks the policy with it, and the tiny policy's warm start is trained on it.

Two OpenAI chat messages. The system message tells a real chat model who it is (a member of the research
team that received the feedback) and what a reply is (a message to the person who wrote it, not an edit of
their text, not a template), then the recalled lessons as a bulleted list and the feedback's sentiment
label; the user message is the redacted feedback. Each model renders them with its own tokenizer's chat
template. Any change here changes the tiny policy's cache key (it is rebuilt on the next run).
"""

# Short on purpose: the tiny policy is trained on this text, and its build time grows with the prompt length.
ROLE = "You are a member of the research team that received this feedback. Write the team's reply to its author."
TASK = ("Take up their points in plain sentences, be honest about what is uncertain, say what you will do, and "
        "promise nothing you cannot deliver. At most 100 words. No placeholders, no signature.")
LESSONS_HEADER = "Lessons:"
SENTIMENT_PREFIX = "Sentiment of the feedback:"
SENTIMENT_LABELS = ("negative", "neutral", "positive")


def build_messages(redacted_feedback: str, sentiment_label: str, lessons: list[str]) -> list[dict]:
    """Chat messages for one reply. `redacted_feedback` must already have passed governance (no raw PII)."""
    if sentiment_label not in SENTIMENT_LABELS:
        raise ValueError(f"sentiment_label must be one of {', '.join(SENTIMENT_LABELS)}, got {sentiment_label!r}")
    lines = [ROLE, TASK]
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
    return [ROLE, TASK, LESSONS_HEADER, *(f"{SENTIMENT_PREFIX} {label}" for label in SENTIMENT_LABELS)]
