"""Ship a trained checkpoint: copy it under ``agents/checkpoints/`` with its config, evaluation and curve.

``python -m training.tools.ship runs/universal --name universal --games 10000 --other-games 2000 --whole-games 2000``

Writes ``agents/checkpoints/<name>.safetensors`` (the run's ``best``), ``agents/checkpoints/<name>.yaml``
(the run's config with ``total_steps`` set to the checkpoint's step, so running it again
reproduces the checkpoint as that run's ``last.safetensors``; for a run that was resumed, its
header lists the commands, one per resume), ``agents/checkpoints/<name>.json`` (metadata and the
evaluation, per edition: against rule and against random at 2 and 4 players, or at the table
sizes ``--players`` names, through the tournament harness with seat rotation, one round per
game; then, for classic, the same lineups over whole games to 500 points) and
``agents/checkpoints/<name>.md`` (the same as tables),
plus the training curve (``--curve``, default ``docs/training_curve_<name>.png``).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from agents.ppo_agent import SHIPPED_DIR, SOURCE_ROOT  # noqa: E402
from uno_env.files import atomic_write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = SHIPPED_DIR.relative_to(SOURCE_ROOT).as_posix()  # the shipped folder as the recipes name it, from a checkout


def lineups(players: list[int]) -> list[tuple[int, str]]:
    """(table size, opponent) pairs evaluated: each size against rule, then each against random."""
    return [(n, opponent) for opponent in ("rule", "random") for n in players]


def recipe(name: str, steps: int, resumed_at: list[int]) -> str:
    """The commands that train ``<SHIPPED>/<name>.yaml`` to ``steps``, one more per resume before it."""
    stops = [s for s in resumed_at if s < steps]
    if not stops:
        return f"#   uno-env train --config {SHIPPED}/{name}.yaml\n"
    lines = [f"#   uno-env train --config {SHIPPED}/{name}.yaml --run-dir runs/{name} --total-steps {stops[0]}\n"]
    lines += [f"#   uno-env train --resume runs/{name} --total-steps {s}\n" for s in stops[1:] + [steps]]
    return "".join(lines)


def evaluate_all(path: Path, editions: list[str], games: int, other_games: int, workers: int,
                 seed: int = 777, unit: str = "round", players: list[int] | None = None,
                 max_decisions: int = 2000) -> tuple[list[dict[str, Any]], str]:
    """Evaluate per edition and lineup (``unit``: one round or a whole game to 500 points per game);
    returns (rows, markdown)."""
    from agents import PPOAgent
    from agents.tournament import evaluate
    from uno_env.core import Rules, edition_name

    agent = PPOAgent.load(path, label="ppo")
    rows = []
    lines = ["| edition | players | opponents | games | PPO win rate | 95% CI | chance | abandoned |",
             "|---|---:|---|---:|---:|---|---:|---:|"]
    for edition in editions:
        for n, opponent in lineups(players or [2, 4]):
            count = games if edition == "classic" else other_games
            if not count:
                continue
            result = evaluate([agent] + [opponent] * (n - 1), Rules(edition=edition_name(edition), num_players=n), count,
                              labels=["ppo"] + [opponent] * (n - 1), seed=seed, workers=workers,
                              max_decisions=max_decisions, unit=unit)
            s = result.stats()[0]
            rows.append({"edition": edition, "num_players": n, "opponent": opponent, "unit": unit,
                         "games": result.games, "win_rate": s.win_rate, "ci_low": s.ci_low, "ci_high": s.ci_high,
                         "chance": s.chance, "unfinished": result.unfinished, "seed": seed})
            lines.append(f"| {edition} | {n} | {opponent} x{n - 1} | {result.games} | {100 * s.win_rate:.1f}% | "
                         f"{100 * s.ci_low:.1f}-{100 * s.ci_high:.1f}% | {100 * s.chance:.0f}% | "
                         f"{result.unfinished} |")
            print(lines[-1], flush=True)
    return rows, "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir")
    parser.add_argument("--name", required=True)
    parser.add_argument("--checkpoint", default="best.safetensors", help="file in the run dir to ship")
    parser.add_argument("--games", type=int, default=10_000, help="games per classic lineup")
    parser.add_argument("--other-games", type=int, default=2_000, help="games per lineup in the other editions")
    parser.add_argument("--whole-games", type=int, default=2_000,
                        help="whole games to 500 points per classic lineup (0: none)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--curve", help="training-curve PNG (default docs/training_curve_<name>.png; '' for none)")
    parser.add_argument("--out-dir", default=str(SHIPPED_DIR), help=f"where shipped checkpoints live (default {SHIPPED})")
    parser.add_argument("--players", type=int, nargs="+",
                        help="table sizes to evaluate (default: 2 and 4, those of them the checkpoint trained on)")
    args = parser.parse_args(argv)
    import yaml

    from agents.ppo_agent import read_checkpoint
    from training.tools.plot import plot_curve

    run_dir = Path(args.run_dir)
    source = run_dir / args.checkpoint
    _, meta = read_checkpoint(source)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{args.name}.safetensors"
    atomic_write(target, source.read_bytes())
    config = dict(meta["config"])
    config["total_steps"] = meta["steps"]
    config["run_dir"] = ""
    state_path = run_dir / "resume" / "state.json"
    resumed_at = json.loads(state_path.read_text(encoding="utf-8")).get("resumed_at", []) if state_path.exists() else []
    atomic_write(
        out / f"{args.name}.yaml",
        f"# Reproduces {SHIPPED}/{args.name}.safetensors (step {meta['steps']}, seed {meta['seed']}) as the run's\n"
        f"# last.safetensors:\n" + recipe(args.name, meta["steps"], resumed_at)
        + yaml.safe_dump(config, sort_keys=False))
    players = args.players or [n for n in (2, 4) if n in meta["num_players"]] or sorted(meta["num_players"])[:1]
    rows, table = evaluate_all(target, meta["editions"], args.games, args.other_games, args.workers, players=players)
    text = (f"# {args.name}: step {meta['steps']}, seed {meta['seed']}\n\nTournament harness, seat rotation, "
            f"duplicate deals, deterministic policy (argmax), one round per game.\n\n{table}")
    if args.whole_games and "classic" in meta["editions"]:
        whole, whole_table = evaluate_all(target, ["classic"], args.whole_games, 0, args.workers, unit="game",
                                          players=players)
        rows += whole
        text += f"\nWhole games to 500 points (classic), the same harness:\n\n{whole_table}"
    card = {"checkpoint": target.name, "steps": meta["steps"], "seed": meta["seed"],
            "editions": meta["editions"], "num_players": meta["num_players"],
            "size_bytes": target.stat().st_size, "evaluation": rows}
    atomic_write(out / f"{args.name}.json", json.dumps(card, indent=1) + "\n")
    atomic_write(out / f"{args.name}.md", text)
    curve = str(ROOT / "docs" / f"training_curve_{args.name}.png") if args.curve is None else args.curve
    if (run_dir / "evals.jsonl").exists() and curve:
        plot_curve(run_dir, curve)
    print(f"shipped {target} ({target.stat().st_size} bytes) with .yaml, .json, .md")


if __name__ == "__main__":
    main()
