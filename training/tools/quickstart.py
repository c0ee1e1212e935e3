"""Quickstart: train ``configs/quickstart.yaml`` briefly, then print the evaluation table.

``python -m training.tools.quickstart [--games 1000] [--workers 2] [--resume]``

Trains into ``runs/quickstart`` (replacing an earlier quickstart run; ``--resume`` continues an
interrupted one instead: Ctrl-C prints the command), then plays through the tournament harness
(seat rotation, duplicate deals): the fresh policy and the shipped
``agents/checkpoints/`` ``classic_2p``, ``classic_2p_points``, ``classic``, ``classic_points``, ``classic_4p_points``
and ``universal``
each against the random and rule baselines (2 and 4 players, classic; a checkpoint only at the table sizes it
was trained for), and the fresh policy
against each shipped one. Every phase prints its progress (a line per lineup of the evaluation).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# shipped checkpoints compared with the fresh policy, when present; each plays only the table sizes it was trained for
SHIPPED = ("classic_2p", "classic_2p_points", "classic", "classic_points", "classic_4p_points", "universal")
# what this command took on 2 shared CPU cores, the install excluded (docs/speed.md, "How long the commands take
# here": 1 min 1 s at load average 0.2-1.1, 6 min 22 s at load 6-7.6): said before it starts
EXPECTED = "about 1-8 minutes on 2 shared CPU cores, longer when they are busy"


def evaluation_table(agents: dict[str, Path], games: int, workers: int, seed: int = 2024,
                     log: Callable[[str], None] | None = None, progress: bool = False,
                     check: Callable[[], None] | None = None) -> str:
    """Markdown: each agent vs the baselines, then the first agent head to head against each other one
    (``log`` gets a line per lineup as it finishes; ``progress``: the harness's progress within each lineup;
    ``check`` is called between games: it raises to abandon the evaluation)."""
    from agents import PPOAgent
    from agents.tournament import evaluate
    from uno_env.core import Rules

    rows = ["| agent | edition | players | opponents | games | win rate | 95% CI | chance |",
            "|---|---|---:|---|---:|---:|---|---:|"]
    loaded = {label: PPOAgent.load(path, label=label) for label, path in agents.items()}
    lineups: list[tuple[str, PPOAgent, int, str]] = []
    skipped: list[str] = []

    def untrained(label: str, n: int) -> str | None:
        """Why ``label`` does not play at ``n`` players (it was trained for other table sizes), or None."""
        trained = loaded[label].metadata.get("num_players")
        if isinstance(trained, list) and n not in trained:
            return f"trained for {', '.join(map(str, trained))} players"
        return None

    first, *others = list(loaded)
    candidates = [(label, n, opponent) for label in loaded for n, opponent in ((2, "random"), (2, "rule"), (4, "rule"))]
    candidates += [(first, 2, other) for other in others]  # the first agent head to head against each of the others
    for label, n, opponent in candidates:
        own = untrained(label, n)
        theirs = untrained(opponent, n) if opponent in loaded else None
        if own or theirs:
            reason = own or f"{opponent} {theirs}"
            skipped.append(f"| {label} | classic | {n} | {opponent} x{n - 1} | - | not played: {reason} | | |")
        else:
            lineups.append((label, loaded[label], n, opponent))
    for i, (label, agent, n, opponent) in enumerate(lineups, 1):
        started = time.perf_counter()
        seats: list[PPOAgent | str] = [agent]
        seats += [loaded[opponent]] * (n - 1) if opponent in loaded else [opponent] * (n - 1)
        result = evaluate(seats, Rules(edition="classic", num_players=n), games,
                          labels=[label] + [opponent] * (n - 1), seed=seed, workers=workers, max_decisions=2000,
                          progress=progress, check=check)
        s = result.stats()[0]
        rows.append(f"| {label} | classic | {n} | {opponent} x{n - 1} | {result.games} | {100 * s.win_rate:.1f}% | "
                    f"{100 * s.ci_low:.1f}-{100 * s.ci_high:.1f}% | {100 * s.chance:.0f}% |")
        if log is not None:
            log(f"[evaluate] {i}/{len(lineups)} {label} vs {opponent} x{n - 1}: {100 * s.win_rate:.1f}% of "
                f"{result.games} games ({time.perf_counter() - started:.0f} s)")
    return "\n".join(rows + skipped)


def main(argv: list[str] | None = None, prog: str = "uno-env demo") -> None:
    """Train the quickstart config and print the table."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(ROOT / "configs" / "quickstart.yaml"), help="the config to train")
    parser.add_argument("--games", type=int, default=1000, help="games per lineup")
    parser.add_argument("--workers", type=int, default=2, help="processes playing the evaluation games")
    parser.add_argument("--total-steps", type=int, help="override the config's budget")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted quickstart run")
    args = parser.parse_args(argv)
    from training.cli import train
    from training.run.config import ConfigError, load_config
    from training.run.interrupt import StopRequests, TrainingInterrupted
    from training.run.resume import ResumeError

    overrides = {"total_steps": args.total_steps} if args.total_steps else {}
    try:
        config = load_config(args.config, overrides)
    except FileNotFoundError:
        # configs/ lives in the clone, not in the package: an installed uno-env has no default config
        print(f"{prog}: no config {args.config}: run it from a clone installed with pip install -e '.[train]', "
              "or name a config with --config FILE (uno-env train --print-default-config writes one)", file=sys.stderr)
        raise SystemExit(2) from None
    except ConfigError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    run_dir = config.output_dir()
    if run_dir.exists() and not args.resume:
        print(f"replacing the earlier quickstart run in {run_dir}")
        shutil.rmtree(run_dir)
    start = time.perf_counter()
    print(f"{prog}: {EXPECTED}: training, then evaluating each policy against the baselines "
          f"({args.games} games per lineup); Ctrl-C stops with a checkpoint and prints how to resume", flush=True)
    print(f"training {config.name}: {config.total_steps} learner steps, editions {config.env.editions()}, "
          f"tables {config.env.table_sizes()}, seed {config.seed}", flush=True)
    again = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--resume"]
    command = " ".join([prog, *map(shlex.quote, again), "--resume"])
    try:
        train(config, resume=args.resume)
    except TrainingInterrupted as stopped:
        print(f"interrupted at step {stopped.steps}; resume with: {command}", file=sys.stderr)
        raise SystemExit(stopped.exit_code) from None
    except (ConfigError, ResumeError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"trained in {time.perf_counter() - start:.0f} s; checkpoints in {run_dir}")
    from agents.ppo_agent import SHIPPED_DIR

    agents = {"quickstart": run_dir / "last.safetensors"}
    for name in SHIPPED:
        if (SHIPPED_DIR / f"{name}.safetensors").exists():
            agents[f"shipped-{name}"] = SHIPPED_DIR / f"{name}.safetensors"
    if len(agents) == 1:
        print(f"(no shipped checkpoint in {SHIPPED_DIR}; evaluating the quickstart policy only)")
    print(f"evaluating: {len(agents)} policies, {args.games} games per lineup", flush=True)
    try:
        with StopRequests() as stop:  # Ctrl-C: no traceback from the evaluation's worker processes
            table = evaluation_table(agents, args.games, args.workers, log=lambda line: print(line, flush=True),
                                     progress=True, check=stop.check)
    except TrainingInterrupted as stopped:
        print(f"interrupted during the evaluation (training is complete, in {run_dir}); evaluate again with: "
              f"{command}", file=sys.stderr)
        raise SystemExit(stopped.exit_code) from None
    print()
    print(table)
    print(f"\n`--agents ppo` plays {ppo_picks()}; per-edition and larger-table figures: docs/agents.md")


def ppo_picks() -> str:
    """What ``ppo`` plays at classic 2, 3 and 4 players (``agents.registry.shipped_checkpoint``), in words."""
    from agents.registry import shipped_checkpoint

    names = [getattr(shipped_checkpoint("classic", n), "stem", "rule (no shipped checkpoint)") for n in (2, 3, 4)]
    return f"{names[0]} at 2 players, {names[1]} at 3 and {names[2]} at 4"


if __name__ == "__main__":
    from training.cli import python_command

    main(prog=python_command("training.tools.quickstart"))
