"""Soak the replay reader (``uno_env.replay.Replay.load``) with mutated replay files.

Each case writes one file: a real replay (a seeded whole game recorded with ``Recorder``: every edition,
2-6 players, house rules, with and without annotations and dealt decks) changed once, anywhere in it
(``tests.test_hostile_saves.mutate``), in its actions (one replaced by another id, dropped, repeated,
cut short, run on past the end) or in its bytes (truncated, a bit flipped, junk spliced in).
``Replay.load`` must refuse it with a ``ReplayError`` and leave the file as it was, or accept it; an
accepted replay is stepped to its end with ``check()`` at every position (``positions()``), its last
position equals ``final_game()``, and it writes out and loads back the same::

    python -m tests.soak.soak_replays --seconds 600 --seed 3
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.soak.harness import Case, Family, ScratchFolder, main
from tests.soak.soak_saves import byte_mutation, dumps
from tests.test_hostile_saves import mutate
from uno_env.core import EDITIONS, Game, Rules
from uno_env.core.actions import NUM_ACTIONS
from uno_env.replay import Recorder, Replay, ReplayError

PROG = "tests.soak.soak_replays"
HOUSE_RULES: list[dict[str, Any]] = [{}, {"stacking": True, "seven_zero": True}, {"draw_until_playable": True},
                                     {"elimination": True}, {"scoring": "lowest", "uno_call": "auto"}]


def real_replays(count: int, seed: int) -> list[dict[str, Any]]:
    """Whole recorded games (as replay data), short ones: a target of 60 points."""
    out = []
    for i in range(count):
        rng = random.Random(seed * 1000 + i)
        options = HOUSE_RULES[i % len(HOUSE_RULES)]
        edition = sorted(EDITIONS)[i % len(EDITIONS)]
        rules = Rules(edition=edition, num_players=2 + i % 5, target_score=60, **options)
        recorder = Recorder(Game(rules, seed=seed * 1000 + i), [f"bot{s}" for s in range(rules.num_players)],
                            meta={"seed": i, "title": f"soak {i}"})
        decks = i % 3 == 1
        annotate = i % 2 == 0
        cards = [EDITIONS[edition].code(k) for k in EDITIONS[edition].deck()]
        while not recorder.game.is_game_over and len(recorder.actions) < 3000:
            if recorder.game.is_round_over:
                deck = None
                if decks:
                    deck = list(cards)
                    rng.shuffle(deck)
                recorder.next_round(deck)
                continue
            legal = recorder.game.legal_actions()
            plays = [a for a in legal if a < 55]
            action = rng.choice(plays or legal)
            note = {"agent": "ppo", "top": [[int(action), 0.6], [int(legal[0]), 0.3]]} if annotate else None
            recorder.step(action, note)
        out.append(recorder.replay().to_dict())
    return out


def action_mutation(data: dict[str, Any], rng: random.Random) -> str:
    """Change the replay's actions once; returns what changed."""
    actions = data["actions"]
    annotations = data["annotations"]
    kind = rng.randrange(5)
    at = rng.randrange(len(actions)) if actions else 0
    if kind == 0 and actions:
        old, actions[at] = actions[at], rng.randrange(-1, NUM_ACTIONS + 2)
        return f"actions[{at}] {old} -> {actions[at]}"
    if kind == 1 and actions:
        del actions[at]
        if rng.random() < 0.5:
            del annotations[at]
            return f"actions[{at}] and its annotation dropped"
        return f"actions[{at}] dropped"
    if kind == 2 and actions:
        actions.insert(at, actions[at])
        annotations.insert(at, annotations[at])
        return f"actions[{at}] repeated"
    if kind == 3:
        cut = rng.randrange(len(actions) + 1)
        del actions[cut:]
        del annotations[cut:]
        return f"cut to {cut} actions"
    extra = [rng.randrange(NUM_ACTIONS) for _ in range(rng.randrange(1, 5))]
    actions += extra
    annotations += [None] * len(extra)
    return f"{extra} appended"


class ReplaySoak(ScratchFolder):
    """The real replays (built once) and the folder the mutated files are written to."""

    prefix = "soak_replays_"

    def __init__(self) -> None:
        super().__init__()
        self.replays: list[dict[str, Any]] = []

    def setup(self, args: Any) -> None:
        self.replays = real_replays(args.replays, args.seed)
        self.open_scratch()

    def make_case(self, rng: random.Random, index: int) -> Case:
        assert self.folder is not None
        source = rng.randrange(len(self.replays))
        data = self.replays[source]
        what = [f"replay {source}"]
        roll = rng.random()
        if roll < 0.45:
            data, change = mutate(data, rng)
            what.append(change)
        elif roll < 0.9:
            data = {**data, "actions": list(data["actions"]), "annotations": list(data["annotations"])}
            what.append(action_mutation(data, rng))
        raw = dumps(data)
        if rng.random() < 0.15:
            raw, change = byte_mutation(raw, rng)
            what.append(f"bytes: {change}")
        path = self.folder / f"case_{index}.json"
        path.write_bytes(raw)
        return Case("; ".join(what), lambda: self.load_and_step(path), watch=[path],
                    cleanup=lambda: path.unlink(missing_ok=True))

    @staticmethod
    def load_and_step(path: Path) -> str:
        replay = Replay.load(path)
        last: Game | None = None
        for last in replay.positions():
            last.check()
        assert last is not None
        final = replay.final_game()
        assert final.to_dict() == last.to_dict(), "positions() and final_game() end apart"
        again = Replay.from_json(replay.to_json())
        assert again.to_dict() == replay.to_dict(), "the replay does not write out and load back the same"
        return "accepted:over" if final.is_game_over else "accepted:unfinished"


def family() -> Family:
    """The replays family."""

    state = ReplaySoak()
    return Family("replays", state.make_case, (ReplayError,), case_timeout=60.0, max_rss_growth_mib=512.0,
                  setup=state.setup, teardown=state.teardown,
                  extra_arguments=lambda p: p.add_argument("--replays", type=int, default=20,
                                                           help="real replays to mutate (default 20)"))


def run(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    return main(family(), argv, PROG, __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(run())
