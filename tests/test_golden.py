"""Golden playthroughs (OpenSpiel style): fixed-seed rounds with every observation pinned.

Each file under ``tests/data/golden/`` records one round of one edition (and one under the
house rules) played by a fixed policy: before every decision, the phase, the seat deciding,
its legal actions, *every* seat's observation (``uno_env.observe``, sparse: ``index`` for a 1,
``index:value`` otherwise) and the action taken; at the end the round's winner and scores. A
change to the rules, the dealing, the legal actions or the observation encoding shows up as a
diff in these files, so it cannot pass unnoticed.

After a deliberate change, regenerate them from the repository root with::

    .venv/bin/python -m tests.test_golden --regenerate

and read the diff: it should show exactly the change intended (bump ``OBSERVATION_VERSION``
when the encoding's layout or meaning changed).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from uno_env.core import Game, Rules
from uno_env.core.actions import NUM_PLAY_ACTIONS
from uno_env.observation import OBSERVATION_VERSION, observation_size, observe

DATA = Path(__file__).parent / "data" / "golden"

# Seeds picked (among 0-59) for short rounds that reach the special wild's effect and the
# challenge, UNO and catch decisions (and, under the house rules, stack and swap).
CASES: dict[str, dict[str, Any]] = {
    "classic_3p_seed54": {"edition": "classic", "num_players": 3, "seed": 54},
    "monster_high_3p_seed18": {"edition": "monster_high", "num_players": 3, "seed": 18},
    "angry_birds_2p_seed59": {"edition": "angry_birds", "num_players": 2, "seed": 59},
    "masters_of_the_universe_3p_seed2": {"edition": "masters_of_the_universe", "num_players": 3, "seed": 2},
    "classic_4p_house_seed7": {"edition": "classic", "num_players": 4, "seed": 7, "stacking": True,
                               "seven_zero": True, "draw_until_playable": True},
}
MAX_DECISIONS = 200


def sparse(vector: Any) -> str:
    """Nonzero entries: ``i`` for a 1, ``i:value`` otherwise (values printed with ``repr``)."""
    parts = []
    for i, value in enumerate(vector.tolist()):
        if value:
            parts.append(str(i) if value == 1 else f"{i}:{value!r}")
    return " ".join(parts)


def choose(legal: list[Any], step: int) -> Any:
    """The fixed policy: a card when one plays (the ``step * 7``-th), else the ``step``-th action."""
    plays = [a for a in legal if a < NUM_PLAY_ACTIONS]
    return plays[(step * 7) % len(plays)] if plays else legal[step % len(legal)]


def playthrough(case: str) -> list[str]:
    """The lines of a case's golden file."""
    options = dict(CASES[case])
    seed = options.pop("seed")
    rules = Rules(**options)
    n = rules.num_players
    game = Game(rules, seed=seed)
    lines = [
        f"# golden playthrough {case}: Game(Rules(**{json.dumps(options, sort_keys=True)}), seed={seed})",
        f"# observation version {OBSERVATION_VERSION}, max_players {n} ({observation_size(n)} floats), sparse",
    ]
    step = 0
    while not game.is_round_over and step < MAX_DECISIONS:
        legal = game.legal_actions()
        lines.append(f"step {step} phase {game.phase.text} seat {game.current_player}")
        lines.append("legal " + ", ".join(map(str, legal)))
        for seat in range(n):
            lines.append(f"obs {seat} " + sparse(observe(game, seat, max_players=n)))
        action = choose(legal, step)
        lines.append(f"action {action}")
        game.step(action)
        step += 1
    lines.append(f"end {game.phase.text} winner {game.round_winner} scores {game.scores}")
    return lines


def path_of(case: str) -> Path:
    return DATA / f"{case}.txt"


@pytest.mark.parametrize("case", list(CASES))
def test_golden_playthrough(case):
    expected = path_of(case).read_text(encoding="utf-8").splitlines()
    actual = playthrough(case)
    for number, (want, got) in enumerate(zip(expected, actual, strict=False), start=1):
        assert got == want, f"{path_of(case).name} line {number} differs (regenerate after a deliberate change)"
    assert len(actual) == len(expected)


def test_every_golden_round_ends_and_visits_the_rare_phases():
    phases = set()
    for case in CASES:
        lines = path_of(case).read_text(encoding="utf-8").splitlines()
        assert lines[-1].startswith("end round_over") or lines[-1].startswith("end game_over"), case
        phases |= {line.split()[3] for line in lines if line.startswith("step ")}
    assert {"play", "play_drawn", "choose_color", "give_away", "challenge", "uno", "catch", "stack", "swap"} <= phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite tests/data/golden/*.txt")
    args = parser.parse_args()
    if args.regenerate:
        DATA.mkdir(parents=True, exist_ok=True)
        for case in CASES:
            path_of(case).write_text("\n".join(playthrough(case)) + "\n", encoding="utf-8")
            print(f"wrote {path_of(case)}")


if __name__ == "__main__":
    main()
