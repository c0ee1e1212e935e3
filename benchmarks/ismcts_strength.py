"""ISMCTSAgent against RuleAgent at two players: win rate against search budget.

Usage (from the repository root)::

    python -m benchmarks.ismcts_strength calibrate                  # playouts per second here
    python -m benchmarks.ismcts_strength run --budgets 25 50 100 200 400 --games 400 --out results.json
    python -m benchmarks.ismcts_strength plot results.json [more.json ...] --png docs/ismcts_strength.png

Method. ``run`` plays, for each budget (playouts per decision, fixed so results do not depend
on the machine's load), a 2-player classic match ``ISMCTSAgent(iterations=budget)`` against
``RuleAgent`` through ``agents.tournament.evaluate``: duplicate deals with both seat
rotations, one round (one hand) per game, every seed derived from ``--seed``. It reports the
win rate with its 95% Wilson interval. ``calibrate`` measures the search's playouts per second
over real decisions of such matches, per second of CPU time (what one quiet core gives; the
wall-clock rate is reported beside it), which turns a budget in playouts into seconds per
decision. ``plot`` draws the curve from one or more ``run`` outputs (results of
one budget from several files are pooled when their seeds differ).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from agents import RuleAgent
from agents.ismcts import ISMCTSAgent
from agents.tournament import wilson_interval
from uno_env.core import Game, Rules

RULES = Rules(edition="classic", num_players=2)


def calibrate(budget: int = 300, rounds: int = 6, seed: int = 0) -> dict[str, float]:
    """Playouts per second of the search over the searched decisions of a few rounds."""
    agent = ISMCTSAgent(iterations=budget, seed=seed)
    opponent = RuleAgent()
    searched = playouts = 0
    seconds = cpu_seconds = 0.0
    for r in range(rounds):
        game = Game(RULES, seed=seed + r)
        while not game.is_round_over:
            seat = game.current_player
            assert seat is not None
            info = game.view(seat)
            if seat == r % 2:
                start, cpu_start = time.perf_counter(), time.process_time()
                action = agent.act(None, info)
                elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
                if agent.last_iterations:
                    searched += 1
                    playouts += agent.last_iterations
                    seconds += elapsed
                    cpu_seconds += cpu
                agent.last_iterations = 0
            else:
                action = opponent.act(None, info)
            game.step(action)
    rate = playouts / cpu_seconds
    return {"playouts_per_cpu_second": rate, "playouts_per_wall_second": playouts / seconds,
            "decisions": searched, "mean_playouts": playouts / max(1, searched), "budget_for_0.1s_of_cpu": 0.1 * rate}


def run(budgets: list[int], games: int, seed: int, workers: int) -> list[dict[str, Any]]:
    """One match per budget; returns a row per budget."""
    from agents.tournament import evaluate

    rows = []
    for budget in budgets:
        start = time.perf_counter()
        result = evaluate([ISMCTSAgent(iterations=budget), RuleAgent()], RULES, games=games,
                          labels=["ismcts", "rule"], seed=seed, workers=workers)
        stats = result.stats()[0]
        row = {"budget": budget, "games": stats.games, "wins": stats.wins, "win_rate": stats.win_rate,
               "ci_low": stats.ci_low, "ci_high": stats.ci_high, "seed": seed,
               "seconds": time.perf_counter() - start}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def pool(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pool the rows of each budget (different seeds) and recompute the intervals."""
    by_budget: dict[int, dict[str, Any]] = {}
    for row in rows:
        entry = by_budget.setdefault(row["budget"], {"budget": row["budget"], "games": 0, "wins": 0.0, "seeds": []})
        if row["seed"] in entry["seeds"]:
            continue
        entry["seeds"].append(row["seed"])
        entry["games"] += row["games"]
        entry["wins"] += row["wins"]
    out = []
    for budget in sorted(by_budget):
        entry = by_budget[budget]
        low, high = wilson_interval(entry["wins"], entry["games"])
        out.append({**entry, "win_rate": entry["wins"] / entry["games"], "ci_low": low, "ci_high": high})
    return out


def plot(rows: list[dict[str, Any]], path: str, playouts_per_second: float | None) -> None:
    """The win-rate curve with 95% Wilson intervals."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["budget"] for r in rows]
    ys = [100 * r["win_rate"] for r in rows]
    err = [[100 * (r["win_rate"] - r["ci_low"]) for r in rows], [100 * (r["ci_high"] - r["win_rate"]) for r in rows]]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, color="#4c72b0", label="ISMCTS vs RuleAgent")
    for x, y, r in zip(xs, ys, rows, strict=True):
        ax.annotate(f"{r['games']}", (x, y), textcoords="offset points", xytext=(6, -12), fontsize=7, color="gray")
    ax.axhline(50, color="#c44e52", linestyle="--", linewidth=1, label="50%")
    ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_ylim(min(35.0, min(100 * r["ci_low"] for r in rows) - 2), max(65.0, max(100 * r["ci_high"] for r in rows) + 2))
    label = "playouts per decision"
    if playouts_per_second:
        label += f" (1 playout = about {1000 / playouts_per_second:.2f} ms of one core here; 0.1 s = " \
                 f"{0.1 * playouts_per_second:.0f})"
    ax.set_xlabel(label)
    ax.set_ylabel("win rate (%), 95% Wilson interval")
    ax.set_title("ISMCTS against RuleAgent, classic, 2 players, one round per game (games beside points)",
                 fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Command line: calibrate, run or plot."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ismcts_strength", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cal = sub.add_parser("calibrate", help="playouts per second of the search here")
    cal.add_argument("--rounds", type=int, default=6)
    r = sub.add_parser("run", help="win rate against RuleAgent per budget")
    r.add_argument("--budgets", type=int, nargs="+", default=[25, 50, 100, 200, 400])
    r.add_argument("--games", type=int, default=400, help="rounds per budget (rounded up to whole deals)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--workers", type=int, default=1)
    r.add_argument("--out", help="write the rows as JSON")
    p = sub.add_parser("plot", help="draw the curve from run outputs")
    p.add_argument("inputs", nargs="+")
    p.add_argument("--png", default="docs/ismcts_strength.png")
    p.add_argument("--playouts-per-second", type=float, default=None)
    args = parser.parse_args(argv)
    random.seed(0)  # nothing here should use the global generator; fixed anyway
    if args.command == "calibrate":
        print(json.dumps(calibrate(rounds=args.rounds)))
    elif args.command == "run":
        rows = run(args.budgets, args.games, args.seed, args.workers)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as handle:
                json.dump(rows, handle, indent=1)
    else:
        rows = []
        for path in args.inputs:
            with open(path, encoding="utf-8") as handle:
                rows += json.load(handle)
        pooled = pool(rows)
        print("| playouts | games | win rate | 95% CI |\n|---:|---:|---:|---|")
        for row in pooled:
            print(f"| {row['budget']} | {row['games']} | {100 * row['win_rate']:.1f}% | "
                  f"{100 * row['ci_low']:.1f}-{100 * row['ci_high']:.1f}% |")
        plot(pooled, args.png, args.playouts_per_second)


if __name__ == "__main__":
    main()
