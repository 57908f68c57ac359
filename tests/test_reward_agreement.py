"""The reward against the reader: pairwise agreement on the hand-written reader set (issue #12).

Dev is what the reward was tuned on; held-out was never looked at while tuning, so its floor is what was
measured at the end, not the target (docs/reward.md has both figures and every held-out disagreement).
"""

import pytest

from data.reader_set import GENUINE_KINDS, load_reader_set, pairwise_agreement
from rewards import default_scorer


def agreement(split: str):
    messages = load_reader_set(split)
    scored = iter(default_scorer().score_many([(r.text, m.feedback) for m in messages for r in m.replies]))
    return pairwise_agreement(messages, [[next(scored).total for _ in m.replies] for m in messages])


@pytest.fixture(scope="module")
def dev():
    return agreement("dev")


def test_dev_agreement_and_signs(dev):
    assert dev.overall >= 0.95
    assert dev.rate("salad", "careful") == 1.0  # the careful reply above keyword salad on every message
    assert all(dev.share_below_zero(k) == 0 for k in GENUINE_KINDS)  # every genuine reply acceptable
    assert dev.share_below_zero("salad") == dev.share_below_zero("placeholder") == 1.0
    assert dev.share_below_zero("off_target") >= 0.95
    assert min(dev.rate(k) for k in dev.pairs) >= 0.95


def test_heldout_agreement_and_signs():
    """Floors at what was measured once, at the end (0.917 overall; targets 0.95 and all-signs not met on
    held-out: four plain replies fail the coherence gate, see docs/reward.md)."""
    heldout = agreement("heldout")
    assert heldout.overall >= 0.9
    assert heldout.share_below_zero("careful") == 0 and heldout.share_below_zero("placeholder") == 1.0
    assert heldout.share_below_zero("salad") >= 0.95 and heldout.share_below_zero("off_target") >= 0.85
    assert heldout.rate("oversold") == 1.0 and heldout.rate("salad", "careful") >= 0.95
