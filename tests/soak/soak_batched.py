"""Soak test: ``BatchedUno`` against ``uno_env.core.Game`` / ``uno_env.uno_v0`` over many rounds.

The same lockstep comparison as ``tests/test_batched.py`` (``tests/batched_reference.py``: every
step, every table, observation, mask, rewards, termination and truncation; whole positions on a
rotating share of tables; every new deal), over far more rounds than the suite can afford:
every edition, every table size 2-10, every rule option and section 7 variant
mixed in each batch, random and plays-first play, round and game episodes, both reward modes.

Run from the repository root (about a minute per 1,000 steps of 72 tables on one core)::

    python -m tests.soak.soak_batched                  # 3 batches x 2,000 steps
    python -m tests.soak.soak_batched --steps 20000 --seed 7

It prints what it exercised (event types, phases, episode ends) and exits non-zero at the first
difference, naming the table and what differed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from typing import Any

import torch

from tests.batched_reference import Lockstep
from uno_env.batched import BatchedUno
from uno_env.core import EDITIONS

EDITION_NAMES = list(EDITIONS)
RUNS = (("round", "win"), ("game", "score"), ("game", "win"))


def table_options(i: int) -> dict[str, Any]:
    """Rules for table ``i``: size, edition and options cycling at different periods."""
    n = 2 + i % 9
    options: dict[str, Any] = {
        "edition": EDITION_NAMES[(i // 9) % 4],
        "num_players": n,
        "uno_call": "auto" if i % 5 == 4 else "explicit",
        "allow_bluff": i % 7 != 6,
        "scoring": "lowest" if i % 11 == 10 else "standard",
        "stacking": i % 3 == 1,
        "seven_zero": i % 4 == 2,
        "draw_until_playable": i % 6 == 5,
        "teams": n % 2 == 0 and n >= 4 and i % 8 == 3,
    }
    options["elimination"] = i % 10 == 7 and not options["teams"] and options["scoring"] == "standard"
    return options


def soak(episode: str, reward: str, tables: int, steps: int, seed: int) -> Counter[str]:
    """One lockstep run; raises AssertionError at the first difference."""
    rows = [table_options(i) for i in range(tables)]
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    env = BatchedUno(tables, episode=episode, reward=reward, seed=seed, max_turns=2_000 if episode == "round" else 20_000,
                     target_score=[200 if i % 2 else 500 for i in range(tables)], **columns)
    policy = ["random" if i % 4 == 3 else "plays-first" for i in range(tables)]
    run = Lockstep(env, policy, seed=seed, full_every=16)
    run.start()
    return run.run(steps)


def main(argv: list[str] | None = None) -> int:
    """Parse options, soak, print."""
    parser = argparse.ArgumentParser(prog="python -m tests.soak.soak_batched", description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2_000, help="steps per run (default 2000)")
    parser.add_argument("--tables", type=int, default=72, help="tables per batch (default 72)")
    parser.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    total: Counter[str] = Counter()
    for k, (episode, reward) in enumerate(RUNS):
        start = time.perf_counter()
        seen = soak(episode, reward, args.tables, args.steps, args.seed * 10 + k)
        total.update(seen)
        print(f"episode={episode} reward={reward}: {seen['decisions']:,} decisions, {seen['round_end']:,} rounds, "
              f"{seen['game_end']:,} games, {seen['terminated']:,} terminated, {seen['truncated']:,} truncated, "
              f"{seen['reshuffle']:,} reshuffles in {time.perf_counter() - start:.0f} s", flush=True)
    print("all equal; exercised:", ", ".join(f"{k} {v:,}" for k, v in sorted(total.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
