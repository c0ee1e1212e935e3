"""``RunState``: a run's bookkeeping, as ``resume/state.json`` holds it (``training.run.resume``).

The JSON keys and their order are the ones run directories have always had, so a state written
by earlier code loads, and a state written now is what earlier code wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from training.run.config import TrainConfig

JsonObject = dict[str, Any]  # a decoded JSON object (checked by ``training.run.resume`` before it gets here)


@dataclass
class Best:
    """The best evaluation so far."""

    score: float
    """its evaluation score (``training.run.evaluation``)"""
    steps: int
    """the learner step of ``best.safetensors``"""


@dataclass
class Counters:
    """A trainer's own counters, kept across a resume (JSON names from SB3, which they mirror)."""

    n_updates: int = 0
    """gradient epochs run so far"""
    episode_num: int = 0
    """learner episodes finished so far"""


@dataclass
class RunState:
    """Where a run stands: its pool, ratings, best, evaluation schedule and step."""

    next_snapshot: int
    """the step at or after which the next pool snapshot is taken"""
    next_eval: int
    """the step at or after which the next periodic evaluation runs"""
    next_checkpoint: int
    """the step at or after which the next resume state is written"""
    snapshots: list[str] = field(default_factory=list)
    """the pool's snapshots, oldest first, each ``pool/<name>.safetensors``"""
    elo: dict[str, float] = field(default_factory=lambda: {"learner": 1000.0})
    """ratings of the learner and of each pool member (the SB3 trainer updates them; ``training.run.pool``)"""
    best: Best | None = None
    """the best evaluation so far, null before the first"""
    last_eval_step: int | None = None
    """the step of the latest evaluation"""
    evals: int = 0
    """lines of ``evals.jsonl`` written so far"""
    steps: int = 0
    """learner steps trained"""
    resumed_at: list[int] = field(default_factory=list)
    """the steps this run was resumed at (how to reproduce it: ``training.tools.ship``)"""
    imitation: dict[str, float] = field(default_factory=dict)
    """the warm start's statistics"""
    complete: bool = False
    """the final evaluation and exports are written"""
    counters: Counters = field(default_factory=Counters)
    """the trainer's counters"""
    rng: JsonObject | None = None
    """Python's and numpy's global generator states at the last save (``training.run.resume.capture``)"""

    @classmethod
    def fresh(cls, config: TrainConfig) -> RunState:
        """The state of a run at step 0."""
        pool = config.pool
        return cls(next_snapshot=max(pool.snapshot_every, pool.baseline_only_steps),
                   next_eval=config.eval.every or config.total_steps, next_checkpoint=config.checkpoint_every)

    def to_json(self, model: str, fmt: str, version: int) -> JsonObject:
        """``state.json``'s object, in its historical key order; ``model`` names the tensors file."""
        return {
            "snapshots": list(self.snapshots), "elo": dict(self.elo),
            "best": None if self.best is None else {"score": self.best.score, "steps": self.best.steps},
            "last_eval_step": self.last_eval_step, "evals": self.evals, "steps": self.steps,
            "next_snapshot": self.next_snapshot, "next_eval": self.next_eval, "next_checkpoint": self.next_checkpoint,
            "resumed_at": list(self.resumed_at), "imitation": dict(self.imitation), "complete": self.complete,
            "counters": {"n_updates": self.counters.n_updates, "episode_num": self.counters.episode_num},
            "rng": self.rng, "format": fmt, "format_version": version, "model": model,
        }

    @classmethod
    def from_json(cls, data: JsonObject) -> RunState:
        """The state ``to_json`` wrote (or earlier code wrote), already checked by ``training.run.resume``."""
        best = data.get("best")
        return cls(
            next_snapshot=int(data["next_snapshot"]), next_eval=int(data["next_eval"]),
            next_checkpoint=int(data["next_checkpoint"]), snapshots=[str(s) for s in data["snapshots"]],
            elo={str(k): float(v) for k, v in data["elo"].items()},
            best=None if best is None else Best(score=float(best["score"]), steps=int(best["steps"])),
            last_eval_step=data.get("last_eval_step"), evals=int(data["evals"]), steps=int(data["steps"]),
            resumed_at=[int(s) for s in data["resumed_at"]],
            imitation={str(k): float(v) for k, v in data["imitation"].items()}, complete=bool(data["complete"]),
            counters=Counters(int(data["counters"]["n_updates"]), int(data["counters"]["episode_num"])),
            rng=data["rng"],
        )
