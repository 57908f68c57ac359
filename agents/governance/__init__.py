"""The governance stage: PII redaction (Presidio), sentiment (VADER) and compliance decisions.

    from agents.governance import govern, govern_many
    result = govern("Hi, I'm Jane Doe ... I'll see you in court.")
    result.redacted_text, result.decision, result.reasons, result.flags, result.sentiment.label

Nothing after this stage sees the raw text; results carry entity types, offsets and scores, never values.
"""

from agents.governance.config import ConfigError, GovernanceConfig, load_config
from agents.governance.engine import GovernanceEngine, get_engine, govern, govern_many
from agents.governance.pii import Entity
from agents.governance.result import GovernanceResult
from common.sentiment import Sentiment

__all__ = [
    "ConfigError",
    "Entity",
    "GovernanceConfig",
    "GovernanceEngine",
    "GovernanceResult",
    "Sentiment",
    "get_engine",
    "govern",
    "govern_many",
    "load_config",
]
