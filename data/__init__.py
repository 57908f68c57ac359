"""The feedback dataset: its JSONL splits, the seed lessons, the hand-written evaluation sets and their loaders.

`data/generate.py` writes the splits (`python data/generate.py`); `data.loader` reads them, a user's JSONL or
CSV file, or a saved Hugging Face dataset. Below `policy` and `training`, which both read it.
"""

from data.governance_eval import EVAL_SPLITS, GOVERNANCE_EVAL_PATH, GovernanceCase, load_governance_eval
from data.loader import (
    DATA_DIR,
    LESSONS_PATH,
    SPLITS,
    DatasetError,
    FeedbackTask,
    Lesson,
    load_feedback,
    load_lessons,
    resolve_source,
)

__all__ = ["DATA_DIR", "EVAL_SPLITS", "GOVERNANCE_EVAL_PATH", "LESSONS_PATH", "SPLITS", "DatasetError", "FeedbackTask",
           "GovernanceCase", "Lesson", "load_feedback", "load_governance_eval", "load_lessons", "resolve_source"]
