"""A small learned classifier for what the rules cannot reach: paraphrased self-harm, legal threats, abuse and
spam. TF-IDF over word and character n-grams with a logistic regression (scikit-learn).

On (`classifier.enabled` in configs/governance.yaml) since issue #14's third round, as a safety net that can
only escalate: its `safety` label at or above its threshold, where no safety rule fired, sends the message to a
person (agents/governance/policy.py never lets a classifier signal answer or reject). It needs scikit-learn,
a dependency, imported only when the classifier is enabled.

It is trained offline, deterministically, from data in the repository: the generated dataset's train split
and the `dev` part of the hand-written evaluation set (never `heldout`). The fitted model is cached on first
use under `.cache/governance/` (or `$GOVERNANCE_CACHE_DIR`), keyed by a hash of the training rows, the
settings and the scikit-learn version, so a later process loads it in milliseconds and any change retrains.
Training takes about a second; nothing is downloaded. Why a cache rather than a committed file:
docs/governance.md.

Text is classified as the agent would read it (redacted, injection sentences removed); placeholders and the
training rows' own personal data are blanked, so names never become features.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import regex

from agents.governance.config import ClassifierConfig, InjectionConfig
from agents.governance.rules import InjectionGuard

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

log = logging.getLogger(__name__)

DEFAULT_CACHE_DIR = Path(__file__).resolve().parents[2] / ".cache" / "governance"  # GOVERNANCE_CACHE_DIR overrides
PLACEHOLDER = regex.compile(r"<[A-Z_]+_\d+>|\[removed: [^\]]*\]")
TRAINING_VERSION = 2  # bump when training_rows or build_pipeline change meaning: the cache key changes with it


@dataclass(frozen=True, slots=True)
class ClassifierScores:
    probabilities: dict[str, float]  # label -> probability, summing to 1


def training_rows(config: ClassifierConfig, guard: InjectionGuard,
                  exclude: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(text, label) pairs: the dataset's training split and the hand-written dev set (less the `exclude` ids,
    for cross-validation), by category."""
    from data import DATA_DIR, load_governance_eval  # only when training: `data` imports Hugging Face datasets
    rows: list[tuple[str, str]] = []
    for split in config.dataset_splits:
        for line in (DATA_DIR / f"feedback_{split}.jsonl").read_text("utf-8").splitlines():
            if line.strip():
                task = json.loads(line)
                if task["category"] in config.dataset_labels:
                    text = blank_values(task["feedback"], [p["value"] for p in task["pii"]])
                    rows.append((text, config.dataset_labels[task["category"]]))
    for case in load_governance_eval("dev"):
        if case.id in exclude:
            continue
        label = eval_label(config, case)
        if label is not None:
            rows.append((blank_values(case.feedback, [p.value for p in case.pii]), label))
    return [(classifier_view(guard.neutralise(text)[0]), label) for text, label in rows]


def eval_label(config: ClassifierConfig, case) -> str | None:
    """A hand-written row's training label. A safety row is `safety` whatever its writer called the kind ("mixed",
    "danger_at_home", "child_at_risk"); an answerable row of a kind the config does not list ("delay_complaint",
    "methods_critique") is the answer label: each blind writer names kinds their own way, and a row left out for its
    name teaches the classifier nothing (the tenth part's 19 answerable and 9 safety rows of new kinds were). Other
    rows of an unlisted kind (a mixed conflict, an injection) stay out."""
    if case.safety:
        return config.eval_labels.get("safety")
    label = config.eval_labels.get(case.category)
    if label is None and case.expected_decision == "answer":
        return config.answer_label
    return label


def blank_values(text: str, values: list[str]) -> str:
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, " ")
    return text


def classifier_view(text: str) -> str:
    """What the classifier reads: placeholders and the injection marker blanked."""
    return PLACEHOLDER.sub(" ", text)


class ClassifierUnavailable(RuntimeError):
    """`classifier.enabled` without scikit-learn installed."""


