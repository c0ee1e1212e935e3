"""GuidedAgent against RuleAgents: win rate per round against playouts per decision, and seconds per move.

Usage (from the repository root)::

    python -m benchmarks.guided_strength run --players 2 --budgets 0 16 64 256 --games 400 --seed 24201 --out r2.json
    python -m benchmarks.guided_strength run --players 4 --budgets 0 16 64 --games 400 --seed 24401 --out r4.json
    python -m benchmarks.guided_strength plot r2.json r4.json --png docs/guided_strength.png

Method. For each budget, ``run`` plays a classic match of one ``guided`` seat (built from the spec
``guided:playouts=B`` for the table, ``--spec`` to change it) against RuleAgents through
``agents.tournament.evaluate``: duplicate deals with every seat rotation, one round per game,
seeds from ``--seed``. Budget 0 is the guide's policy alone (the same checkpoint, greedy):
the search's starting point. Each row gives the win rate with its 95% Wilson
interval, and the CPU seconds per searched decision measured over the first ``--timed`` rounds
played apart (process time of ``act`` where the agent searched), so the figure is what one core
gives whatever the load (wall-clock seconds are reported beside it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from agents import Agent, RuleAgent
from agents.guided import GuidedAgent
from agents.registry import make_agent
from agents.tournament import evaluate
from uno_env.core import Game, Rules


def agent_for(budget: int, players: int, spec: str) -> tuple[Agent, str]:
    """The agent one budget plays and its description: the guide's policy alone at 0, else the search."""
    agent = make_agent(spec if budget == 0 else f"{spec}{',' if ':' in spec else ':'}playouts={budget}",
                       edition="classic", num_players=players)
    assert isinstance(agent, GuidedAgent)
    if budget == 0:
        return agent.policy, f"policy alone ({agent.policy.label}, greedy)"
    return agent, f"{spec} playouts={budget} ({agent.policy.label}, leaf={agent.leaf})"


def move_seconds(agent: Agent, players: int, rounds: int, seed: int) -> dict[str, float]:
    """Median CPU and wall seconds per searched decision of ``agent`` at seat 0 over ``rounds`` rounds."""
    if not isinstance(agent, GuidedAgent):
        return {}
    rules = Rules(edition="classic", num_players=players)
    cpu: list[float] = []
    wall: list[float] = []
    others = [RuleAgent() for _ in range(players)]
    for r in range(rounds):
        agent.seed(seed + r)
        game = Game(rules, seed=seed + r)
        while not game.is_round_over:
            seat = game.current_player
            assert seat is not None
            info = game.view(seat)
            if seat == 0:
                agent.last_playouts = 0
                start, cpu_start = time.perf_counter(), time.process_time()
                action = agent.act(None, info)
                if agent.last_playouts:
                    cpu.append(time.process_time() - cpu_start)
                    wall.append(time.perf_counter() - start)
            else:
                action = others[seat].act(None, info)
            game.step(action)
    return {"decisions": len(cpu), "cpu_s_median": statistics.median(cpu), "cpu_s_mean": statistics.fmean(cpu),
            "wall_s_median": statistics.median(wall)} if cpu else {}


def run(players: int, budgets: list[int], games: int, seed: int, spec: str, timed: int,
        out: str | None) -> list[dict[str, Any]]:
    """One match per budget, a JSON line each (appended to ``out`` as it comes)."""
    rules = Rules(edition="classic", num_players=players)
    rows = []
    for budget in budgets:
        agent, text = agent_for(budget, players, spec)
        start = time.perf_counter()
        lineup = [agent, *[RuleAgent() for _ in range(players - 1)]]
        result = evaluate(lineup, rules, games=games, labels=["guided", *[f"rule{i}" for i in range(1, players)]],
                          seed=seed)
        stats = result.stats()[0]
        row = {"players": players, "budget": budget, "spec": text, "games": stats.games, "wins": stats.wins,
               "win_rate": stats.win_rate, "ci_low": stats.ci_low, "ci_high": stats.ci_high, "seed": seed,
               "seconds": time.perf_counter() - start, **move_seconds(agent, players, timed, seed + 10_000)}
        print(json.dumps(row), flush=True)
        rows.append(row)
        if out:
            with open(out, "a") as handle:
                handle.write(json.dumps(row) + "\n")
    return rows


def plot(rows: list[dict[str, Any]], path: str) -> None:
    """Win rate against playouts per decision, one line per table size, 95% Wilson intervals and chance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for players, color in ((2, "#4c72b0"), (4, "#55a868")):
        mine = sorted((r for r in rows if r["players"] == players), key=lambda r: r["budget"])
        if not mine:
            continue
        xs = [max(1, r["budget"]) for r in mine]  # the policy alone (0) drawn at 1 on the log axis
        ys = [100 * r["win_rate"] for r in mine]
        err = [[100 * (r["win_rate"] - r["ci_low"]) for r in mine], [100 * (r["ci_high"] - r["win_rate"]) for r in mine]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, color=color,
                    label=f"{players} players vs {players - 1} RuleAgent{'s' if players > 2 else ''}")
        ax.axhline(100 / players, color=color, linestyle=":", linewidth=1)
        for x, y, r in zip(xs, ys, mine, strict=True):
            note = f"{r['games']}" + (f", {r['cpu_s_median']:.2f}s" if "cpu_s_median" in r else "")
            ax.annotate(note, (x, y), textcoords="offset points", xytext=(6, -12), fontsize=7, color="gray")
    ax.set_xscale("log")
    ax.set_xlabel("playouts per decision (1 = the guide's policy alone); rounds and CPU s per move beside points")
    ax.set_ylabel("win rate per round (%), 95% Wilson interval")
    ax.set_title("guided search against RuleAgents, classic, one round per game (dotted: chance)", fontsize=9)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Command line: run or plot."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.guided_strength", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="win rate against RuleAgents per budget")
    r.add_argument("--players", type=int, default=2)
    r.add_argument("--budgets", type=int, nargs="+", default=[0, 16, 64, 256])
    r.add_argument("--games", type=int, default=400, help="rounds per budget (rounded up to whole deals)")
    r.add_argument("--seed", type=int, default=24201)
    r.add_argument("--spec", default="guided", help="the agent spec searched (playouts= is added)")
    r.add_argument("--timed", type=int, default=4, help="rounds timed apart for the seconds per move")
    r.add_argument("--out", help="append the rows as JSON lines")
    p = sub.add_parser("plot", help="draw the curve from run outputs")
    p.add_argument("files", nargs="+")
    p.add_argument("--png", required=True)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.players, args.budgets, args.games, args.seed, args.spec, args.timed, args.out)
    else:
        rows = [json.loads(line) for f in args.files for line in open(f) if line.strip()]
        plot(rows, args.png)


if __name__ == "__main__":
    main()
