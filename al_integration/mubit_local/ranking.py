"""How recall orders memory: lexical relevance fused with credit learned from outcomes.

Each outcome is a soft Bernoulli trial: a signal s in [-1, 1] counts as (1 + s) / 2 of a success and
(1 - s) / 2 of a failure, so +1 is a full success, -1 a full failure and 0 half of each. The Beta
posterior mean over those trials is the entry's credit confidence. This works both for rewards in
[-1, 1] and for rule-based rewards in [0, 1] (where every outcome is a "success" by label, yet a 0.9
reward still earns more credit than a 0.2 one).
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RankingWeights:
    """Fusion weights and the Beta prior. score = lexical * rel + credit * conf + verified boost."""

    lexical: float = 0.6
    credit: float = 0.4
    verified_boost: float = 0.05
    prior_alpha: float = 1.0
    prior_beta: float = 1.0
    # Thompson sampling: draw each recall's confidence from the posterior instead of taking its mean,
    # so lessons with little history still get tried (exploration); off = deterministic ranking.
    sample_credit: bool = False


def clamp_signal(signal: float) -> float:
    return max(-1.0, min(1.0, float(signal)))


def soft_trial(signal: float) -> tuple[float, float]:
    """The (success, failure) mass one outcome adds to the Beta posterior."""
    s = clamp_signal(signal)
    return (1.0 + s) / 2.0, (1.0 - s) / 2.0


def credit_confidence(alpha_mass: float, beta_mass: float, weights: RankingWeights) -> float:
    """Posterior mean of Beta(prior_alpha + successes, prior_beta + failures)."""
    a = weights.prior_alpha + alpha_mass
    b = weights.prior_beta + beta_mass
    return a / (a + b)


def sampled_confidence(
    alpha_mass: float, beta_mass: float, weights: RankingWeights, rng: random.Random
) -> float:
    """One draw from Beta(prior_alpha + successes, prior_beta + failures)."""
    return rng.betavariate(weights.prior_alpha + alpha_mass, weights.prior_beta + beta_mass)


@dataclass(frozen=True)
class ScoreParts:
    """One item's score, broken down for `explain`."""

    lexical_score: float  # BM25 relevance normalised to [0, 1] against the best hit of this query
    credit_confidence: float
    verified_boost: float
    score: float


def fuse(relevance: float, confidence: float, verified: bool, weights: RankingWeights) -> ScoreParts:
    boost = weights.verified_boost if verified else 0.0
    score = weights.lexical * relevance + weights.credit * confidence + boost
    return ScoreParts(relevance, confidence, boost, score)