def _sklearn() -> SimpleNamespace:
    try:
        import joblib
        import sklearn
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import FeatureUnion, Pipeline
    except ImportError:
        raise ClassifierUnavailable("the governance classifier needs scikit-learn (a dependency: run `make setup`) "
                                    "(or set classifier.enabled: false)") from None
    return SimpleNamespace(joblib=joblib, version=sklearn.__version__, TfidfVectorizer=TfidfVectorizer,
                           LogisticRegression=LogisticRegression, FeatureUnion=FeatureUnion, Pipeline=Pipeline)


def build_pipeline(config: ClassifierConfig) -> Pipeline:
    sk = _sklearn()
    features = sk.FeatureUnion([
        ("words", sk.TfidfVectorizer(analyzer="word", ngram_range=tuple(config.word_ngrams), sublinear_tf=True,
                                     lowercase=True, token_pattern=r"(?u)\b\w+\b")),
        ("chars", sk.TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(config.char_ngrams), sublinear_tf=True,
                                     lowercase=True)),
    ])
    model = sk.LogisticRegression(C=config.c, max_iter=2000, class_weight="balanced")
    return sk.Pipeline([("features", features), ("model", model)])


def training_sources(config: ClassifierConfig) -> list[Path]:
    from data import DATA_DIR, GOVERNANCE_EVAL_PATH

    return [DATA_DIR / f"feedback_{split}.jsonl" for split in config.dataset_splits] + [GOVERNANCE_EVAL_PATH]


def cache_key(config: ClassifierConfig, injection: InjectionConfig) -> str:
    """Everything the fitted model depends on: settings, training files, the injection guard that cleans
    them, scikit-learn's version. Hashing the files' bytes keeps a cache hit to milliseconds."""
    digest = hashlib.sha256(json.dumps([TRAINING_VERSION, _sklearn().version, config.model_dump(mode="json"),
                                        injection.model_dump(mode="json")]).encode())
    for path in training_sources(config):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def default_cache_dir() -> Path:
    return Path(os.environ.get("GOVERNANCE_CACHE_DIR", DEFAULT_CACHE_DIR))


class FeedbackClassifier:
    """predict(texts) -> ClassifierScores per text. Build with `FeedbackClassifier.load(config, injection)`."""

    def __init__(self, pipeline: Pipeline):
        self.pipeline = pipeline
        self.labels = [str(label) for label in pipeline.classes_]

    @classmethod
    def load(cls, config: ClassifierConfig, injection: InjectionConfig, cache_dir: Path | None = None
             ) -> FeedbackClassifier:
        """The cached model for this config and training data, trained and cached first if there is none."""
        joblib = _sklearn().joblib
        path = (cache_dir or default_cache_dir()) / f"classifier-{cache_key(config, injection)}.joblib"
        if path.exists():
            try:
                return cls(joblib.load(path))
            except Exception as exc:  # a damaged or foreign cache file: retrain over it
                log.warning("governance classifier cache %s unusable (%s): retraining", path, type(exc).__name__)
        classifier = cls.train(config, injection)
        save_atomic(classifier.pipeline, path)
        return classifier

    @classmethod
    def train(cls, config: ClassifierConfig, injection: InjectionConfig,
              exclude: frozenset[str] = frozenset()) -> FeedbackClassifier:
        """A fresh, uncached fit (`exclude`: dev ids left out, for cross-validation)."""
        rows = training_rows(config, InjectionGuard(injection), exclude)
        return cls(build_pipeline(config).fit([text for text, _ in rows], [label for _, label in rows]))

    def predict(self, texts: list[str]) -> list[ClassifierScores]:
        if not texts:
            return []
        probabilities = self.pipeline.predict_proba([classifier_view(text) for text in texts])
        return [ClassifierScores({label: round(float(p), 4) for label, p in zip(self.labels, row, strict=True)})
                for row in probabilities]


def save_atomic(pipeline: Pipeline, path: Path) -> None:
    """Write beside `path` and rename, so concurrent runners never read half a file. A cache that cannot be
    written (a read-only checkout) only costs retraining in the next process."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        log.warning("governance classifier not cached in %s: %s", path.parent, exc.strerror)
        return
    try:
        with os.fdopen(fd, "wb") as f:
            _sklearn().joblib.dump(pipeline, f)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        log.warning("governance classifier not cached at %s: %s", path, exc.strerror)
