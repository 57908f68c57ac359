"""Sentiment of the redacted text with VADER, guarded against VADER's quadratic cost on long input.

VADER's `polarity_scores` turns each emoji into its 2-4 word description and then does work quadratic in
the word count (6,400 emoji took 6 s here; 48,000 words took 94 s). Text longer than `window_words`
words is scored in windows and the compound averaged, weighted by window length, so the time is linear.
"""

from __future__ import annotations

from dataclasses import dataclass

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from agents.governance.config import SentimentConfig


@dataclass(frozen=True, slots=True)
class Sentiment:
    label: str  # "negative" | "neutral" | "positive"
    compound: float  # VADER compound score in [-1, 1]


class SentimentScorer:
    def __init__(self, config: SentimentConfig):
        self.config = config
        self.vader = SentimentIntensityAnalyzer()
        self.vader.lexicon.update(config.lexicon_updates)

    def score(self, text: str) -> Sentiment:
        compound = self._compound(text)
        if compound <= self.config.negative_max:
            label = "negative"
        elif compound >= self.config.positive_min:
            label = "positive"
        else:
            label = "neutral"
        return Sentiment(label, round(compound, 4))

    def _compound(self, text: str) -> float:
        words = self._describe_emoji(text).split()
        if not words:
            return 0.0
        size = self.config.window_words
        if len(words) <= size:
            return self.vader.polarity_scores(" ".join(words))["compound"]
        windows = [words[i:i + size] for i in range(0, len(words), size)]
        total = sum(self.vader.polarity_scores(" ".join(w))["compound"] * len(w) for w in windows)
        return total / len(words)

    def _describe_emoji(self, text: str) -> str:
        """VADER's own emoji-to-words step, done up front so the windows count the words it would see."""
        emojis = self.vader.emojis
        if not any(ch in emojis for ch in text):
            return text
        return "".join(f" {emojis[ch]} " if ch in emojis else ch for ch in text)
