"""A pydantic schema in words: refusal messages and commented YAML generated from the models' fields.

``refusal(root, error)`` turns pydantic's ``ValidationError`` into one ``ConfigError`` sentence that names
the key (``env.num_players[1]``, union members left out), what the field allows (its type, range and
choices, read from its annotation and ``Field`` constraints) and its default; ``commented_yaml(model)``
writes a model's values as YAML under each field's description and what it allows. Values are shown cut
short (``shown``): a message never writes out unbounded data. Used by ``training.run.config``.
"""

from __future__ import annotations

import json
import reprlib
import textwrap
import types
import typing
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

__all__ = ["ConfigError", "Refusal", "commented_yaml", "describe", "field_comment", "refusal", "shown"]


class ConfigError(ValueError):
    """A config that cannot be used; the message names the offending key, what it allows and its default."""


class Refusal(ValueError):
    """A semantic check's refusal inside a model: ``key`` is relative to the model that raises it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlong = 3, 6, 6, 60, 60, 40


def shown(value: object) -> str:
    """``repr(value)`` cut short: a refusal message never writes out unbounded data."""
    try:
        text = _SHOWN.repr(value)
    except ValueError:  # an integer too long for Python to write out (over 4,300 digits)
        return f"a {type(value).__name__} too long to show"
    return text if len(text) <= 160 else text[:157] + "..."


def _unwrap(hint: object) -> tuple[object, list[object]]:
    """``(type, constraints)`` of ``Annotated[type, Field(...), ...]`` (constraints flattened)."""
    constraints: list[object] = []
    while typing.get_origin(hint) is Annotated:
        hint, *extra = typing.get_args(hint)
        for item in extra:
            constraints += item.metadata if isinstance(item, FieldInfo) else [item]
    return hint, constraints


def _is_model(hint: object) -> typing.TypeGuard[type[BaseModel]]:
    return isinstance(hint, type) and issubclass(hint, BaseModel)


def _bound(constraints: Sequence[object], names: tuple[str, ...]) -> object:
    return next((getattr(c, n) for c in constraints for n in names if getattr(c, n, None) is not None), None)


def _interval(constraints: Sequence[object]) -> str:
    low, high = _bound(constraints, ("ge",)), _bound(constraints, ("le",))
    low_open, high_open = _bound(constraints, ("gt",)), _bound(constraints, ("lt",))
    if low is None and low_open is None and high is None and high_open is None:
        return ""
    left = f"[{low}" if low is not None else f"({low_open}" if low_open is not None else "(-inf"
    right = f"{high}]" if high is not None else f"{high_open})" if high_open is not None else "inf)"
    return f"{left}, {right}"


def describe(hint: object, constraints: Sequence[object] = ()) -> str:
    """What a value of type ``hint`` may be, in words (``an integer in [1, 256]``)."""
    hint, more = _unwrap(hint)
    constraints = [*constraints, *more]
    interval = _interval(constraints)
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(describe(option) for option in typing.get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(str(choice) for choice in typing.get_args(hint))
    sizes = ""
    low, high = _bound(constraints, ("min_length",)), _bound(constraints, ("max_length",))
    if origin in (list, dict) and (low or high):
        sizes = f" ({low or 0} to {high} {'items' if origin is list else 'keys'})"
    if origin is list:
        return f"a list{sizes}, each {describe(typing.get_args(hint)[0])}"
    if origin is dict:
        return f"a mapping{sizes} of names to {describe(typing.get_args(hint)[1])}"
    if _is_model(hint):
        return "a mapping of keys (" + ", ".join(hint.model_fields) + ")"
    names: dict[object, str] = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
                                type(None): "null"}
    return names.get(hint, str(hint)) + (f" in {interval}" if interval else "")


class _Place(typing.NamedTuple):
    """Where an error's ``loc`` points in the schema."""

    key: str  # ``env.num_players[1]``, union tags left out
    hint: object  # the type there (None: a key the schema does not have)
    constraints: list[object]
    field: FieldInfo | None  # the named field it is in (its default is shown)
    field_key: str  # ``env.num_players``
    known: tuple[str, ...]  # a model's keys, where the key is unknown


def _place(root: type[BaseModel], loc: Sequence[int | str]) -> _Place:
    """Walk ``loc`` down the schema of ``root``."""
    hint: object = root
    constraints: list[object] = []
    key, field, field_key = "", None, ""
    for part in loc:
        hint, more = _unwrap(hint)
        constraints += more
        origin = typing.get_origin(hint)
        if _is_model(hint):
            name = str(part)[:60]
            key = f"{key}.{name}" if key else name
            info = hint.model_fields.get(str(part))
            if info is None:
                return _Place(key, None, [], None, key, tuple(hint.model_fields))
            hint, constraints, field, field_key = info.annotation, list(info.metadata), info, key
        elif origin in (Union, types.UnionType):  # pydantic names the member tried: not part of the key
            options = typing.get_args(hint)
            listed = [o for o in options if typing.get_origin(_unwrap(o)[0]) is list]
            plain = [o for o in options if o not in listed and getattr(_unwrap(o)[0], "__name__", "") == part]
            hint = (listed if str(part).startswith("list") else plain or options)[0]
        elif origin is list:
            key, hint, constraints = f"{key}[{part}]", typing.get_args(hint)[0], []
        elif origin is dict:
            if part == "[key]":
                hint = typing.get_args(hint)[0]
            else:
                key, hint, constraints = f"{key}.{str(part)[:60]}", typing.get_args(hint)[1], []
    hint, more = _unwrap(hint)
    return _Place(key, hint, constraints + more, field, field_key, ())


