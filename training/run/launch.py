"""Starting or resuming a run, whatever the trainer: the checks before anything is written, the stop handlers,
and where an interrupted run stands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from training.run.config import ConfigError, TrainConfig, check_init_from
from training.run.interrupt import StopRequests, TrainingInterrupted
from training.run.resume import previous_run_files, read_resume, remove_stale_temporaries
from training.run.rundir import write_config
from training.run.state import RunState

if TYPE_CHECKING:
    import torch

    from training.run.schedule import Trainer

Saved = tuple[RunState, dict[str, "torch.Tensor"]]
Runner = Callable[[TrainConfig, Path, "Saved | None", StopRequests, bool], None]
"""A trainer's entry point: ``(config, run_dir, saved, stop, show_progress)``; raises ``TrainingInterrupted``."""


def launch(config: TrainConfig, runner: Runner, resume: bool = False, progress_bar: bool | None = None,
           seconds: float | None = None) -> Path:
    """Train (or continue) the run ``config`` describes with ``runner``; returns its directory. ``seconds``: a time
    budget, spent like a Ctrl-C (``training.run.interrupt``).

    Raises ``TrainingInterrupted`` after a Ctrl-C or SIGTERM, once the checkpoint is written;
    ``ResumeError`` for a run directory that cannot be resumed; ``FileExistsError`` for a fresh
    start in a directory that holds another run's files (nothing is deleted or overwritten).
    """
    run_dir = config.output_dir()
    saved = read_resume(run_dir) if resume else None
    if resume:
        remove_stale_temporaries(run_dir)
    if not resume:
        left = previous_run_files(run_dir) + (["resume/"] if (run_dir / "resume").exists() else [])
        if left:
            raise FileExistsError(f"{run_dir} already holds a run ({', '.join(left[:4])}); pass --resume to "
                                  "continue it or choose another name")
    if saved is not None and config.total_steps < saved[0].steps:
        raise ConfigError(f"total_steps: {config.total_steps} is below the step this run reached "
                          f"({saved[0].steps}); pass --total-steps {saved[0].steps} or more")
    if saved is not None and saved[0].complete and config.total_steps == saved[0].steps:
        print(f"{run_dir}: already complete at step {config.total_steps} (--total-steps N extends it)", file=sys.stderr)
        return run_dir
    show = config.progress_bar if progress_bar is None else progress_bar
    if saved is None:
        check_init_from(config)  # a fresh start (also a --resume with nothing saved) reads ppo.init_from
        run_dir.mkdir(parents=True, exist_ok=True)
        write_config(run_dir, config)  # a resume writes it once its state is loaded: a refused one changes nothing
    with StopRequests(seconds) as stop:
        try:
            runner(config, run_dir, saved, stop, show)
        except TrainingInterrupted as stopped:
            state_path = run_dir / "resume" / "state.json"
            stopped.steps = int(json.loads(state_path.read_text(encoding="utf-8"))["steps"]) if state_path.exists() else 0
            stopped.run_dir = run_dir
            raise
    return run_dir


def resumed_state(config: TrainConfig, run_dir: Path, state: RunState) -> RunState:
    """``state`` as a resumed run continues it: ``config.yaml`` rewritten, the directory put back as the state
    knew it, the resume step recorded (from step 0 a resume is the unbroken run)."""
    from training.run.rundir import restore_files

    write_config(run_dir, config)
    restore_files(run_dir, state)
    if state.steps < config.total_steps:
        if state.steps > 0:
            state.resumed_at.append(state.steps)  # how to reproduce: training.tools.ship
        state.complete = False
    return state


def starting_state(config: TrainConfig, run_dir: Path, saved: Saved | None, trainer: Trainer) -> RunState:
    """The state a run starts from: a fresh one, or the saved one loaded into ``trainer`` (``Trainer.load``) and
    continued (``resumed_state``)."""
    if saved is None:
        return RunState.fresh(config)
    state, tensors = saved
    trainer.load(tensors, state)
    return resumed_state(config, run_dir, state)
