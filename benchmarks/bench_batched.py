"""Decisions per second of the batched engine beside the Python engine and RLCard, one run.

Usage (from the repository root)::

    python -m benchmarks.bench_batched                    # CPU: about 2 minutes
    python -m benchmarks.bench_batched --device cuda      # the same on a GPU, larger batches
    python -m benchmarks.bench_batched --json             # every repetition as JSON
    PYTHONPATH=. python benchmarks/bench_batched.py --device cuda   # a bare machine: torch + numpy only

Method. Every row plays uniformly random legal actions in classic UNO, one round per episode,
and counts decisions (one decision = one action of the seat to act at one table):

* ``BatchedUno`` (``uno_env.batched``) on ``--device``: ``B`` tables; each step picks a random
  legal action per table on the device (uniform noise, argmax over the mask) and calls
  ``env.step``, which also builds every table's observation (1,009 floats; 839 before observation version 3) and mask, and deals
  new rounds where one ended. ``--no-observations`` measures the engine without observations.
* ``Python engine``: ``uno_env.core.Game.step`` plus ``uno_env.observe`` and
  ``uno_env.action_mask`` for the seat to act, one table (the per-table cost the batched
  engine replaces).
* ``RLCard``: ``rlcard.make("uno")`` (RLCard 1.2.0, the ``bench`` extra), ``env.step`` returns
  the next player's state (its planes and legal actions); skipped when RLCard is missing.

Each row runs ``--seconds`` per repetition; the rows are interleaved (every repetition runs
every row, in alternating order) and the table reports medians over ``--reps`` repetitions,
with the load average, so a busy machine slows all rows alike. torch uses ``--threads``
threads (default 1). On CUDA the timing ends with a synchronisation. The script needs torch
and numpy only (plus RLCard for its row) and works with any recent torch, CPU or CUDA build.

Memory: the state of one table (``BatchedUno.nbytes_per_table``) and what one step's
``State`` adds (observation, mask, rewards), and from them the largest batch whose state and
step output fit in 1 GiB; on CUDA also the peak allocated memory of the largest batch measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from uno_env.batched import BatchedUno

WARMUP_STEPS = 20
GIB = 1 << 30


@dataclass
class Row:
    """One line of the table: an implementation at one table size (and batch size)."""

    name: str
    players: int
    batch: int
    run: Callable[[float, int], tuple[int, float]]
    rates: list[float] = field(default_factory=list)

    def median(self) -> float:
        """Median decisions per second over the repetitions."""
        return statistics.median(self.rates)


def batched_runner(players: int, batch: int, device: torch.device, observations: bool) -> Callable[[float, int], tuple[int, float]]:
    """A timed loop of random play on a ``BatchedUno``."""
    env = BatchedUno(batch, edition="classic", num_players=players, episode="round", device=device,
                     observations=observations)
    state = env.reset(seed=0)
    generator = torch.Generator(device=device).manual_seed(0)

    def pick(mask: torch.Tensor) -> torch.Tensor:
        noise = torch.rand(mask.shape, device=device, generator=generator)
        return torch.where(mask, noise, -1.0).argmax(1)

    for _ in range(WARMUP_STEPS):
        state = env.step(pick(state.action_mask))

    def run(seconds: float, seed: int) -> tuple[int, float]:
        nonlocal state
        synchronize(device)
        start = time.perf_counter()
        deadline = start + seconds
        steps = 0
        while time.perf_counter() < deadline:
            state = env.step(pick(state.action_mask))
            steps += 1
        synchronize(device)
        return steps * batch, time.perf_counter() - start

    return run


def python_runner(players: int) -> Callable[[float, int], tuple[int, float]]:
    """A timed loop of random play on one ``uno_env.core.Game``, observation and mask every step."""
    from uno_env.core import Game, Rules
    from uno_env.observation import action_mask, observe

    rules = Rules(edition="classic", num_players=players)

    def run(seconds: float, seed: int) -> tuple[int, float]:
        rng = random.Random(seed)
        game = Game(rules, seed=rng.getrandbits(32))
        decisions = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(100):
                if game.is_round_over:
                    game = Game(rules, seed=rng.getrandbits(32))
                seat = game.current_player
                observe(game, seat)
                mask = action_mask(game, seat)
                legal = mask.nonzero()[0]
                game.step(int(legal[rng.randrange(len(legal))]))
                decisions += 1
            if time.perf_counter() >= deadline:
                return decisions, time.perf_counter() - start

    return run


def rlcard_runner(players: int) -> Callable[[float, int], tuple[int, float]]:
    """A timed loop of random play in ``rlcard.make("uno")``."""
    import rlcard  # type: ignore[import-untyped]

    def run(seconds: float, seed: int) -> tuple[int, float]:
        env = rlcard.make("uno", config={"seed": seed, "game_num_players": players})
        rng = random.Random(seed)
        state, _ = env.reset()
        decisions = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(100):
                legal = list(state["legal_actions"])
                try:
                    state, _ = env.step(legal[rng.randrange(len(legal))])
                except IndexError:  # RLCard's penalty draws can empty its pile (see bench_engine)
                    state, _ = env.reset()
                    continue
                decisions += 1
                if env.is_over():
                    state, _ = env.reset()
            if time.perf_counter() >= deadline:
                return decisions, time.perf_counter() - start

    return run


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (CUDA); nothing on CPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def rlcard_version() -> str | None:
    """RLCard's version, or None when it is not installed."""
    try:
        from importlib.metadata import version

        import rlcard  # noqa: F401
    except ImportError:
        return None
    return version("rlcard")


