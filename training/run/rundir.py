"""The run directory's files besides the resume state: ``config.yaml``, ``last``/``best`` with their cards,
``pool/snap_<steps>``, and putting the directory back as a resume state knew it.

``export_checkpoint`` is the one writer of the checkpoint format (``agents.ppo_agent``) in training.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from training.run.config import TrainConfig
from training.run.resume import remove_unlisted_snapshots
from training.run.state import JsonObject, RunState
from uno_env.files import atomic_write


class RunWriteError(RuntimeError):
    """A run directory that could not be written (a full disk, a read-only folder); says what is safe."""


def snapshot_path(run_dir: Path, name: str) -> Path:
    """Where the pool snapshot ``name`` (``snap_<steps>``) lives."""
    return run_dir / "pool" / f"{name}.safetensors"


def checkpoint_metadata(config: TrainConfig, steps: int) -> JsonObject:
    """The JSON metadata saved in every exported checkpoint."""
    from uno_env.observation import observation_size

    return {
        "name": config.name, "max_players": config.env.max_players,
        "observation_size": observation_size(config.env.max_players),
        "hidden": list(config.ppo.hidden), "activation": config.ppo.activation,
        "editions": config.env.editions(), "num_players": config.env.table_sizes(),
        "rules": config.env.rules, "episode": config.env.episode, "steps": int(steps), "seed": config.seed,
        "config": config.to_dict(),
    }


def export_checkpoint(path: Path, actor: dict[str, np.ndarray], config: TrainConfig, steps: int) -> None:
    """Write an actor's tensors (named as ``agents.ppo_agent`` reads them) with the run's metadata at ``steps``."""
    from agents.ppo_agent import write_checkpoint

    write_checkpoint(path, actor, checkpoint_metadata(config, steps))


def write_card(path: Path, checkpoint: Path, result: JsonObject | None) -> None:
    """A human-readable JSON card beside a checkpoint: its metadata and evaluation (null if not evaluated)."""
    from agents.ppo_agent import read_checkpoint

    _, meta = read_checkpoint(checkpoint)
    card = {"checkpoint": checkpoint.name, "metadata": meta, "evaluation": result}
    atomic_write(path, json.dumps(card, indent=1))


def write_config(run_dir: Path, config: TrainConfig) -> None:
    """``config.yaml``: the full config, seed included, as used."""
    import yaml

    atomic_write(run_dir / "config.yaml", yaml.safe_dump(config.to_dict(), sort_keys=False))


def restore_files(run_dir: Path, state: RunState) -> None:
    """Put the run directory back as it was at the resume state: later evaluations, a later ``best`` and
    later snapshots (from a stretch of the run that was lost) are removed."""
    evals = run_dir / "evals.jsonl"
    if evals.exists():
        lines = evals.read_text(encoding="utf-8").splitlines(keepends=True)
        if len(lines) != state.evals:
            atomic_write(evals, "".join(lines[:state.evals]))
    for suffix in (".safetensors", ".json"):
        best = run_dir / f"best{suffix}"
        if state.best is None:
            best.unlink(missing_ok=True)
        else:
            saved = (run_dir / "resume" / f"best_{state.best.steps}{suffix}").read_bytes()
            if not best.exists() or best.read_bytes() != saved:
                atomic_write(best, saved)
    remove_unlisted_snapshots(run_dir, state.snapshots)
