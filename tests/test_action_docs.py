"""The action tables documented in ``uno_env.core.actions`` (the layout's home) and in the env's
module docstring (``uno_env.uno_v0``) say the same thing for every id they both list."""

from __future__ import annotations

import re

import uno_env.uno_v0 as uno_v0
from uno_env.core import actions


def table_rows(doc: str) -> dict[str, str]:
    """``id -> meaning`` of the first RST simple table in ``doc`` whose header is ``id text meaning``."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split() == ["id", "text", "meaning"])
    meaning_at = lines[start].index("meaning")
    rows: dict[str, str] = {}
    last = ""
    for line in lines[start + 2:]:
        if line.startswith("="):
            break
        key = line[:meaning_at].split()[0] if line[:meaning_at].strip() else ""
        if key:
            last = key
            rows[key] = line[meaning_at:].strip()
        else:  # a continuation line
            rows[last] += " " + line.strip()
    return rows


def test_the_envs_action_table_agrees_with_the_layouts() -> None:
    layout = table_rows(actions.__doc__ or "")
    env = table_rows(uno_v0.__doc__ or "")
    assert layout["56"] == env["56"] == "keep the card just drawn (forced when it does not play)"  # rule 3.4
    shared = sorted(set(layout) & set(env))
    assert shared == ["0-51", "55", "56", "57-60", "61-64", "71-79"]
    for key in shared:  # the env's row may leave out the layout's closing detail in parentheses
        assert layout[key] == env[key] or re.fullmatch(re.escape(env[key]) + r" \(.*\)", layout[key]), key