def device_name(device: torch.device) -> str:
    """The GPU's name, or the CPU's model and the threads torch uses."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            model = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}"


def memory(players: int, max_players: int, device: torch.device) -> dict[str, Any]:
    """Bytes per table of the state and of one step's output, and the largest batch in 1 GiB."""
    env = BatchedUno(2, num_players=players, max_players=max_players, device=device)
    state = env.reset()
    state_bytes = env.nbytes_per_table()
    output = sum(t[0].numel() * t.element_size() for t in (state.observation, state.action_mask, state.rewards,
                                                           state.current_player, state.terminated, state.truncated,
                                                           state.final_observer))
    return {"players": players, "state_bytes_per_table": state_bytes, "step_output_bytes_per_table": output,
            "tables_in_1_gib": GIB // (state_bytes + output)}


def peak_memory(players: int, batch: int, device: torch.device) -> int:
    """Peak CUDA memory a new batch of ``batch`` tables adds while it steps (bytes; other rows' excluded)."""
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    run = batched_runner(players, batch, device, observations=True)
    run(0.5, 0)
    return int(torch.cuda.max_memory_allocated(device)) - before


def main(argv: list[str] | None = None) -> int:
    """Parse options, measure, print."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_batched", description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", help="torch device for the batched engine (default: cpu)")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 10], help="table sizes (default: 2 4 10)")
    parser.add_argument("--batch", type=int, nargs="+", default=None,
                        help="batch sizes (default: 256 1024 4096 on CPU, 4096 65536 262144 on CUDA)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per row per repetition (default: 1)")
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default: 5)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--no-observations", action="store_true", help="batched rows without observations")
    parser.add_argument("--no-python", action="store_true", help="skip the Python engine rows")
    parser.add_argument("--no-rlcard", action="store_true", help="skip the RLCard rows")
    parser.add_argument("--json", action="store_true", help="print JSON (every repetition) instead of Markdown")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available to torch")
    if args.seconds <= 0 or args.reps < 1 or any(not 2 <= n <= 10 for n in args.players):
        parser.error("--seconds must be positive, --reps at least 1, --players from 2 to 10")
    torch.set_num_threads(args.threads)
    batches = args.batch or ([4096, 65536, 262144] if device.type == "cuda" else [256, 1024, 4096])
    observations = not args.no_observations
    rl_version = None if args.no_rlcard else rlcard_version()

    rows: list[Row] = []
    for n in args.players:
        if rl_version:
            rows.append(Row(f"RLCard {rl_version} env", n, 1, rlcard_runner(n)))
        if not args.no_python:
            rows.append(Row("Python engine + encoder", n, 1, python_runner(n)))
        for b in batches:
            label = f"BatchedUno ({device.type}{'' if observations else ', no observations'})"
            rows.append(Row(label, n, b, batched_runner(n, b, device, observations)))
    load = []
    for rep in range(args.reps):
        order = rows if rep % 2 == 0 else rows[::-1]
        for i, row in enumerate(order):
            decisions, seconds = row.run(args.seconds, rep * 1000 + i)
            row.rates.append(decisions / seconds)
        load.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
        if not args.json:
            print(f"  repetition {rep + 1}/{args.reps} done (load {load[-1]:.1f})", file=sys.stderr, flush=True)

    mem = [memory(n, 10, device) for n in args.players]
    peak = {}
    if device.type == "cuda":
        peak = {"players": args.players[-1], "batch": max(batches),
                "peak_bytes": peak_memory(args.players[-1], max(batches), device)}
    python = {row.players: row.median() for row in rows if row.name.startswith("Python")}
    where = (f"{device_name(device)}; torch {torch.__version__}, Python {platform.python_version()}; "
             f"{args.reps} interleaved repetitions x {args.seconds:g} s per row; "
             f"load average {statistics.median(load):.1f} (median over repetitions)")
    if args.json:
        print(json.dumps({
            "benchmark": "benchmarks.bench_batched", "device": str(device), "where": where,
            "rows": [{"implementation": r.name, "players": r.players, "batch": r.batch,
                      "decisions_per_second_median": r.median(), "decisions_per_second": r.rates}
                     for r in rows],
            "memory": mem, "cuda_peak": peak,
        }, indent=2))
        return 0
    print(where)
    print()
    print("| players | implementation | tables | decisions/s (median) | min - max | vs Python engine |")
    print("|---:|---|---:|---:|---:|---:|")
    for r in rows:
        base = python.get(r.players)
        ratio = f"{r.median() / base:.2f}x" if base else "n/a"
        print(f"| {r.players} | {r.name} | {r.batch:,} | {r.median():,.0f} | {min(r.rates):,.0f} - "
              f"{max(r.rates):,.0f} | {ratio} |")
    print()
    print("| players (max_players 10) | state bytes/table | + step output bytes/table | tables in 1 GiB |")
    print("|---:|---:|---:|---:|")
    for m in mem:
        print(f"| {m['players']} | {m['state_bytes_per_table']:,} | {m['step_output_bytes_per_table']:,} | "
              f"{m['tables_in_1_gib']:,} |")
    if peak:
        print(f"\nPeak CUDA memory stepping {peak['batch']:,} tables of {peak['players']}: "
              f"{peak['peak_bytes'] / GIB:.2f} GiB ({peak['peak_bytes'] / peak['batch']:,.0f} bytes/table)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
