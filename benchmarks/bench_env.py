"""Random-play speed of the UNO AEC env beside RLCard's UNO env.

Run: ``python -m benchmarks.bench_env`` (``--steps``, ``--repeats``, ``--players``).

Method. Each measurement plays uniformly random legal actions for ``--steps`` decisions
(after a short warm-up) and reports decisions per second. One decision is one ``step`` plus
the observation of the agent that decides next, which is what a learner needs:

* ``rlcard``: ``rlcard.make("uno")`` (RLCard 1.2.0), a manual loop: ``env.step(action)``
  returns the next player's state (its 4x4x15 planes and legal actions); a new game on
  ``env.is_over()``.
* ``uno_env raw``: ``uno_env.raw_env(episode="round")``: ``observe(agent_selection)`` (the
  839-float observation for ``max_players=10`` plus the action mask), then ``step``.
* ``uno_env env()``: the same through PettingZoo's wrappers (``uno_env.env``).
* ``uno_env env() + last()``: PettingZoo's usual ``agent_iter()`` / ``last()`` loop, which
  also hands over the deciding agent's info (``game.view(seat)``, built on each read).
* ``uno_env core``: no PettingZoo: ``Game.step`` plus ``uno_env.observe`` and
  ``uno_env.action_mask`` directly.

All run classic UNO, one round per episode (RLCard's episode), in the same process. The
implementations are interleaved (the order rotates each repeat) and each figure is the median
over the repeats, so load from other processes hits all of them alike. Rates are given by
wall-clock time and by the process's CPU time (``time.process_time``), the steadier of the two
on a shared machine. A decision is not the
same unit in both engines: ours also asks for the color after a wild, UNO calls and catches,
which RLCard folds into its play actions or leaves out.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

WARMUP = 500


def _rates(steps: int, start: float, cpu: float) -> tuple[float, float]:
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu)


def bench_rlcard(num_players: int, steps: int, seed: int) -> tuple[float, float]:
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


def bench_aec(make: Callable[[], object], steps: int, seed: int) -> tuple[float, float]:
    """Decisions per second of a uno_env AEC env (observe the deciding agent, then step)."""
    env = make()
    rng = random.Random(seed)
    env.reset(seed=seed)  # type: ignore[attr-defined]
    done = 0
    start = cpu = 0.0
    while done < steps + WARMUP:
        if done == WARMUP:
            start, cpu = time.perf_counter(), time.process_time()
        agent = env.agent_selection  # type: ignore[attr-defined]
        obs = env.observe(agent)  # type: ignore[attr-defined]
        if env.terminations[agent] or env.truncations[agent]:  # type: ignore[attr-defined]
            env.reset()  # type: ignore[attr-defined]
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))  # type: ignore[attr-defined]
        done += 1
    return _rates(steps, start, cpu)


def bench_aec_last(make: Callable[[], object], steps: int, seed: int) -> tuple[float, float]:
    """The same through PettingZoo's usual loop: ``agent_iter()`` and ``last()`` (which also
    returns the deciding agent's info, ``game.view(seat)``, built per decision)."""
    env = make()
    rng = random.Random(seed)
    env.reset(seed=seed)  # type: ignore[attr-defined]
    done = 0
    start = cpu = 0.0
    while done < steps + WARMUP:
        for _agent in env.agent_iter():  # type: ignore[attr-defined]
            if done == WARMUP:
                start, cpu = time.perf_counter(), time.process_time()
            obs, _, term, trunc, _info = env.last()  # type: ignore[attr-defined]
            if term or trunc or done >= steps + WARMUP:
                break
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))  # type: ignore[attr-defined]
            done += 1
        env.reset()  # type: ignore[attr-defined]
    return _rates(steps, start, cpu)


def bench_core(num_players: int, steps: int, seed: int) -> tuple[float, float]:
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
        observe(game, seat)
        legal = np.flatnonzero(action_mask(game, seat))
        game.step(int(legal[rng.randrange(len(legal))]))
        done += 1
    return _rates(steps, start, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="decisions per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per implementation")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()

    import uno_env

    rows = []
    for n in args.players:
        impls: dict[str, Callable[[int], tuple[float, float]]] = {
            "rlcard": lambda seed, n=n: bench_rlcard(n, args.steps, seed),
            "uno_env raw": lambda seed, n=n: bench_aec(
                lambda: uno_env.raw_env(num_players=n, episode="round"), args.steps, seed),
            "uno_env env()": lambda seed, n=n: bench_aec(
                lambda: uno_env.env(num_players=n, episode="round"), args.steps, seed),
            "uno_env env() + last()": lambda seed, n=n: bench_aec_last(
                lambda: uno_env.env(num_players=n, episode="round"), args.steps, seed),
            "uno_env core": lambda seed, n=n: bench_core(n, args.steps, seed),
        }
        names = list(impls)
        wall: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        for rep in range(args.repeats):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for name in order:
                w, c = impls[name](rep)
                wall[name].append(w)
                cpu[name].append(c)
        base_wall = statistics.median(wall["rlcard"])
        base_cpu = statistics.median(cpu["rlcard"])
        for name in names:
            w, c = statistics.median(wall[name]), statistics.median(cpu[name])
            rows.append((name, n, w, min(wall[name]), max(wall[name]), w / base_wall, c, c / base_cpu))

    print(f"random play, classic, one round per episode; {args.steps} decisions x {args.repeats} repeats, medians")
    print("| implementation | players | decisions/s (wall) | min | max | vs rlcard | decisions/s (CPU time) | vs rlcard |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, w, lo, hi, ratio, c, cratio in rows:
        print(f"| {name} | {n} | {w:,.0f} | {lo:,.0f} | {hi:,.0f} | {ratio:.2f}x | {c:,.0f} | {cratio:.2f}x |")


if __name__ == "__main__":
    main()
