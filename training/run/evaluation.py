"""The periodic evaluation: a checkpoint against ``eval.matchups`` with the tournament harness, and its record
(``evals.jsonl``, the ``last`` card, ``best``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from training.run.config import TrainConfig
from training.run.rundir import write_card
from training.run.state import Best, JsonObject, RunState
from uno_env.files import atomic_write


def evaluate_checkpoint(path: str | Path, config: TrainConfig, games: int | None = None,
                        workers: int | None = None, log: Callable[[str], None] | None = None,
                        check: Callable[[], None] | None = None) -> JsonObject:
    """Play the checkpoint against each ``eval.matchups`` lineup through the tournament harness.

    ``log`` receives one line per matchup as it finishes (the progress of a long evaluation);
    ``check`` is called between games (``StopRequests.check``: it raises to abandon the evaluation).
    """
    from agents import PPOAgent
    from agents.tournament import evaluate
    from uno_env.core import Rules, edition_name

    agent = PPOAgent.load(path, label="ppo")
    results = {}
    scores = []
    for i, m in enumerate(config.eval.matchups):
        started = time.perf_counter()
        rules = Rules(edition=edition_name(m.edition), num_players=m.num_players)
        result = evaluate([agent] + [m.opponent] * (m.num_players - 1), rules, games or config.eval.games,
                          labels=["ppo"] + [m.opponent] * (m.num_players - 1), seed=config.eval.seed,
                          workers=workers or config.eval.workers, max_decisions=config.eval.max_decisions,
                          check=check)
        ppo = result.stats()[0]
        key = f"{m.edition}_{m.num_players}p_vs_{m.opponent}"
        results[key] = {"win_rate": ppo.win_rate, "ci_low": ppo.ci_low, "ci_high": ppo.ci_high,
                        "chance": ppo.chance, "games": result.games,
                        "unfinished": result.unfinished, "table": result.to_markdown()}
        scores.append(ppo.win_rate / ppo.chance)
        if log is not None:
            log(f"[eval] {i + 1}/{len(config.eval.matchups)} {key}: {100 * ppo.win_rate:.1f}% of {result.games} "
                f"games ({time.perf_counter() - started:.0f} s)")
    return {"score": float(np.mean(scores)) if scores else 0.0, "matchups": results}


def record_evaluation(run_dir: Path, state: RunState, result: JsonObject, steps: int,
                      log: Callable[[str], None]) -> dict[str, float]:
    """Record an evaluation of ``last.safetensors`` at ``steps``: a line of ``evals.jsonl``, ``last.json``'s
    card, ``best`` if it beats the best so far (``state`` updated); returns the TensorBoard scalars."""
    result["steps"] = steps
    scalars = {f"eval/{key}/{name}": r[name] for key, r in result["matchups"].items()
               for name in ("win_rate", "ci_low", "ci_high")}
    scalars["eval/score"] = result["score"]
    brief = {k: {f: v[f] for f in ("win_rate", "ci_low", "ci_high", "chance", "games", "unfinished")}
             for k, v in result["matchups"].items()}
    evals = run_dir / "evals.jsonl"
    before = evals.read_text(encoding="utf-8") if evals.exists() else ""
    atomic_write(evals, before + json.dumps({"steps": steps, "score": result["score"], "matchups": brief}) + "\n")
    state.evals += 1
    last = run_dir / "last.safetensors"
    write_card(run_dir / "last.json", last, result)
    if state.best is None or result["score"] > state.best.score:
        state.best = Best(score=result["score"], steps=steps)
        atomic_write(run_dir / "best.safetensors", last.read_bytes())
        write_card(run_dir / "best.json", run_dir / "best.safetensors", result)
    state.last_eval_step = steps
    summary = ", ".join(f"{k} {100 * v['win_rate']:.1f}%" for k, v in result["matchups"].items())
    log(f"[eval @ {steps} steps, {result.get('eval_seconds', 0)} s] {summary}; "
        f"score {result['score']:.3f} (best {state.best.score:.3f})")
    return scalars
