"""Engine speed: random rounds through uno_env's ``Game`` and RLCard's ``UnoGame``, side by side.

Usage (from the repository root, RLCard installed with ``pip install -e ".[bench]"``)::

    python -m benchmarks.bench_engine                 # Markdown table, about 45 s
    python -m benchmarks.bench_engine --json          # the same numbers, every repetition, as JSON
    python -m benchmarks.bench_engine --players 4 --seconds 2 --reps 5
    python -m benchmarks.bench_engine --profile --players 4   # cProfile of the play-first loop

Method. Both engines are driven by the same kind of loop: ask for the legal actions, pick
one with a seeded ``random.Random``, ``step`` it; one decision is one ``step`` call. A round
is one deal to one player going out (RLCard's game is one round); when it ends the loop
deals again (uno_env: ``next_round()``, or a new ``Game`` once someone reaches 500 points;
RLCard: ``init_game()``), and that setup is inside the timing. Each row is measured for
``--seconds`` in each of ``--reps`` repetitions, and the rows are interleaved (every
repetition runs every row, alternating the order), so a busy machine slows all rows alike;
the table reports the median rate over the repetitions.

RLCard's legal actions offer ``draw`` only when no card can be played, and a drawn card that
matches is played automatically, so a uniform random agent there always plays when it can.
uno_env follows the full rules (drawing is always legal; keep-or-play after a draw, wild
colors, UNO calls, catches and Wild Draw Four challenges are decisions of their own), so it
is measured under two policies: ``play-first`` (uniform among the playable cards whenever
one is legal, ``draw`` / ``keep`` only when none is; uniform over every other decision),
which plays like RLCard's random agent, and ``uniform`` (uniform over all legal actions),
whose rounds are much longer because it draws and keeps often.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import platform
import pstats
import random
import statistics
import sys
import time
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uno_env.core import Game, Rules
from uno_env.core.actions import NUM_PLAY_ACTIONS

WARMUP_SECONDS = 0.1


@dataclass
class Run:
    """What one timed stretch of one row produced."""

    decisions: int
    rounds: int
    seconds: float
    errors: int = 0

    @property
    def rate(self) -> float:
        """Decisions per second."""
        return self.decisions / self.seconds


@dataclass
class Row:
    """One line of the table: an engine and policy at one table size."""

    engine: str
    policy: str
    players: int
    run: Callable[[int, float, int], Run]
    runs: list[Run] = field(default_factory=list)

    def median_rate(self) -> float:
        """Median decisions/s over the repetitions."""
        return statistics.median(r.rate for r in self.runs)

    def decisions_per_round(self) -> float:
        """Mean decisions per round over every repetition."""
        return sum(r.decisions for r in self.runs) / max(1, sum(r.rounds for r in self.runs))


# ---------------------------------------------------------------------------- the loops
def run_uno_env(policy: str) -> Callable[[int, float, int], Run]:
    """A loop over uno_env rounds under ``policy`` (``play-first`` or ``uniform``)."""
    if policy not in ("play-first", "uniform"):
        raise ValueError(f"unknown policy {policy!r}")
    play_first = policy == "play-first"

    def run(num_players: int, seconds: float, seed: int) -> Run:
        rules = Rules(num_players=num_players)
        rng = random.Random(seed)
        choice = rng.choice
        game = Game(rules, seed=rng.getrandbits(64))
        decisions = rounds = 0
        clock = time.perf_counter
        start = clock()
        deadline = start + seconds
        while True:
            legal_actions = game.legal_actions
            step = game.step
            while not game.is_round_over:
                legal = legal_actions()
                if play_first:
                    # legal_actions() is in id order and play ids come first (0..54), so the
                    # playable cards are the prefix below NUM_PLAY_ACTIONS.
                    playable = bisect_left(legal, NUM_PLAY_ACTIONS)
                    step(choice(legal[:playable] if playable else legal))
                else:
                    step(choice(legal))
                decisions += 1
            rounds += 1
            now = clock()
            if now >= deadline:
                return Run(decisions, rounds, now - start)
            if game.is_game_over:
                game = Game(rules, seed=rng.getrandbits(64))
            else:
                game.next_round()

    return run


def run_rlcard(num_players: int, seconds: float, seed: int) -> Run:
    """A loop over RLCard rounds: uniform over its legal actions (plays whenever it can)."""
    import numpy as np
    from rlcard.games.uno.game import UnoGame  # type: ignore[import-untyped]

    rng = random.Random(seed)
    choice = rng.choice
    game = UnoGame(num_players=num_players)
    game.np_random = np.random.RandomState(rng.getrandbits(32))  # its shuffles and wild colors
    get_legal_actions = game.get_legal_actions
    step = game.step
    is_over = game.is_over
    decisions = rounds = errors = 0
    clock = time.perf_counter
    start = clock()
    deadline = start + seconds
    while True:
        game.init_game()
        try:
            while not is_over():
                step(choice(get_legal_actions()))
                decisions += 1
        except IndexError:
            # RLCard deals a Draw Two / Wild Draw Four penalty from its pile without checking
            # that the pile (after a reshuffle) still holds enough cards; count and deal again.
            errors += 1
        rounds += 1
        now = clock()
        if now >= deadline:
            return Run(decisions, rounds, now - start, errors)


def rlcard_version() -> str | None:
    """The installed RLCard version, or None when it is missing."""
    try:
        from importlib.metadata import version

        import rlcard.games.uno.game  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return None
    return version("rlcard")


# ---------------------------------------------------------------------------- measuring
def build_rows(players: list[int], with_rlcard: bool) -> list[Row]:
    """Every row of the table, in display order."""
    rows = []
    for n in players:
        if with_rlcard:
            rows.append(Row("RLCard UnoGame", "random (plays when it can)", n, run_rlcard))
        rows.append(Row("uno_env Game", "play-first", n, run_uno_env("play-first")))
        rows.append(Row("uno_env Game", "uniform", n, run_uno_env("uniform")))
    return rows


def measure(rows: list[Row], seconds: float, reps: int, seed: int, progress: bool) -> None:
    """Run every row ``reps`` times for ``seconds`` each, interleaved, into ``row.runs``."""
    for i, row in enumerate(rows):
        row.run(row.players, WARMUP_SECONDS, seed + 10_000 + i)
    for rep in range(reps):
        order = list(enumerate(rows))
        if rep % 2:
            order.reverse()
        for i, row in order:
            row.runs.append(row.run(row.players, seconds, seed * 1_000_003 + rep * 1_009 + i))
        if progress:
            print(f"  repetition {rep + 1}/{reps} done", file=sys.stderr, flush=True)


def rlcard_row(row: Row, rows: list[Row]) -> Row | None:
    """The RLCard row at the same table size, if measured."""
    for other in rows:
        if other.players == row.players and other.run is run_rlcard:
            return other
    return None


def ratio(row: Row, rows: list[Row]) -> float | None:
    """A row's median rate over RLCard's at the same table size (None without RLCard)."""
    base = rlcard_row(row, rows)
    return None if base is None else row.median_rate() / base.median_rate()


def paired_ratio(row: Row, rows: list[Row]) -> float | None:
    """Median over repetitions of the row's rate over RLCard's in the same repetition."""
    base = rlcard_row(row, rows)
    if base is None:
        return None
    return statistics.median(mine.rate / theirs.rate for mine, theirs in zip(row.runs, base.runs, strict=True))


def describe(seconds: float, reps: int, rl_version: str | None) -> str:
    """One line naming what was measured and where."""
    rl = f"RLCard {rl_version}" if rl_version else "RLCard not measured"
    return (
        f"Random rounds, {reps} interleaved repetitions x {seconds:g} s per row; "
        f"Python {platform.python_version()}, {rl}, {platform.system()} {platform.machine()}."
    )


def markdown(rows: list[Row], seconds: float, reps: int, rl_version: str | None) -> str:
    """The results as a Markdown table."""
    lines = [
        describe(seconds, reps, rl_version),
        "",
        "| players | engine | policy | decisions/s (median) | min - max | decisions/round | vs RLCard |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        rates = [r.rate for r in row.runs]
        r = ratio(row, rows)
        errors = sum(run.errors for run in row.runs)
        note = f" ({errors} rounds crashed)" if errors else ""
        lines.append(
            f"| {row.players} | {row.engine} | {row.policy}{note} | {row.median_rate():,.0f} | "
            f"{min(rates):,.0f} - {max(rates):,.0f} | {row.decisions_per_round():.1f} | "
            + (f"{r:.2f}x |" if r is not None else "n/a |")
        )
    return "\n".join(lines)


def as_json(rows: list[Row], seconds: float, reps: int, seed: int, rl_version: str | None) -> dict[str, Any]:
    """The results, every repetition included, as JSON-ready data."""
    return {
        "benchmark": "benchmarks.bench_engine",
        "description": describe(seconds, reps, rl_version),
        "seconds_per_repetition": seconds,
        "repetitions": reps,
        "seed": seed,
        "python": platform.python_version(),
        "rlcard": rl_version,
        "platform": platform.platform(),
        "rows": [
            {
                "players": row.players,
                "engine": row.engine,
                "policy": row.policy,
                "decisions_per_second_median": row.median_rate(),
                "decisions_per_second": [run.rate for run in row.runs],
                "decisions": sum(run.decisions for run in row.runs),
                "rounds": sum(run.rounds for run in row.runs),
                "decisions_per_round": row.decisions_per_round(),
                "crashed_rounds": sum(run.errors for run in row.runs),
                "ratio_vs_rlcard": ratio(row, rows),
                "ratio_vs_rlcard_paired": paired_ratio(row, rows),
            }
            for row in rows
        ],
    }


def profile(num_players: int, seconds: float, seed: int, top: int) -> None:
    """cProfile the uno_env play-first loop and print the costliest functions."""
    run = run_uno_env("play-first")
    profiler = cProfile.Profile()
    profiler.enable()
    result = run(num_players, seconds, seed)
    profiler.disable()
    print(f"uno_env play-first, {num_players} players: {result.decisions} decisions in "
          f"{result.rounds} rounds (rates under cProfile are not comparable)")
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(top)


# ---------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    """Parse options, measure, print."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_engine",
        description="Decisions per second of uno_env's engine and RLCard's UNO engine, random rounds.",
    )
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], help="table sizes (default: 2 4)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per row per repetition (default: 1)")
    parser.add_argument("--reps", type=int, default=7, help="interleaved repetitions (default: 7)")
    parser.add_argument("--seed", type=int, default=0, help="base seed for every random choice (default: 0)")
    parser.add_argument("--json", action="store_true", help="print JSON (every repetition) instead of Markdown")
    parser.add_argument("--no-rlcard", action="store_true", help="measure uno_env only")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the play-first loop at the first --players size instead")
    parser.add_argument("--top", type=int, default=25, help="functions to list with --profile (default: 25)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.reps < 1:
        parser.error("--seconds must be positive and --reps at least 1")
    if any(not 2 <= n <= 10 for n in args.players):
        parser.error("--players takes table sizes from 2 to 10")
    if args.profile:
        profile(args.players[0], args.seconds, args.seed, args.top)
        return 0

    rl_version = None if args.no_rlcard else rlcard_version()
    if not args.no_rlcard and rl_version is None:
        print("RLCard is not installed: pip install -e '.[bench]' (rlcard==1.2.0), or pass --no-rlcard",
              file=sys.stderr)
        return 2
    rows = build_rows(args.players, with_rlcard=not args.no_rlcard)
    measure(rows, args.seconds, args.reps, args.seed, progress=not args.json)
    if args.json:
        print(json.dumps(as_json(rows, args.seconds, args.reps, args.seed, rl_version), indent=2))
    else:
        print(markdown(rows, args.seconds, args.reps, rl_version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
