"""The README's strength table is the shipped checkpoints' cards (``agents/checkpoints/<name>.json``), cell for cell."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = {  # the table's row heading -> (players, opponent, unit)
    "rounds, 2 players vs `RuleAgent`": (2, "rule", "round"),
    "rounds, 4 players vs 3 `RuleAgent`s (chance 25%)": (4, "rule", "round"),
    "rounds, 2 players vs `RandomAgent`": (2, "random", "round"),
    "whole games, 2 players vs `RuleAgent`": (2, "rule", "game"),
    "whole games, 4 players vs 3 `RuleAgent`s": (4, "rule", "game"),
}
RATE = re.compile(r"(\d+\.\d)% \((\d+\.\d)-(\d+\.\d)\)")


def _table() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("| classic | `classic_2p`")
    lines = []
    for line in text[start:].splitlines():
        if not line.startswith("|"):
            break
        lines.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return lines


def test_every_rate_in_the_readme_strength_table_is_on_the_checkpoints_card() -> None:
    header, _, *rows = _table()
    names = [cell.strip("`") for cell in header[1:]]
    checked = 0
    assert [row[0] for row in rows] == list(ROWS)
    for row in rows:
        players, opponent, unit = ROWS[row[0]]
        for name, cell in zip(names, row[1:], strict=True):
            match = RATE.fullmatch(cell)
            if match is None:
                assert not RATE.search(cell), cell
                continue
            card = json.loads((ROOT / "agents" / "checkpoints" / f"{name}.json").read_text(encoding="utf-8"))
            shown = [f"{100 * r['win_rate']:.1f}% ({100 * r['ci_low']:.1f}-{100 * r['ci_high']:.1f})"
                     for r in card["evaluation"] if (r["edition"], r["num_players"], r["opponent"], r["unit"])
                     == ("classic", players, opponent, unit) and r.get("seed", 777) == 777]
            assert cell in shown, (name, row[0], cell, shown)
            checked += 1
    assert checked >= 20  # the table holds 23 rates today
