"""Partial configs over a base: dotted `KEY=VALUE` overrides from a command line, and YAML files merged key by key.

    apply_overrides(base, RunConfig, ["grpo.lr=1e-4", "rollouts.group_size=8"], RunConfigError)

Keys are checked against the pydantic model's fields before the model is built, so a typo is a one-line error
naming the key and the closest names. Values are read as YAML (`8`, `1e-4`, `null`, `true`, `[a, b]`), except for
text and path fields, which take the text as typed. The model validates the result, so a bad value names the
key and what the field expects. Works for any model: new sections need nothing here.
"""

import copy
import difflib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)
_NULL = ("null", "~", "None", "none")


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`base` with `over` laid on top, mapping by mapping (a copy; neither argument changes)."""
    merged = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def apply_overrides(base: dict[str, Any], model: type[Model], overrides: list[str],
                    error: type[Exception]) -> Model:
    """`model` built from `base` with each `KEY=VALUE` of `overrides` set (later ones win)."""
    data = copy.deepcopy(base)
    given: dict[str, str] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise error(f"{item!r}: an override is KEY=VALUE, for example grpo.lr=1e-4")
        annotation = _annotation(model, key, error)
        _set(data, key.split("."), _parse(raw.strip(), annotation))
        given[key] = raw.strip()
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(part) for part in first["loc"])
        key = next((k for k in reversed(given) if loc == k or loc.startswith(k + ".")), None)
        shown = f"{key}={given[key]}" if key is not None else (loc or "config")
        raise error(f"{shown}: {first['msg']}") from None


def _optional_of(annotation: Any) -> tuple[Any, bool]:
    """(X, True) for `X | None`; (annotation, False) otherwise."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(args) < len(typing.get_args(annotation)):
            return args[0], True
    return annotation, False


def _annotation(model: type[BaseModel], key: str, error: type[Exception]) -> Any:
    """The type of the setting `key` names; an unknown key raises `error` naming it."""
    parts = key.split(".")
    current: Any = model
    for i, part in enumerate(parts):
        section = ".".join(parts[:i])
        target, _ = _optional_of(current)
        if isinstance(target, type) and issubclass(target, BaseModel):
            fields = target.model_fields
            if part not in fields:
                close = difflib.get_close_matches(part, fields, n=1)
                guess = next((k for k in _keys(target, section) if k.endswith("." + part)),  # `lr`: `grpo.lr`
                             ".".join([*parts[:i], close[0]]) if close else None)
                hint = f"did you mean {guess}? " if guess else ""
                where = f"{section} has" if section else "settings are"
                raise error(f"{key}: unknown setting ({hint}{where}: {', '.join(fields)})")
            current = fields[part].annotation
        elif typing.get_origin(target) is dict:
            args = typing.get_args(target)
            current = args[1] if len(args) == 2 else Any
        else:
            raise error(f"{key}: {section} is a single setting, not a section")
    return current


def _keys(model: type[BaseModel], prefix: str) -> list[str]:
    """Every dotted key under `model`, sections included."""
    keys = []
    for name, field in model.model_fields.items():
        key = f"{prefix}.{name}" if prefix else name
        keys.append(key)
        target, _ = _optional_of(field.annotation)
        if isinstance(target, type) and issubclass(target, BaseModel):
            keys += _keys(target, key)
    return keys


def _parse(raw: str, annotation: Any) -> Any:
    target, optional = _optional_of(annotation)
    if optional and raw in _NULL:
        return None
    if target in (str, Path):
        return raw
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw  # the model says what it expected


def _set(data: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        if not isinstance(data.get(part), dict):
            data[part] = {}
        data = data[part]
    data[parts[-1]] = value
