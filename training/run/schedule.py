"""The run's schedule, the one copy for every trainer: it drives the trainer, takes snapshots, evaluations and
checkpoints, honours stop requests, and finishes the run.

``Schedule.run`` owns the loop: the next due event (snapshot, evaluation, checkpoint or the end of the
run) is the target of ``Trainer.learn_until``; when that returns, the events that are due are taken,
then a stop request (Ctrl-C, SIGTERM, a time budget: ``training.run.interrupt``) ends the run with a
checkpoint; at ``total_steps`` the run finishes (the final evaluation and the complete resume state).
A trainer learns in its own units (SB3's rollouts, the batched trainer's rollouts and updates), so an
event lands on the first unit boundary at or after its step. The schedule reaches the trainer only
through ``Trainer``, and no trainer imports another (``tests/test_layers.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from training.run.config import TrainConfig
from training.run.evaluation import evaluate_checkpoint, record_evaluation
from training.run.interrupt import StopRequests, TrainingInterrupted
from training.run.resume import write_resume
from training.run.rundir import RunWriteError, snapshot_path, write_card
from training.run.state import Counters, JsonObject, RunState
from uno_env.progress import Progress

if TYPE_CHECKING:
    import torch


class Trainer(Protocol):
    """What the schedule needs of a trainer: learn to a step, export the actor, hand over and take back its state."""

    @property
    def steps(self) -> int:
        """Learner steps trained so far."""

    def learn_until(self, target: int, stop: StopRequests, progress: Progress) -> None:
        """Train until ``steps >= target`` (at the end of the first unit of training that reaches it), never past
        ``total_steps``; return sooner once ``stop.requested`` (the work in progress may be dropped).
        ``progress.update``/``progress.log`` report on the way."""

    def export(self, path: Path) -> None:
        """Write the actor to ``path`` in the checkpoint format (``training.run.rundir.export_checkpoint``)."""

    def tensors(self) -> tuple[dict[str, torch.Tensor], JsonObject]:
        """The resume tensors and the generator states (``training.run.resume.capture``)."""

    def load(self, tensors: dict[str, torch.Tensor], state: RunState) -> None:
        """Continue from a resume state: ``tensors()``'s output, the step, ``state.counters`` and ``state.rng``
        (``training.run.resume.restore``)."""

    def counters(self) -> Counters:
        """The trainer's counters, saved with the resume state."""

    def add_snapshot(self, name: str, path: Path, dropped: list[str]) -> None:
        """The pool gained the snapshot ``name`` (written at ``path``) and lost ``dropped``."""

    def log_scalars(self, scalars: dict[str, float]) -> None:
        """Record scalars (TensorBoard) at the current step."""


