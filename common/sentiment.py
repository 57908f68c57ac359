"""The one sentiment labeller: VADER with our lexicon additions, used by governance, the agent's prompt, the
reward's tone component and the dataset generator, so that all of them read a message the same way.

VADER's `polarity_scores` turns each emoji into its 2-4 word description and then does work quadratic in
the word count (6,400 emoji took 6 s here; 48,000 words took 94 s). Text longer than `window_words` words is
scored in windows and the scores averaged, weighted by window length, so the time is linear.
Settings: `configs/sentiment.yaml`.
"""

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import regex
from pydantic import BaseModel, ConfigDict, Field, model_validator
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from common.config_files import load_yaml_model

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parent.parent / "configs" / "sentiment.yaml"
LABELS = ("negative", "neutral", "positive")


class SentimentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    negative_max: float = Field(-0.05, ge=-1, le=1, description="compound <= this is negative")
    positive_min: float = Field(0.05, ge=-1, le=1, description="compound >= this is positive")
    window_words: int = Field(200, ge=20, le=2000, description="VADER is quadratic in words: score windows")
    lexicon_updates: dict[str, float] = Field(default_factory=dict)
    phrase_valence: dict[str, float] = Field(default_factory=dict, description="multi-word expressions VADER "
                                             "cannot score word by word (valence on VADER's -4..4 scale)")

    @model_validator(mode="after")
    def _ordered(self) -> "SentimentConfig":
        if self.negative_max >= self.positive_min:
            raise ValueError("negative_max must be below positive_min")
        return self


class SentimentConfigError(ValueError):
    """The sentiment config cannot be used; the message names the file and the field."""


def load_sentiment_config(path: str | Path | None = None) -> SentimentConfig:
    return load_yaml_model(path if path is not None else DEFAULT_CONFIG_PATH, SentimentConfig, SentimentConfigError)


@dataclass(frozen=True, slots=True)
class Sentiment:
    label: str  # "negative" | "neutral" | "positive"
    compound: float  # VADER compound score in [-1, 1]


class SentimentLabeller:
    def __init__(self, config: SentimentConfig):
        self.config = config
        self.vader = SentimentIntensityAnalyzer()
        self.vader.lexicon.update(config.lexicon_updates)
        # Each phrase becomes one made-up word with the phrase's valence, so VADER's own rules (negation,
        # boosters, "but") still apply around it; a valence of 0 just hides the words ("feel like", "for good").
        self._phrases: list[tuple[regex.Pattern, str]] = []
        for i, (phrase, valence) in enumerate(sorted(config.phrase_valence.items(), key=lambda kv: -len(kv[0]))):
            token = f"vaderphrase{i}x"
            words = r"\s+".join(regex.escape(word) for word in phrase.split())
            self._phrases.append((regex.compile(rf"(?<!\w){words}(?!\w)", regex.IGNORECASE), token))
            if valence:
                self.vader.lexicon[token] = valence

    def label(self, text: str) -> Sentiment:
        compound = self.scores(text)["compound"]
        if compound <= self.config.negative_max:
            label = "negative"
        elif compound >= self.config.positive_min:
            label = "positive"
        else:
            label = "neutral"
        return Sentiment(label, round(compound, 4))

    def scores(self, text: str) -> dict[str, float]:
        """VADER's `neg`, `neu`, `pos` and `compound`, windowed on long text (averages weighted by words)."""
        words = self._with_phrases(self._describe_emoji(text)).split()
        if not words:
            return {"neg": 0.0, "neu": 0.0, "pos": 0.0, "compound": 0.0}
        size = self.config.window_words
        if len(words) <= size:
            return self.vader.polarity_scores(" ".join(words))
        totals = {"neg": 0.0, "neu": 0.0, "pos": 0.0, "compound": 0.0}
        for i in range(0, len(words), size):
            window = words[i:i + size]
            for key, value in self.vader.polarity_scores(" ".join(window)).items():
                totals[key] += value * len(window)
        return {key: value / len(words) for key, value in totals.items()}

    def _with_phrases(self, text: str) -> str:
        for pattern, token in self._phrases:
            text = pattern.sub(token, text)
        return text

    def _describe_emoji(self, text: str) -> str:
        """VADER's own emoji-to-words step, done up front so the windows count the words it would see."""
        emojis = self.vader.emojis
        if not any(ch in emojis for ch in text):
            return text
        return "".join(f" {emojis[ch]} " if ch in emojis else ch for ch in text)


@lru_cache(maxsize=1)
def default_labeller() -> SentimentLabeller:
    """The process-wide labeller of `configs/sentiment.yaml`."""
    return SentimentLabeller(load_sentiment_config())
