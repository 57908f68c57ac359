"""The one JSONL line reader: every CLI and loader of ours reads its input through it.

Bad lines are reported, not raised, so each caller decides between a one-line error (`FILE:LINE: why`)
and skipping the line (`--skip-invalid`).
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class JsonlError(ValueError):
    """A JSONL file that cannot be read at all; the message names the file."""


@dataclass(frozen=True, slots=True)
class JsonlLine:
    number: int  # 1-based line number in the file
    value: Any = None  # the parsed JSON value, when `error` is None
    error: str | None = None  # why the line is unusable: "not valid UTF-8 (...)", "not valid JSON (...)"

    def where(self, path: Path) -> str:
        return f"{path}:{self.number}"


def read_jsonl(path: str | Path, *, objects: bool = True) -> list[JsonlLine]:
    """Every non-blank line of `path`, parsed; with `objects`, a value that is not a JSON object is an error."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise JsonlError(f"{path}: cannot read ({e.strerror})") from None
    lines = []
    for number, data in enumerate(raw.splitlines(), start=1):
        if not data.strip():
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            lines.append(JsonlLine(number, error=f"not valid UTF-8 (byte 0x{data[e.start]:02x} at column "
                                                 f"{e.start + 1})"))
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            lines.append(JsonlLine(number, error=f"not valid JSON ({e.msg} at column {e.colno})"))
            continue
        if objects and not isinstance(value, dict):
            lines.append(JsonlLine(number, error=f"expected a JSON object, got {type(value).__name__}"))
            continue
        lines.append(JsonlLine(number, value))
    return lines