def _yaml_hint(value: object) -> str:
    """Why a number may have arrived as a string (PyYAML reads ``3e-4`` as text: YAML 1.1 wants ``3.0e-4``)."""
    if isinstance(value, str) and len(value) < 40:
        try:
            float(value)
        except ValueError:
            return ""
        return " (a string: write a number without quotes; YAML reads 3e-4 as text, 3.0e-4 as a number)"
    return ""


def _message(root: type[BaseModel], error: ErrorDetails, renamed: Mapping[str, str]) -> str:
    """One pydantic error as a sentence naming the key, what is allowed and the default."""
    loc, kind, value = tuple(error["loc"]), str(error["type"]), error.get("input")
    cause = (error.get("ctx") or {}).get("error")
    place = _place(root, loc)
    if isinstance(cause, ConfigError):  # a check that names its key itself (ppo.init_from)
        return str(cause)
    if isinstance(cause, Refusal):
        key = f"{place.key}.{cause.key}" if place.key else cause.key
        return f"{key}: {cause}"
    key = place.key or "config"
    if kind == "extra_forbidden":
        text = f"unknown key {key} (known: {', '.join(place.known)})"
        if len(loc) == 1 and str(loc[0]) in renamed:
            text += f"; {renamed[str(loc[0])]}"
        return text
    allowed = describe(place.hint, place.constraints) if place.hint is not None else "?"
    if kind == "value_error":
        problem = str(cause)
    elif kind == "finite_number":
        problem = f"expected a finite number, got {shown(value)}"
    elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        if isinstance(value, int) and value.bit_length() > 64:
            problem = f"an integer of {value.bit_length()} bits is out of range (allowed: {allowed})"
        else:
            problem = f"must be in {_interval(place.constraints) or allowed}, got {shown(value)}"
    elif kind in ("too_short", "too_long"):
        count = len(value) if isinstance(value, (list, dict, str, tuple)) else shown(value)
        problem = f"expected {allowed}, got {count} items"
    else:  # a value of the wrong type (strict: no coercion)
        problem = f"expected {allowed}, got {shown(value)}{_yaml_hint(value)}"
    if place.field is not None and not _is_model(place.field.annotation):
        problem += f" (default: {json.dumps(place.field.get_default(call_default_factory=True), default=str)})"
    return f"{key}: {problem}"


def refusal(root: type[BaseModel], err: ValidationError, renamed: Mapping[str, str] = MappingProxyType({})) -> ConfigError:
    """The first problem of ``err`` (from validating ``root``) as a ConfigError naming the key, what it allows and
    its default; ``renamed`` maps a former top-level key to a note on what replaced it. Where every member of a union refused the value's type,
    pydantic reports one error per member: they become one sentence about the value."""
    errors = err.errors(include_url=False)
    chosen, loc = errors[0], tuple(errors[0]["loc"])
    members = [chosen]
    if loc and isinstance(loc[-1], str) and typing.get_origin(_place(root, loc[:-1]).hint) in (Union, types.UnionType):
        members = [e for e in errors if tuple(e["loc"])[:len(loc) - 1] == loc[:-1]]
        beyond_type = [e for e in members if not e["type"].endswith("_type")]
        chosen = beyond_type[0] if beyond_type else {**chosen, "loc": loc[:-1]}
    more = len(errors) - len(members)
    return ConfigError(_message(root, chosen, renamed) + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""))


def field_comment(info: FieldInfo) -> str:
    """A field's description and what it allows (``Allowed: an integer in [1, 256].``), from the schema."""
    if _is_model(info.annotation):
        return " ".join((info.annotation.__doc__ or "").split())
    allowed = describe(info.annotation, info.metadata)
    return f"{info.description or ''} Allowed: {allowed}.".strip()


def commented_yaml(model: BaseModel, indent: str = "") -> str:
    """``model`` as YAML, each key under a comment from the schema: its description and what it allows (a
    section's from its class docstring). JSON is YAML's flow style: one line per value."""
    lines = []
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        doc = field_comment(info).replace("``", "`")
        lines += [f"{indent}# {line}" for line in textwrap.wrap(doc, 100 - len(indent))]
        if isinstance(value, BaseModel):
            lines += [f"{indent}{name}:", commented_yaml(value, indent + "  ")]
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            lines += [f"{indent}{name}:"] + [f"{indent}  - {json.dumps(v.model_dump())}" for v in value]
        else:
            lines.append(f"{indent}{name}: {json.dumps(value)}")
    return "\n".join(lines)