class Schedule:
    """Drives one run's bookkeeping (see the module docstring); ``interrupted`` once a stop request ended it."""

    def __init__(self, config: TrainConfig, run_dir: Path, state: RunState, trainer: Trainer, stop: StopRequests,
                 progress: Progress) -> None:
        self.config, self.run_dir, self.state, self.trainer = config, run_dir, state, trainer
        self.stop, self.progress = stop, progress
        self.interrupted = False
        self.last_evaluation: JsonObject | None = None

    def run(self, fresh: bool) -> None:
        """Train to ``total_steps`` through ``Trainer.learn_until`` (see the module docstring), then finish; a fresh
        run writes its step-0 checkpoint first. Raises ``TrainingInterrupted`` once a stop request ended the run
        (its checkpoint written)."""
        if fresh:  # step 0: an interruption from here on resumes after the warm start
            self.save()
        self.stop.check()
        total = self.config.total_steps
        while True:
            self.trainer.learn_until(self.next_target(), self.stop, self.progress)
            if not self.after_steps() or self.trainer.steps >= total:
                break
        self.finish()
        self.raise_if_interrupted()

    def next_target(self) -> int:
        """The step of the next due event: snapshot, periodic evaluation, checkpoint or the end of the run."""
        s, c = self.state, self.config
        events = [s.next_snapshot, s.next_checkpoint, c.total_steps] + ([s.next_eval] if c.eval.every else [])
        return min(events)

    def after_steps(self) -> bool:
        """Take the snapshot, evaluation and checkpoint that are due; False once the run must stop
        (a stop request: a checkpoint is written first)."""
        s, c, steps = self.state, self.config, self.trainer.steps
        if steps >= s.next_snapshot:
            if steps >= c.pool.baseline_only_steps:
                self._snapshot(steps)
            s.next_snapshot = steps + c.pool.snapshot_every
        if c.eval.every and steps >= s.next_eval:
            if not self.evaluate():
                return False
            s.next_eval = steps + c.eval.every
        if steps >= s.next_checkpoint:
            s.next_checkpoint = steps + c.checkpoint_every  # first: the saved state does not ask for it again
            self.save()
        self.progress.update(steps)
        if self.stop.requested:
            self.stop_now()
            return False
        return True

    def stop_now(self) -> None:
        """A stop request: a checkpoint of the last step, unless one is written already."""
        if self.state.steps != self.trainer.steps:
            self.save()
        self.interrupted = True

    def finish(self) -> None:
        """The final evaluation (unless the last step is evaluated) and the complete resume state."""
        if self.interrupted:
            return
        steps = self.trainer.steps
        if self.state.last_eval_step != steps:
            if self.state.steps != steps:
                self.save()  # a run stopped during its final evaluation resumes with no step lost
            if not self.evaluate():
                return
        self.save(complete=True)

    def raise_if_interrupted(self) -> None:
        """Raise ``TrainingInterrupted`` if a stop request ended the run."""
        if self.interrupted:
            raise TrainingInterrupted(self.stop.signum or 2)

    def _snapshot(self, steps: int) -> None:
        name = f"snap_{steps}"
        path = snapshot_path(self.run_dir, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._write(lambda: self.trainer.export(path))
        s = self.state
        s.snapshots.append(name)
        s.elo[name] = s.elo.get("learner", 1000.0)
        dropped = []
        while len(s.snapshots) > self.config.pool.size:  # the file goes once the next resume state is written
            dropped.append(s.snapshots.pop(0))
            s.elo.pop(dropped[-1], None)
        self.trainer.add_snapshot(name, path, dropped)

    def evaluate(self) -> bool:
        """Evaluate ``last`` and record it; False when a stop request interrupted it (a checkpoint is saved)."""
        last = self.run_dir / "last.safetensors"
        steps = self.trainer.steps
        self._write(lambda: self.trainer.export(last))
        started = time.perf_counter()
        self.progress.log(f"[eval @ {steps} steps] {len(self.config.eval.matchups)} matchups, "
                          f"{self.config.eval.games} games each")
        try:  # the games change nothing a checkpoint holds: a stop abandons them at once
            result = evaluate_checkpoint(last, self.config, log=self.progress.log, check=self.stop.check)
        except TrainingInterrupted:
            self.save()  # the evaluation is done again on resume
            self.interrupted = True
            return False
        result["eval_seconds"] = round(time.perf_counter() - started, 1)
        scalars: dict[str, float] = {}
        self._write(lambda: scalars.update(record_evaluation(self.run_dir, self.state, result, steps,
                                                             self.progress.log)))
        self.trainer.log_scalars(scalars)
        self.last_evaluation = result
        return True

    def save(self, complete: bool = False) -> None:
        """Export ``last`` (with its card) and write the resume state (``training.run.resume``) at the trainer's step."""
        self._write(lambda: self._save(complete))

    def _save(self, complete: bool) -> None:
        s, steps = self.state, self.trainer.steps
        last = self.run_dir / "last.safetensors"
        self.trainer.export(last)
        write_card(self.run_dir / "last.json", last, self.last_evaluation if s.last_eval_step == steps else None)
        tensors, rng = self.trainer.tensors()
        s.steps, s.complete, s.rng, s.counters = steps, complete, rng, self.trainer.counters()
        write_resume(self.run_dir, s, tensors)

    def _write(self, write: Callable[[], None]) -> None:
        """Run a write of the run directory; a full disk (or any OS error) becomes ``RunWriteError``."""
        from safetensors import SafetensorError

        try:
            write()
        except (OSError, SafetensorError) as err:
            raise RunWriteError(f"{self.run_dir}: a write failed at step {self.trainer.steps} ({err}); every file "
                                "is written to a temporary name first, so the last checkpoint is intact. Free some "
                                "space, then continue with --resume") from None


def drive(config: TrainConfig, run_dir: Path, state: RunState, trainer: Trainer, stop: StopRequests, show: bool,
          fresh: bool) -> None:
    """Run ``trainer`` to ``config.total_steps`` under a ``Schedule`` with the ``[train]`` progress (a resumed run
    counts on from its step); raises ``TrainingInterrupted`` once a stop request ended it."""
    with Progress("[train]", config.total_steps, "steps", enabled=show, start=trainer.steps) as progress:
        Schedule(config, run_dir, state, trainer, stop, progress).run(fresh)
