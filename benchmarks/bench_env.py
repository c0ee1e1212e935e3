"""Random-play speed of the UNO AEC env beside RLCard's UNO env and OpenSpiel, in one run.

Run: ``python -m benchmarks.bench_env`` (``--steps``, ``--repeats``, ``--players``); needs the
``bench`` extra (``pip install -e ".[bench]"``: RLCard 1.2.0 and OpenSpiel). A library that is
not installed is left out of the table, with a note.

Method. Each measurement plays uniformly random legal actions for ``--steps`` decisions (after
a warm-up of ``WARMUP``) and reports decisions per second. A decision is what a learner needs:
the observation and legal actions of the agent to act, then one step.

* ``rlcard``: ``rlcard.make("uno")`` (RLCard 1.2.0), a manual loop: ``env.step(action)`` returns
  the next player's state (its 4x4x15 planes and legal actions); a new game on ``env.is_over()``.
* ``open_spiel crazy_eights``: ``pyspiel.load_game("crazy_eights", {"players": n})``, the game
  closest to UNO in OpenSpiel: ``observation_tensor`` and ``legal_actions`` of the player to
  act, then ``apply_action``; chance outcomes (the deal) drawn uniformly.
* ``uno_env raw_env``: ``uno_env.raw_env(episode="round")`` driven by PettingZoo's usual loop,
  ``agent_iter()`` / ``last()`` / ``step()``: the 1,009-float observation (``max_players=10``; 839 before observation version 3),
  the action mask, reward, flags and info of the agent to act, every decision.
* ``uno_env env()``: the same loop through PettingZoo's standard wrappers (``uno_env.env``).
* ``uno_env core``: no PettingZoo: ``Game.step`` plus ``uno_env.observe`` and
  ``uno_env.action_mask``.

Classic UNO, one round per episode (RLCard's episode), all in one process. The implementations
are interleaved (the order rotates each repeat) and each figure is the median over the repeats,
so load from other processes hits all of them alike; rates by wall-clock time and by the
process's CPU time (``time.process_time``, the steadier of the two on a shared machine).
Decisions differ between the games: ours also asks for the color after a wild, UNO calls and
catches, which RLCard folds into its play actions or leaves out.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

WARMUP = 500

Rates = tuple[float, float]


def _rates(steps: int, start: float, cpu: float) -> Rates:
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu)


def bench_rlcard(num_players: int, steps: int, seed: int) -> Rates:
    """Decisions per second of RLCard's UNO env under random play."""
    import rlcard

    env = rlcard.make("uno", config={"seed": seed, "game_num_players": num_players})
    rng = random.Random(seed)
    state, _ = env.reset()
    done = 0
    start = cpu = 0.0
    while done < steps + WARMUP:
        if done == WARMUP:
            start, cpu = time.perf_counter(), time.process_time()
        legal = list(state["legal_actions"])
        state, _ = env.step(legal[rng.randrange(len(legal))])
        done += 1
        if env.is_over():
            state, _ = env.reset()
    return _rates(steps, start, cpu)


def bench_open_spiel(num_players: int, steps: int, seed: int) -> Rates:
    """Decisions per second of OpenSpiel's crazy_eights with its observation tensor."""
    import pyspiel

    game = pyspiel.load_game("crazy_eights", {"players": num_players})
    rng = random.Random(seed)
    state = game.new_initial_state()
    done = 0
    start = cpu = 0.0
    while done < steps + WARMUP:
        if state.is_terminal():
            state = game.new_initial_state()
            continue
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            continue
        if done == WARMUP:
            start, cpu = time.perf_counter(), time.process_time()
        player = state.current_player()
        state.observation_tensor(player)
        legal = state.legal_actions(player)
        state.apply_action(legal[rng.randrange(len(legal))])
        done += 1
    return _rates(steps, start, cpu)


