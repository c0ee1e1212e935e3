"""Perft-style pinned tables: the number of legal actions along fixed, deterministic games.

Each case is an edition, a table size, a seed and a rule set (``default`` rules, or ``house``:
stacking, seven-zero and draw-until-playable together). The game is played for ``DECISIONS``
decisions, always choosing the legal action at index ``(step * 7) % len(legal)``; a finished
round is followed by ``next_round()`` (not a decision). The table pins the number of legal
actions at every decision (and their sum), and, for one game per edition, the texts of the
legal actions at the first ``TEXT_DECISIONS`` decisions. Any change of dealing, shuffling,
legality or turn order shows up as a changed count.

The pinned values live in ``tests/data/perft.json``. After a deliberate change of behaviour,
regenerate them from the repository root with::

    .venv/bin/python -m tests.test_perft --regenerate

and check the diff by hand. Before the table was first pinned, the first decisions of
several cases were checked by hand against the dealt hands (``--show CASE`` prints them),
for example ``classic/2/0/default``; see ``test_hand_checked_first_decisions``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from uno_env.core import EDITIONS, Game, Rules

DATA = Path(__file__).parent / "data" / "perft.json"
DECISIONS = 60
TEXT_DECISIONS = 20
HOUSE = {"stacking": True, "seven_zero": True, "draw_until_playable": True}


def case_names() -> list[str]:
    """Every pinned case, as ``edition/players/seed/rules``."""
    names = [f"{ed}/{n}/{seed}/default" for ed in EDITIONS for n in (2, 4) for seed in (0, 1, 2)]
    names += [f"{ed}/4/0/house" for ed in EDITIONS]
    return names


def new_game(case: str) -> Game:
    edition, players, seed, rules = case.split("/")
    options = HOUSE if rules == "house" else {}
    return Game(Rules(edition=edition, num_players=int(players), **options), seed=int(seed))


def walk(case: str, decisions: int = DECISIONS) -> list[tuple[Game, list[str]]]:
    """Play the case; before each decision yield a snapshot (a clone) and the legal texts."""
    game = new_game(case)
    seen: list[tuple[Game, list[str]]] = []
    step = 0
    while step < decisions and not game.is_game_over:
        if game.is_round_over:
            game.next_round()
            continue
        legal = game.legal_actions()
        seen.append((game.clone(), [str(a) for a in legal]))
        game.step(legal[(step * 7) % len(legal)])
        step += 1
    return seen


def compute() -> dict[str, Any]:
    counts = {case: [len(texts) for _, texts in walk(case)] for case in case_names()}
    return {
        "decisions": DECISIONS,
        "choice": "legal[(step * 7) % len(legal)]",
        "counts": counts,
        "sums": {case: sum(c) for case, c in counts.items()},
        "texts": {ed: [texts for _, texts in walk(f"{ed}/4/0/default", TEXT_DECISIONS)] for ed in EDITIONS},
    }


def dump(data: dict[str, Any]) -> str:
    """JSON with one line per case (counts) and per decision (texts), for readable diffs."""
    def block(mapping: dict[str, Any], inner: str) -> str:
        rows = [f"{inner}{json.dumps(key)}: {json.dumps(value)}" for key, value in mapping.items()]
        return "{\n" + ",\n".join(rows) + "\n  }"

    texts = {ed: "[\n" + ",\n".join(f"      {json.dumps(t)}" for t in rows) + "\n    ]"
             for ed, rows in data["texts"].items()}
    return (
        "{\n"
        f'  "decisions": {data["decisions"]},\n'
        f'  "choice": {json.dumps(data["choice"])},\n'
        f'  "counts": {block(data["counts"], "    ")},\n'
        f'  "sums": {block(data["sums"], "    ")},\n'
        '  "texts": {\n' + ",\n".join(f"    {json.dumps(ed)}: {t}" for ed, t in texts.items()) + "\n  }\n"
        "}\n"
    )


def load() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pinned() -> dict[str, Any]:
    return load()


def test_every_case_is_pinned(pinned):
    assert pinned["decisions"] == DECISIONS
    assert sorted(pinned["counts"]) == sorted(case_names())
    assert sorted(pinned["texts"]) == sorted(EDITIONS)
    for case, counts in pinned["counts"].items():
        assert len(counts) == DECISIONS, case
        assert pinned["sums"][case] == sum(counts)


@pytest.mark.parametrize("case", case_names())
def test_perft_legal_action_counts(pinned, case):
    counts = [len(texts) for _, texts in walk(case)]
    assert sum(counts) == pinned["sums"][case]
    assert counts == pinned["counts"][case]


@pytest.mark.parametrize("edition", list(EDITIONS))
def test_perft_legal_action_texts(pinned, edition):
    texts = [texts for _, texts in walk(f"{edition}/4/0/default", TEXT_DECISIONS)]
    assert texts == pinned["texts"][edition]


def test_hand_checked_first_decisions(pinned):
    """The first entries of a few cases, re-derived from the dealt cards by rule 3.2."""
    for case in ("classic/2/0/default", "monster_high/4/1/default", "angry_birds/4/2/default",
                 "masters_of_the_universe/2/1/default"):
        for game, texts in walk(case, 14):
            if game.phase.text not in ("play", "play_drawn"):
                continue
            ed = game.edition
            hand = game.hands[game.current_player]
            active = ed.letters[ed.colors.index(game.active_color)]
            top = game.top_card

            def plays(c: str, active: str = active, top: str = top) -> bool:
                return c.startswith("W") or c[0] == active or (not top.startswith("W") and c[1:] == top[1:])

            if game.phase.text == "play_drawn":  # rule 3.4: play the drawn card if it plays, or keep it
                drawn = game.drawn_card
                assert texts == ([f"play {drawn}"] if plays(drawn) else []) + ["keep"], (case, drawn, top)
                continue
            playable = sorted({c for c in hand if plays(c)}, key=ed.kind)
            assert texts == [f"play {c}" for c in playable] + ["draw"], (case, hand, top)
    # The very first decision of classic/2/0, worked out by hand from the deal (see --show):
    first_game, first_texts = walk("classic/2/0/default", 1)[0]
    assert (first_game.top_card, first_game.active_color) == HAND_CHECKED_START
    assert sorted(first_game.hands[first_game.current_player]) == sorted(HAND_CHECKED_HAND)
    assert first_texts == HAND_CHECKED_LEGAL
    assert pinned["counts"]["classic/2/0/default"][0] == len(HAND_CHECKED_LEGAL)
    # Its third decision: seat 0 held nothing but W to play on R0, drew, and drew YD, which
    # matches neither red nor 0: a forced keep (rule 3.4), pinned as a count of 1.
    drawn_game, drawn_texts = walk("classic/2/0/default", 3)[2]
    assert (drawn_game.phase.text, drawn_game.current_player, drawn_game.drawn_card) == ("play_drawn", 0, "YD")
    assert drawn_texts == ["keep"] and pinned["counts"]["classic/2/0/default"][2] == 1


# From `--show classic/2/0/default`, checked by hand: two players, the start card is a red
# Skip, so the dealer's opponent (seat 0) is skipped and seat 1 opens. Red is active: R0 and
# R9 match by color, W4 is wild (a bluff, since red is held, allowed by default), GR matches
# neither red nor Skip, and the yellow and green number cards do not match; draw is always there.
HAND_CHECKED_START = ("RS", "red")
HAND_CHECKED_HAND = ["Y6", "W4", "Y1", "G6", "R0", "R9", "GR"]
HAND_CHECKED_LEGAL = ["play R0", "play R9", "play W4", "draw"]


def show(case: str, decisions: int) -> None:
    for step, (game, texts) in enumerate(walk(case, decisions)):
        seat = game.current_player
        print(f"{step:3d} seat {seat} phase {game.phase.text:12s} top {game.top_card:3s} "
              f"active {game.active_color} hand {game.hands[seat]} -> {len(texts)}: {texts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite tests/data/perft.json")
    parser.add_argument("--show", metavar="CASE", help="print a case's decisions (e.g. classic/2/0/default)")
    parser.add_argument("--decisions", type=int, default=10)
    args = parser.parse_args()
    if args.show:
        show(args.show, args.decisions)
    if args.regenerate:
        DATA.parent.mkdir(exist_ok=True)
        DATA.write_text(dump(compute()), encoding="utf-8")
        print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
