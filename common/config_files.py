"""One way to read a YAML config file into a pydantic model, with one-line errors naming file and field.

Used by every config of the product.
"""

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)


def load_yaml_model(path: str | Path, model: type[Model], error: type[Exception]) -> Model:
    """Parse `path` as `model`; any problem raises `error("FILE[:LINE]: what is wrong")`."""
    return validate_model(read_yaml(path, error), model, error, where=str(path))


def read_yaml(path: str | Path, error: type[Exception]) -> Any:
    """The parsed YAML of `path` (None for an empty file); a file that cannot be read or parsed raises `error`."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not valid UTF-8 (byte {e.start})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or " ".join(str(e).split())
        raise error(f"{path}{where}: not valid YAML ({problem})") from None


def validate_model(raw: Any, model: type[Model], error: type[Exception], where: str) -> Model:
    """`model` from parsed data; the first validation problem raises `error("WHERE: field 'a.b': why")`."""
    try:
        return model.model_validate({} if raw is None else raw)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise error(f"{where}: field '{field}': {first['msg']}") from None