def bench_aec_loop(make: Callable[[], Any], steps: int, seed: int) -> Rates:
    """Decisions per second of a uno_env AEC env under PettingZoo's ``agent_iter``/``last``/``step`` loop."""
    env = make()
    rng = random.Random(seed)
    env.reset(seed=seed)
    done = 0
    start = cpu = 0.0
    while done < steps + WARMUP:
        for _agent in env.agent_iter():
            if done == WARMUP:
                start, cpu = time.perf_counter(), time.process_time()
            obs, _, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
            done += 1
            if done >= steps + WARMUP:
                break
        env.reset()
    return _rates(steps, start, cpu)


def bench_core(num_players: int, steps: int, seed: int) -> Rates:
    """Decisions per second of the bare engine plus the encoder (no PettingZoo)."""
    from uno_env.core import Game, Rules
    from uno_env.observation import action_mask, observe

    rules = Rules(edition="classic", num_players=num_players)
    rng = random.Random(seed)
    game = Game(rules, seed=seed)
    done = 0
    start = cpu = 0.0
    while done < steps + WARMUP:
        if done == WARMUP:
            start, cpu = time.perf_counter(), time.process_time()
        if game.is_round_over:
            game = Game(rules, seed=rng.getrandbits(32))
            continue
        seat = game.current_player
        assert seat is not None
        observe(game, seat)
        legal = np.flatnonzero(action_mask(game, seat))
        game.step(int(legal[rng.randrange(len(legal))]))
        done += 1
    return _rates(steps, start, cpu)


def implementations(num_players: int, steps: int) -> tuple[dict[str, Callable[[int], Rates]], list[str]]:
    """What can run here, by label, and a note for each library that is not installed."""
    import uno_env

    impls: dict[str, Callable[[int], Rates]] = {}
    missing = []
    if importlib.util.find_spec("rlcard"):
        impls["rlcard uno"] = lambda seed: bench_rlcard(num_players, steps, seed)
    else:
        missing.append("rlcard is not installed (pip install -e '.[bench]')")
    if importlib.util.find_spec("pyspiel"):
        impls["open_spiel crazy_eights"] = lambda seed: bench_open_spiel(num_players, steps, seed)
    else:
        missing.append("open_spiel is not installed (pip install -e '.[bench]')")
    impls["uno_env raw_env"] = lambda seed: bench_aec_loop(
        lambda: uno_env.raw_env(num_players=num_players, episode="round"), steps, seed)
    impls["uno_env env()"] = lambda seed: bench_aec_loop(
        lambda: uno_env.env(num_players=num_players, episode="round"), steps, seed)
    impls["uno_env core"] = lambda seed: bench_core(num_players, steps, seed)
    return impls, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="decisions per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per implementation")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()

    rows = []
    notes: set[str] = set()
    for n in args.players:
        impls, missing = implementations(n, args.steps)
        notes.update(missing)
        names = list(impls)
        wall: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        for rep in range(args.repeats):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for name in order:
                w, c = impls[name](rep)
                wall[name].append(w)
                cpu[name].append(c)
        base = "rlcard uno" if "rlcard uno" in impls else names[0]
        base_wall, base_cpu = statistics.median(wall[base]), statistics.median(cpu[base])
        for name in names:
            w, c = statistics.median(wall[name]), statistics.median(cpu[name])
            rows.append((name, n, w, min(wall[name]), max(wall[name]), w / base_wall, c, c / base_cpu, base))

    print(f"random play, one round per episode; {args.steps} decisions x {args.repeats} interleaved repeats, medians")
    print("| implementation | players | decisions/s (wall) | min | max | vs base | decisions/s (CPU) | vs base |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, n, w, lo, hi, ratio, c, cratio, base in rows:
        label = f"{name} (base)" if name == base else name
        print(f"| {label} | {n} | {w:,.0f} | {lo:,.0f} | {hi:,.0f} | {ratio:.2f}x | {c:,.0f} | {cratio:.2f}x |")
    for note in sorted(notes):
        print(f"note: {note}")


if __name__ == "__main__":
    main()
