"""The benchmark's reference table: every shipped agent's quick card, as the docs show it.

Usage (from the repository root)::

    uno-env benchmark rule --quick --players 2 4 --out docs/experiments/benchmark_cards/rule   # one per agent
    python -m benchmarks.reference_table                    # prints the table docs/agents.md holds

The cards (``uno-env benchmark SPEC --quick --players 2 4 --out ...``) are kept in
``docs/experiments/benchmark_cards/``; ``tests/test_benchmark.py`` checks that the table in
``docs/agents.md`` is the one these cards make, so the page cannot drift from the measurement.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARDS = Path(__file__).resolve().parents[1] / "docs" / "experiments" / "benchmark_cards"
# The rows, in this order: the baselines, the table's default ``ppo``, then every shipped checkpoint by name
# (tests/test_benchmark.py checks that none is missing), then the search agent ``guided`` at 64 playouts a
# move (a quick card at its default 512 would take about eight times the 90 minutes of one core this one took).
ORDER = ("random", "simple", "rule", "ismcts:iterations=100", "ppo", "ppo:classic", "ppo:classic_points",
         "ppo:classic_2p", "ppo:classic_2p_points", "ppo:classic_2p_long", "ppo:classic_2p_long_points",
         "ppo:classic_4p_points", "ppo:classic_3to6", "ppo:universal", "ppo:universal_batched", "ppo:rule_net",
         "guided:playouts=64")
SHOWN = ("random", "rule", "ppo")  # the references given a column


def _rate(ref: dict[str, Any]) -> str:
    return f"{100 * ref['win_rate']:.1f}% ({100 * ref['ci_low']:.1f}-{100 * ref['ci_high']:.1f})"


def table(cards: Path = CARDS) -> str:
    """The markdown table of the cards in ``cards``: a section per table size, a row per agent of ``ORDER``."""
    loaded = {}
    for path in sorted(cards.glob("*.json")):
        card = json.loads(path.read_text(encoding="utf-8"))
        loaded[card["agent"]] = card
    missing = [spec for spec in ORDER if spec not in loaded]
    if missing:
        raise FileNotFoundError(f"no card in {cards} for {', '.join(missing)}")
    sizes = sorted({t["players"] for card in loaded.values() for t in card["tables"]})
    lines: list[str] = []
    for players in sizes:
        lines += [f"**{players} players**", "",
                  "| agent | vs random | vs rule | vs ppo | OpenSkill mu (rule = 25) |", "|---|---:|---:|---:|---:|"]
        for spec in ORDER:
            card = loaded[spec]
            (tab,) = [t for t in card["tables"] if t["players"] == players]
            refs = {r["reference"]: r for r in tab["references"]}
            cells = " | ".join(_rate(refs[name]) for name in SHOWN)
            lines.append(f"| `{spec}` ({tab['agent_label']}) | {cells} | {tab['mu']:.2f} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(table(), end="")
