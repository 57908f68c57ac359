"""Writing outputs without losing what is already there: atomic replacement, and never over the input."""

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


class SameFileError(ValueError):
    """An output path that names the input file (also through a symlink or a hard link)."""


def refuse_same_file(input_path: str | Path, output_path: str | Path) -> None:
    """Raise `SameFileError` before anything is read when writing `output_path` would replace `input_path`."""
    source, target = Path(input_path), Path(output_path)
    same = source.resolve() == target.resolve()
    if not same and source.exists() and target.exists():
        same = os.path.samefile(source, target)
    if same:
        raise SameFileError(f"{target}: the output would replace the input file {source}; write to another path")


def write_lines_atomic(path: str | Path, lines: Iterable[str]) -> None:
    """Write to a temporary file beside `path`, then rename: a failure never leaves a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    write_lines_atomic(path, [text.removesuffix("\n")])
