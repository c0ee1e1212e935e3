"""Soak the save reader (``uno-env play --load``: ``uno_app.terminal.read_save``) with mutated save files.

Each case writes one file: a real save (a seeded game of some edition, table size and rule set, in
the ``uno_env.play`` format with its table settings, or a bare ``Game.to_dict``) changed once, in its
game (``tests.test_hostile_saves.mutate``: odd values, deep nesting, deleted keys, duplicated or
dropped cards), in its table settings (opponent specs at and past the bounds of file options, odd
seats, seeds, keys) or in its bytes (truncated, a byte flipped, junk spliced in, a huge number).
``read_save`` must refuse it with a ``StateError`` and leave the file as it was, or accept it; an
accepted save's opponents are built as ``play --load`` builds them (``make_opponent``, no imports:
``AgentSpecError`` is a refusal), its AI seats choose a few moves, and the game plays on to its end
(``play_on``: views, events, observations in bounds, ``check()``, a save that loads again)::

    python -m tests.soak.soak_saves --seconds 600 --seed 3
    python -m tests.soak.soak_saves --seed 3 --case 117     # one case again
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents import choose_action
from agents.human import HumanAgent
from agents.registry import AgentSpecError
from tests.soak.harness import Case, Family, ScratchFolder, main
from tests.test_hostile_saves import ODD_VALUES, mutate, play_on, real_saves
from uno_app.terminal import SAVE_FORMAT, SAVE_VERSION, make_opponent, read_save
from uno_env.core import StateError

PROG = "tests.soak.soak_saves"
AI_MOVES = 4  # moves chosen by the save's own opponents before the random play-on

# Opponent specs as a save may name them: ordinary, at the documented bounds of file options, past them,
# malformed, or naming code (which a file may never import).
SPECS = [
    "rule", "random", "random-uniform", "ppo", "ismcts:iterations=20", "ismcts:iterations=2,expand_after=1",
    "ismcts:iterations=1000000000", "ismcts:time_budget=1e9", "ismcts:time_budget=0.001",
    "ismcts:expand_after=0,exploration=-1e308", "ismcts:exploration=nan", "ismcts:iterations=-1",
    "human", "ppo:path=/dev/zero", "ppo:path=/etc/passwd", "ppo:classic", "ppo:nosuch", "os:system",
    "agents.rule_agent:RuleAgent", "rule:" + "x" * 2000, "", " ", "rule,random", "rule:strength=3",
    "random:seed=99999999999999999999999", "ismcts:iterations=1e400",
]


def setting_mutation(data: dict[str, Any], n: int, rng: random.Random) -> str:
    """Change one table setting of a ``uno_env.play`` save of ``n`` players; returns what changed."""
    key = rng.choice(["opponents", "opponents", "opponents", "human_seat", "forgetful", "seed", "uno_prompt",
                      "version", "extra"])
    if key == "opponents":
        value: Any = [rng.choice(SPECS) for _ in range(rng.choice((1, n - 1, n - 1, n + 3)))]
        if rng.random() < 0.1:
            value = rng.choice(ODD_VALUES)
    elif key == "extra":
        key, value = rng.choice(["replay", "__proto__", "game2"]), rng.choice(ODD_VALUES)
    else:
        value = rng.choice(ODD_VALUES + [0, n - 1, n, 0.3, 2**63 - 1, 2**63])
    data[key] = value
    return f"{key} = {json.dumps(value)[:120]}"


def byte_mutation(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Damage the file's bytes once; returns them and what was done."""
    kind = rng.randrange(6)
    at = rng.randrange(len(raw) + 1)
    if kind == 0:
        return raw[:at], f"truncated at byte {at}"
    if kind == 1 and raw:
        at = min(at, len(raw) - 1)
        return raw[:at] + bytes([raw[at] ^ (1 << rng.randrange(8))]) + raw[at + 1:], f"bit flipped at byte {at}"
    if kind == 2:
        junk = rng.choice([b"\x00", b"\xff\xfe", b"NaN", b"1e999", b"-0", b"[" * 100_000, b'"\\ud800"', b"9" * 5000])
        return raw[:at] + junk + raw[at:], f"{junk[:12]!r}... ({len(junk)} bytes) spliced in at byte {at}"
    if kind == 3:
        return b"\xef\xbb\xbf" + raw, "a UTF-8 byte-order mark first"
    if kind == 4:
        return raw.replace(b'"target_score": ', b'"target_score": 1e999', 1), "target_score 1e999 spliced in"
    return raw + b"\n" + raw, "the save written twice"


