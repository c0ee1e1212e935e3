"""JSON in slices, so that megabytes of it never hold the event loop.

One ``json.dumps`` or ``json.loads`` (or ``pickle.loads``) is one call into C that keeps the GIL until
it returns: run in a worker thread, a call that takes a second stalls the event loop (every other
connection) for that second. Long lists are therefore handled ``SLICE`` items at a time, and between
slices the loop gets its turn:

* ``encode(message)``: the JSON text of an outgoing message (as Starlette's ``send_json`` writes it);
* ``split(data)`` (in the parser process) and ``join(pieces)`` (in a worker thread of the server): data
  with every long list carried as JSON texts of ``SLICE`` items, cheap to pass between processes, and
  rebuilt a slice at a time.

Only mappings are followed, at most ``MAX_DEPTH`` deep (a save's replay's annotations are three deep);
anything else is passed whole.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

SLICE = 1_000  # items of a long list encoded or decoded at once
MAX_DEPTH = 8  # mappings followed into (deeper values travel whole)


class Slices(NamedTuple):
    """A long list as the JSON texts of its slices (``split``)."""

    texts: list[str]


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def encode(message: Any) -> str:
    """The JSON text of ``message``, its long lists encoded ``SLICE`` items at a time."""
    parts: list[str] = []
    _encode(message, parts, 0)
    return "".join(parts)


def _encode(value: Any, parts: list[str], depth: int) -> None:
    if isinstance(value, dict) and depth < MAX_DEPTH:
        parts.append("{")
        for index, (key, item) in enumerate(value.items()):
            # json writes a key that is not a string as the text of its JSON (1 -> "1", True -> "true")
            parts.append(("," if index else "") + _dumps(key if isinstance(key, str) else _dumps(key)) + ":")
            _encode(item, parts, depth + 1)
        parts.append("}")
    elif isinstance(value, list) and len(value) > SLICE:
        parts.append("[")
        for start in range(0, len(value), SLICE):
            parts.append(("," if start else "") + _dumps(value[start:start + SLICE])[1:-1])
        parts.append("]")
    else:
        parts.append(_dumps(value))


def split(data: Any, depth: int = 0) -> Any:
    """``data`` (parsed JSON) with every list longer than ``SLICE`` replaced by its ``Slices``."""
    if isinstance(data, dict) and depth < MAX_DEPTH:
        return {key: split(value, depth + 1) for key, value in data.items()}
    if isinstance(data, list) and len(data) > SLICE:
        return Slices([_dumps(data[start:start + SLICE]) for start in range(0, len(data), SLICE)])
    return data


def join(pieces: Any, depth: int = 0) -> Any:
    """The data ``split`` was given, rebuilt a slice at a time."""
    if isinstance(pieces, Slices):
        out: list[Any] = []
        for text in pieces.texts:
            out.extend(json.loads(text))
        return out
    if isinstance(pieces, dict) and depth < MAX_DEPTH:
        return {key: join(value, depth + 1) for key, value in pieces.items()}
    return pieces
