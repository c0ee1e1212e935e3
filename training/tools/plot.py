"""The training curve: win rate (95% interval) per evaluation matchup against learner steps.

``python -m training.tools.plot runs/universal [--out docs/training_curve_universal.png]`` reads the run's
``evals.jsonl``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from uno_env.files import atomic_path


def read_evals(run_dir: str | Path) -> list[dict[str, Any]]:
    """The evaluations of a run, in step order (a resumed run's repeats: the last one wins)."""
    by_step: dict[int, dict[str, Any]] = {}
    for line in (Path(run_dir) / "evals.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            by_step[int(record["steps"])] = record
    return [by_step[s] for s in sorted(by_step)]


def plot_curve(run_dir: str | Path, out: str | Path, title: str | None = None) -> None:
    """Write the PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evals = read_evals(run_dir)
    if not evals:
        raise ValueError(f"{run_dir}/evals.jsonl holds no evaluation")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    keys = list(dict.fromkeys(k for e in evals for k in e["matchups"]))
    for i, key in enumerate(keys):
        points = [(e["steps"], e["matchups"][key]) for e in evals if key in e["matchups"]]
        steps = [s / 1e6 for s, _ in points]
        color = f"C{i}"
        ax.plot(steps, [100 * m["win_rate"] for _, m in points], marker="o", markersize=3, color=color,
                label=key.replace("_", " "))
        ax.fill_between(steps, [100 * m["ci_low"] for _, m in points], [100 * m["ci_high"] for _, m in points],
                        color=color, alpha=0.15)
        ax.axhline(100 * points[0][1]["chance"], color=color, linestyle=":", linewidth=1)
    ax.set_xlabel("learner steps (millions)")
    ax.set_ylabel("win rate (%), 95% Wilson interval")
    ax.set_ylim(0, 100)
    games = evals[-1]["matchups"][keys[0]]["games"]
    ax.set_title(title or f"{Path(run_dir).name}: periodic evaluation ({games} games each, seat "
                          "rotation); dotted: chance", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, dpi=110, format=Path(out).suffix.lstrip(".") or "png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_dir")
    parser.add_argument("--out", default="training_curve.png")
    parser.add_argument("--title")
    args = parser.parse_args(argv)
    plot_curve(args.run_dir, args.out, args.title)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