def dumps(data: Any) -> bytes:
    """JSON bytes of ``data``, which may nest thousands deep (``deep(5000)``: past the default recursion limit)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 30_000))
    try:
        return json.dumps(data).encode()
    finally:
        sys.setrecursionlimit(limit)


class SaveSoak(ScratchFolder):
    """The real saves (built once) and the folder the mutated files are written to."""

    prefix = "soak_saves_"

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[dict[str, Any]] = []

    def setup(self, args: Any) -> None:
        self.saves = real_saves(args.saves, args.seed)
        self.open_scratch()

    def make_case(self, rng: random.Random, index: int) -> Case:
        assert self.folder is not None
        source = rng.randrange(len(self.saves))
        game_data = self.saves[source]
        wrapped = rng.random() < 0.75
        n = len(game_data["hands"])
        what = [f"save {source}"]
        if rng.random() < 0.5:
            game_data, change = mutate(game_data, rng)
            what.append(f"game: {change}")
        data: dict[str, Any] = dict(game_data)
        if wrapped:
            data = {"format": SAVE_FORMAT, "version": SAVE_VERSION, "human_seat": rng.randrange(n),
                    "opponents": [rng.choice(("rule", "random"))], "forgetful": 0.2, "seed": rng.randrange(2**32),
                    "uno_prompt": False, "game": game_data}
            if rng.random() < 0.5:
                what.append(f"settings: {setting_mutation(data, n, rng)}")
        raw = dumps(data)
        if rng.random() < 0.2:
            raw, change = byte_mutation(raw, rng)
            what.append(f"bytes: {change}")
        path = self.folder / f"case_{index}.json"
        path.write_bytes(raw)
        play_rng = random.Random(rng.getrandbits(64))
        return Case("; ".join(what), lambda: self.load_and_play(path, play_rng), watch=[path],
                    cleanup=lambda: path.unlink(missing_ok=True))

    @staticmethod
    def load_and_play(path: Path, rng: random.Random) -> str:
        saved = read_save(path)
        game = saved.game
        n = game.num_players
        if saved.opponents is None:
            play_on(game, rng)
            return "accepted:played"
        human = saved.human_seat if saved.human_seat is not None else 0
        specs = list(saved.opponents)
        if len(specs) == 1:
            specs *= n - 1
        if len(specs) != n - 1:  # setup() refuses this with a ValueError naming the counts
            return "accepted:opponent-count-refused-by-setup"
        agents = {}
        for offset, spec in enumerate(specs, 1):
            agent, _ = make_opponent(spec, None, [], game.rules.edition, n)
            agent.seed(rng.getrandbits(63))
            agent.reset()
            agents[(human + offset) % n] = agent
        for _ in range(AI_MOVES):
            if game.is_game_over or game.is_round_over:
                break
            seat = game.current_player
            assert seat is not None
            agent = agents.get(seat)
            if agent is None or isinstance(agent, HumanAgent):  # a person's seat: stdin is not read here
                game.step(rng.choice(game.legal_actions()))
            else:
                game.step(choose_action(agent, game, seat))
        play_on(game, rng)
        return "accepted:played"


def family() -> Family:
    """The saves family."""

    state = SaveSoak()
    return Family("saves", state.make_case, (StateError, AgentSpecError), case_timeout=30.0,
                  max_rss_growth_mib=512.0, setup=state.setup, teardown=state.teardown,
                  extra_arguments=lambda p: p.add_argument("--saves", type=int, default=48,
                                                           help="real saves to mutate (default 48)"))


def run(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    return main(family(), argv, PROG, __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(run())
