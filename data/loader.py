"""The feedback dataset: one loader for our splits, a user's JSONL or CSV file, or a saved HF dataset.

Rows are validated line by line before Hugging Face `datasets` parses the file, because Arrow's own
errors name neither the line nor the field. A bad row raises `DatasetError("FILE:LINE: field ...")`.
"""

import csv
import io
from pathlib import Path
from typing import Literal

import datasets
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from common import jsonl

# Loading a few hundred rows needs no progress bars of its own; long work shows ours.
datasets.disable_progress_bars()

DATA_DIR = Path(__file__).resolve().parent
SPLITS = ("train", "val", "test")
LESSONS_PATH = DATA_DIR / "lessons.jsonl"

Action = Literal["answer", "escalate", "reject"]
Quality = Literal["good", "too_short", "oversold", "generic", "off_tone"]


class DatasetError(ValueError):
    """A dataset that cannot be used; the message names the file, the line (or row) and the field."""


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    quality: Quality
    text: StrictStr = Field(min_length=1)


class InjectedPii(BaseModel):
    """A raw personal-data value the generator injected; kept only so tests can check redaction."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "LOCATION"]
    value: StrictStr


class FeedbackTask(BaseModel):
    """One task. Only `feedback` is required of a user's file; our own splits fill every field."""

    model_config = ConfigDict(extra="ignore")
    id: StrictStr | None = None
    feedback: StrictStr = Field(min_length=1)
    category: StrictStr | None = None
    topic: StrictStr | None = None
    expected_action: Action | None = None
    prompt_injection: bool = False
    pii: list[InjectedPii] = []
    references: list[Reference] = []


class Lesson(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictStr
    text: StrictStr = Field(min_length=1)
    helpful: bool  # ground truth for evaluation only; never sent to Mubit


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "row"
    return f"field '{field}': {first['msg'].lower()}"


def _validate(model: type[BaseModel], data: object, where: str) -> BaseModel:
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise DatasetError(f"{where}: {_describe(e)}") from None


def read_jsonl(path: Path, model: type[BaseModel]) -> list[BaseModel]:
    """Validate every non-blank line of a JSONL file against `model`."""
    try:
        lines = jsonl.read_jsonl(path)
    except jsonl.JsonlError as e:
        raise DatasetError(str(e)) from None
    rows = []
    for line in lines:
        if line.error:
            raise DatasetError(f"{line.where(path)}: {line.error}")
        rows.append(_validate(model, line.value, line.where(path)))
    if not rows:
        raise DatasetError(f"{path}: no rows")
    return rows


def _validate_csv(path: Path) -> None:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DatasetError(f"{path}: cannot read: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise DatasetError(f"{path}:{line}: not valid UTF-8") from None
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "feedback" not in reader.fieldnames:
        raise DatasetError(f"{path}:1: the header has no 'feedback' column")
    count = 0
    for row in reader:
        data = {k: v for k, v in row.items() if k in ("id", "feedback", "category", "topic", "expected_action") and v}
        _validate(FeedbackTask, data, f"{path}:{reader.line_num}")
        count += 1
    if not count:
        raise DatasetError(f"{path}: no rows")


def _with_defaults(ds: datasets.Dataset, name: str) -> datasets.Dataset:
    """Give every row the full task schema, so the rest of the product never checks for missing columns."""
    defaults = FeedbackTask(feedback="-").model_dump()

    def fill(row: dict, index: int) -> dict:
        task = FeedbackTask.model_validate({k: v for k, v in row.items() if v is not None})
        return {**defaults, **task.model_dump(), "id": task.id or f"{name}-{index + 1}"}

    columns = [c for c in ds.column_names if c not in defaults]
    return ds.map(fill, with_indices=True, remove_columns=columns, desc=None)


def resolve_source(source: str | Path) -> Path:
    if str(source) in SPLITS:
        return DATA_DIR / f"feedback_{source}.jsonl"
    path = Path(source)
    if not path.exists():
        raise DatasetError(f"{path}: no such file or directory (a split name is one of {', '.join(SPLITS)})")
    return path


def load_feedback(source: str | Path = "train") -> datasets.Dataset:
    """Load a split name (`train` / `val` / `test`), a JSON-lines file (`.jsonl`, or `.json` holding one object a
    line: a JSON array is refused at its first line), a `.csv` file, or a directory written by
    `Dataset.save_to_disk`. Raises `DatasetError` naming the file and line of the first bad row."""
    path = resolve_source(source)
    if path.is_dir():
        try:
            ds = datasets.load_from_disk(str(path))
        except (FileNotFoundError, ValueError) as e:
            raise DatasetError(f"{path}: not a saved Hugging Face dataset ({e})") from None
        if isinstance(ds, datasets.DatasetDict):
            raise DatasetError(f"{path}: holds several splits ({', '.join(ds)}); point at one split's directory")
        for index, row in enumerate(ds):
            _validate(FeedbackTask, {k: v for k, v in row.items() if v is not None}, f"{path}: row {index + 1}")
    elif path.suffix in (".jsonl", ".json"):
        read_jsonl(path, FeedbackTask)
        ds = datasets.load_dataset("json", data_files=str(path), split="train")
    elif path.suffix == ".csv":
        _validate_csv(path)
        ds = datasets.load_dataset("csv", data_files=str(path), split="train")
    else:
        raise DatasetError(f"{path}: unsupported format (use .jsonl, .json, .csv or a saved dataset directory)")
    return _with_defaults(ds, path.stem)


def load_lessons(path: Path = LESSONS_PATH) -> list[Lesson]:
    return read_jsonl(path, Lesson)
