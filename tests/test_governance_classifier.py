"""The learned classifier: trained from repository data only (never the held-out part), deterministic, cached
by a key of everything it depends on, and a damaged cache retrains instead of failing."""

import pytest

from agents.governance.classifier import FeedbackClassifier, cache_key, training_rows
from agents.governance.config import load_config
from agents.governance.rules import InjectionGuard
from data import load_governance_eval

TEXTS = ["The survey sample is tiny and the intervals look wrong.", "I keep thinking about ending my life.",
         "Buy followers and likes today, best prices!", "My lawyer will be in touch about the report."]


@pytest.fixture(scope="module")
def config():
    return load_config()


def test_training_rows_come_from_the_dataset_and_dev_never_heldout(config):
    rows = training_rows(config.classifier, InjectionGuard(config.prompt_injection))
    texts = {text for text, _ in rows}
    assert len(rows) > 300
    assert {label for _, label in rows} == {"feedback", "safety", "legal", "harassment", "spam"}
    heldout = load_governance_eval("heldout")
    assert not any(case.feedback in text or text.strip() and text.strip() in case.feedback
                   for case in heldout for text in texts if len(text.strip()) > 30)
    # personal data of the training rows is blanked, so names never become features
    assert not any("jose.nunez" in text or "Maria Lopez" in text for text in texts)


def test_the_model_is_cached_and_reloaded_with_the_same_predictions(config, tmp_path):
    trained = FeedbackClassifier.load(config.classifier, config.prompt_injection, tmp_path)
    assert trained.predict(TEXTS[:1])[0].probabilities["feedback"] > 0.5
    [path] = list(tmp_path.glob("classifier-*.joblib"))
    assert path.name == f"classifier-{cache_key(config.classifier, config.prompt_injection)}.joblib"
    stamp = path.stat().st_mtime_ns
    loaded = FeedbackClassifier.load(config.classifier, config.prompt_injection, tmp_path)
    assert path.stat().st_mtime_ns == stamp  # a cache hit, not a retrain
    assert loaded.predict(TEXTS) == trained.predict(TEXTS)
    for scores in loaded.predict(TEXTS):
        assert set(scores.probabilities) == {"feedback", "safety", "legal", "harassment", "spam"}
        assert abs(sum(scores.probabilities.values()) - 1) < 1e-3


def test_a_damaged_cache_file_is_retrained_over_with_the_same_model(config, tmp_path):
    """Also the determinism check: a second training gives the first one's predictions exactly."""
    first = FeedbackClassifier.load(config.classifier, config.prompt_injection, tmp_path / "a")
    path = tmp_path / "b" / f"classifier-{cache_key(config.classifier, config.prompt_injection)}.joblib"
    path.parent.mkdir()
    path.write_bytes(b"not a model")
    retrained = FeedbackClassifier.load(config.classifier, config.prompt_injection, path.parent)
    assert retrained.predict(TEXTS) == first.predict(TEXTS)
    assert path.stat().st_size > 1000


def test_the_key_changes_with_the_settings(config):
    other = config.classifier.model_copy(update={"c": config.classifier.c * 2})
    assert cache_key(other, config.prompt_injection) != cache_key(config.classifier, config.prompt_injection)


def test_a_cache_that_cannot_be_written_still_gives_a_classifier(config, tmp_path):
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("x")
    classifier = FeedbackClassifier.load(config.classifier, config.prompt_injection, not_a_directory / "cache")
    assert classifier.predict(TEXTS[:1])[0].probabilities["feedback"] > 0.5
