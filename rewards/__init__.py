"""The rule-based reward. `score(response, feedback)`; CLI: `python -m rewards score ...`."""

from rewards.config import COMPONENTS, GATES, ConfigError, RewardConfig, load_config
from rewards.reward import ComponentScore, RewardResult, RewardScorer, default_scorer, score

__all__ = [
    "COMPONENTS",
    "ComponentScore",
    "ConfigError",
    "GATES",
    "RewardConfig",
    "RewardResult",
    "RewardScorer",
    "default_scorer",
    "load_config",
    "score",
]
