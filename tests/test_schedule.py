"""``training.run.schedule``: the schedule drives a trainer through ``Trainer.learn_until``.

A fake trainer learns in fixed units (as SB3's and the batched trainer's rollouts) over a real
network, so every event's step, every call's target and the files a run writes are what the
schedule decided, with no RL library in the loop.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from training.batched.networks import ActorCritic, actor_tensors  # noqa: E402
from training.run.config import TrainConfig, config_from_dict  # noqa: E402
from training.run.interrupt import StopRequests, TrainingInterrupted  # noqa: E402
from training.run.launch import starting_state  # noqa: E402
from training.run.resume import capture, read_resume, restore  # noqa: E402
from training.run.rundir import export_checkpoint  # noqa: E402
from training.run.schedule import Trainer, drive  # noqa: E402
from training.run.state import Counters, JsonObject, RunState  # noqa: E402
from uno_env.progress import Progress  # noqa: E402

UNIT = 128  # learner steps per unit of training (a rollout)


class UnitTrainer:
    """A ``Trainer`` that learns ``UNIT`` steps at a time (never past ``total_steps``) and records every call."""

    def __init__(self, config: TrainConfig, stop_at_call: int | None = None) -> None:
        self.config, self.model = config, ActorCritic(config)
        self.num_timesteps = 0
        self.targets: list[tuple[int, int]] = []  # (steps when called, target)
        self.snapshots: list[tuple[int, str, list[str]]] = []
        self.stop_at_call = stop_at_call

    @property
    def steps(self) -> int:
        return self.num_timesteps

    def learn_until(self, target: int, stop: StopRequests, progress: Progress) -> None:
        self.targets.append((self.num_timesteps, target))
        if len(self.targets) == self.stop_at_call:
            stop.signum = signal.SIGINT  # as the handler records a Ctrl-C during this unit
        while self.num_timesteps < target:
            if stop.requested:
                return  # the unit in progress is dropped
            self.num_timesteps = min(self.num_timesteps + UNIT, self.config.total_steps)
            progress.update(self.num_timesteps)

    def export(self, path: Path) -> None:
        export_checkpoint(path, actor_tensors(self.model.actor), self.config, self.num_timesteps)

    def tensors(self) -> tuple[dict[str, torch.Tensor], JsonObject]:
        return capture(self.model, self.model.optimizer)

    def load(self, tensors: dict[str, torch.Tensor], state: RunState) -> None:
        restore(self.model, self.model.optimizer, tensors, state)
        self.num_timesteps = state.steps

    def counters(self) -> Counters:
        return Counters(n_updates=self.num_timesteps // UNIT)

    def add_snapshot(self, name: str, path: Path, dropped: list[str]) -> None:
        assert path.is_file()
        self.snapshots.append((self.num_timesteps, name, dropped))

    def log_scalars(self, scalars: dict[str, float]) -> None:
        pass


def _config(run_dir: Path, **top: Any) -> TrainConfig:
    data: dict[str, Any] = {
        "name": "schedule", "seed": 1, "total_steps": 500, "run_dir": str(run_dir), "checkpoint_every": 200,
        "tensorboard": False, "progress_bar": False, "ppo": {"hidden": [8]},
        "pool": {"snapshot_every": 64, "size": 2},
        "eval": {"every": 0, "games": 2, "matchups": []},
        **top,
    }
    return config_from_dict(data)


def _run(config: TrainConfig, trainer: UnitTrainer, saved: Any = None) -> None:
    run_dir = config.output_dir()
    run_dir.mkdir(parents=True, exist_ok=True)
    state = starting_state(config, run_dir, saved, trainer)
    with StopRequests() as stop:
        drive(config, run_dir, state, trainer, stop, show=False, fresh=saved is None)


def _state(run_dir: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((run_dir / "resume" / "state.json").read_text(encoding="utf-8"))
    return state


def test_the_trainers_protocol_is_what_the_schedule_calls() -> None:
    assert {name for name in dir(Trainer) if not name.startswith("_")} == {
        "steps", "learn_until", "export", "tensors", "load", "counters", "add_snapshot", "log_scalars"}


def test_the_schedule_drives_learn_until_to_each_event_and_events_land_on_unit_boundaries(tmp_path: Path) -> None:
    config = _config(tmp_path / "run")
    trainer = UnitTrainer(config)
    _run(config, trainer)
    # targets: the next snapshot (64, then 64 after each), checkpoint (200, then 456) or the total (500)
    assert trainer.targets == [(0, 64), (128, 192), (256, 320), (384, 448)]
    assert [(steps, name) for steps, name, _ in trainer.snapshots] == [
        (128, "snap_128"), (256, "snap_256"), (384, "snap_384"), (500, "snap_500")]
    assert [dropped for *_, dropped in trainer.snapshots] == [[], [], ["snap_128"], ["snap_256"]]
    state = _state(tmp_path / "run")
    assert state["steps"] == 500 and state["complete"] and state["snapshots"] == ["snap_384", "snap_500"]
    assert state["next_checkpoint"] == 700 and state["next_snapshot"] == 564  # checkpoints at 0, 256 and 500
    assert state["counters"]["n_updates"] == 500 // UNIT
    assert sorted(p.stem for p in (tmp_path / "run" / "pool").iterdir()) == ["snap_384", "snap_500"]


def test_periodic_evaluations_are_events_too(tmp_path: Path) -> None:
    config = _config(tmp_path / "run", total_steps=300, checkpoint_every=1000, pool={"snapshot_every": 1000},
                     eval={"every": 100, "games": 2, "matchups": []})
    trainer = UnitTrainer(config)
    _run(config, trainer)
    assert trainer.targets == [(0, 100), (128, 228), (256, 300)]  # evaluations at 128 and 256, then the total
    evals = [json.loads(line)["steps"] for line in (tmp_path / "run" / "evals.jsonl").read_text().splitlines()]
    assert evals == [128, 256, 300]


def test_a_stop_request_ends_the_run_between_calls_with_a_checkpoint_and_it_resumes(tmp_path: Path) -> None:
    config = _config(tmp_path / "run")
    trainer = UnitTrainer(config, stop_at_call=3)  # stopped during the unit from 256
    with pytest.raises(TrainingInterrupted) as stopped:
        _run(config, trainer)
    assert stopped.value.signum == signal.SIGINT
    assert trainer.targets == [(0, 64), (128, 192), (256, 320)]  # no call after the stop
    state = _state(tmp_path / "run")
    assert state["steps"] == 256 and not state["complete"]
    resumed = UnitTrainer(config)
    _run(config, resumed, saved=read_resume(tmp_path / "run"))
    assert resumed.targets[0] == (256, 320) and resumed.steps == 500
    assert _state(tmp_path / "run")["complete"] and _state(tmp_path / "run")["resumed_at"] == [256]


def test_a_resumed_state_with_an_event_already_due_takes_it_before_training(tmp_path: Path) -> None:
    """A state written by earlier code can hold an event due at its own step (it took events mid-rollout)."""
    config = _config(tmp_path / "run", total_steps=256)
    with pytest.raises(TrainingInterrupted):
        _run(config, UnitTrainer(config, stop_at_call=2))  # stopped at 128 ...
    path = tmp_path / "run" / "resume" / "state.json"
    data = json.loads(path.read_text())
    assert data["steps"] == 128
    data["next_checkpoint"] = 128  # ... as if a checkpoint were due there
    path.write_text(json.dumps(data))
    trainer = UnitTrainer(config)
    _run(config, trainer, saved=read_resume(tmp_path / "run"))
    assert trainer.targets[:2] == [(128, 128), (128, 192)]  # the checkpoint first, then the next snapshot
    assert _state(tmp_path / "run")["next_checkpoint"] == 328


def test_a_time_budget_is_a_stop_request_once_spent_on_its_clock() -> None:
    now = [100.0]
    with StopRequests(seconds=30, clock=lambda: now[0]) as stop:
        now[0] = 129.9
        assert not stop.requested
        stop.check()  # nothing raised
        now[0] = 130.0
        assert stop.requested and stop.signum == signal.SIGINT
        with pytest.raises(TrainingInterrupted) as stopped:
            stop.check()
    assert stopped.value.exit_code == 130


@pytest.mark.parametrize("seconds", [0, -1.0, float("nan")])
def test_a_time_budget_that_is_not_positive_is_refused(seconds: float) -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        StopRequests(seconds=seconds)


def test_a_slice_whose_budget_runs_out_stops_at_its_next_call_with_a_checkpoint(tmp_path: Path) -> None:
    """gpu_slice's --seconds: the budget spent during a unit of training ends the run after it, as Ctrl-C does."""
    config = _config(tmp_path / "run")
    now = [0.0]

    class Slow(UnitTrainer):
        def learn_until(self, target: int, stop: StopRequests, progress: Progress) -> None:
            now[0] += 10.0  # each call takes 10 s on the fake clock
            super().learn_until(target, stop, progress)

    trainer = Slow(config)
    run_dir = config.output_dir()
    run_dir.mkdir(parents=True)
    with pytest.raises(TrainingInterrupted), StopRequests(seconds=25, clock=lambda: now[0]) as stop:
        drive(config, run_dir, starting_state(config, run_dir, None, trainer), trainer, stop, show=False, fresh=True)
    assert [target for _, target in trainer.targets] == [64, 192, 320]  # the third call finds the budget spent
    assert _state(run_dir)["steps"] == 256 and not _state(run_dir)["complete"]
