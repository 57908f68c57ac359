"""What the governance stage hands on: redacted text, sentiment, decision, reasons, flags and entities.

It carries no raw personal data: entities are types, offsets into the analysed text, and scores.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agents.governance.config import Decision
from agents.governance.pii import Entity
from common.sentiment import Sentiment


class GovernanceResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    redacted_text: str
    sentiment: Sentiment
    decision: Decision
    confidence: float  # 0..1: how sure the evidence makes the decision (agents/governance/policy.py)
    reasons: list[str]
    flags: list[str]
    entities: list[Entity]

    @property
    def safety(self) -> bool:
        """A self-harm mention: the reply path must hand over to a person with care."""
        return "safety" in self.flags

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json")
