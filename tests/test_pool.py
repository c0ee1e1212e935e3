"""The self-play pool, one copy for both trainers (issue 23.3): the seat-draw rule and the Elo ratings."""

from __future__ import annotations

import doctest
import json
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the batched trainer needs torch")
pytest.importorskip("gymnasium")
pytest.importorskip("yaml")

from test_ppo_agent import _random_checkpoint  # noqa: E402
from test_ppo_batched import _play, _rollout, _tiny  # noqa: E402

import training.run.pool  # noqa: E402
from training.batched.selfplay import SelfPlay  # noqa: E402
from training.cli import train  # noqa: E402
from training.run.config import config_from_dict  # noqa: E402
from training.run.interrupt import TrainingInterrupted  # noqa: E402
from training.run.pool import ELO_START, Result, draw_opponents, update_ratings  # noqa: E402
from training.sb3.pool import PoolOpponent  # noqa: E402
from uno_env.observation import observation_size  # noqa: E402


# ---------------------------------------------------------------------- the draw rule
def test_the_draw_rules_documented_examples_hold() -> None:
    assert doctest.testmod(training.run.pool).failed == 0


def test_each_pool_member_gets_its_share_of_the_seats() -> None:
    """baseline_share 0.3 over 3 baselines, then latest_share 0.5 for the newest of 4 snapshots, the rest
    uniformly over the 3 older: 0.1 per baseline, 0.35 the newest, 0.35 / 3 each older one."""
    uniforms = np.random.default_rng(7).random((200_000, 3))
    members = draw_opponents(uniforms, baselines=3, snapshots=4, baseline_share=0.3, latest_share=0.5)
    assert set(np.unique(members)) == set(range(7))
    shares = np.bincount(members.astype(np.int64), minlength=7) / len(members)
    expected = np.array([0.1, 0.1, 0.1, 0.35 / 3, 0.35 / 3, 0.35 / 3, 0.35])
    sigma = np.sqrt(expected * (1 - expected) / len(members))
    assert np.all(np.abs(shares - expected) < 5 * sigma), shares


def test_before_self_play_every_seat_is_a_baseline_and_a_lone_snapshot_is_always_the_newest() -> None:
    uniforms = np.random.default_rng(1).random((10_000, 3))
    before = draw_opponents(uniforms, baselines=2, snapshots=0, baseline_share=0.0, latest_share=0.0)
    assert set(np.unique(before)) == {0.0, 1.0}
    lone = draw_opponents(uniforms, baselines=2, snapshots=1, baseline_share=0.0, latest_share=0.0)
    assert set(np.unique(lone)) == {2.0}  # latest_share 0, but there is no older snapshot
    assert draw_opponents(np.array([0.999_999_999_999, 0.5, 0.999_999_999_999]), 7, 0, 0.3, 0.5) == 6.0


def test_numpy_and_torch_make_the_same_choices_from_the_same_uniforms() -> None:
    uniforms = np.random.default_rng(3).random((5_000, 4, 3))
    for snapshots in (0, 1, 5):
        on_numpy = draw_opponents(uniforms, 2, snapshots, 0.3, 0.6)
        on_torch = draw_opponents(torch.from_numpy(uniforms), 2, snapshots, 0.3, 0.6)
        assert isinstance(on_torch, torch.Tensor) and np.array_equal(on_torch.numpy(), on_numpy)


class Uniforms:
    """A stand-in for ``PoolOpponent.rng`` that hands out given uniforms (and seeds 0)."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = rows

    def random(self, size: int) -> np.ndarray:
        assert size == 3
        return np.array(self.rows.pop(0), dtype=np.float64)

    def integers(self, high: int) -> int:
        return 0


def test_both_trainers_seat_the_same_opponents_for_the_same_uniforms(tmp_path: Path) -> None:
    """The batched trainer's seats, drawn from its generator, are what the SB3 pool picks from the same
    uniforms: the one draw rule serves both."""
    baselines = ["random", "random-uniform"]
    data = _tiny(env={"num_players": 4}, pool={"baselines": baselines, "latest_share": 0.4, "baseline_share": 0.3},
                 batched={"num_tables": 32})
    play, model = _play(data, seed=11)
    snapshots = [f"snap_{k}" for k in (64, 128, 192)]
    for name in snapshots:
        play.add_snapshot(name, model.actor, limit=3)
    play.steps = lambda: 10_000  # past pool.baseline_only_steps
    before = play.generator.get_state()
    play.draw_seats(torch.ones(play.num_tables, dtype=torch.bool))
    replay = torch.Generator().set_state(before)
    torch.rand(play.num_tables, generator=replay)  # the learner's seats come first
    uniforms = torch.rand(play.num_tables, play.seats, 3, generator=replay)
    batched = [[play.kinds[k].name for k in row] for row in play.seat_kind.tolist()]

    pool = PoolOpponent(baselines, baseline_share=0.3, latest_share=0.4)
    pool.set_pool([(name, str(_random_checkpoint(tmp_path / f"{name}.safetensors"))) for name in snapshots])
    pool.rng = Uniforms(uniforms.double().reshape(-1, 3).tolist())  # type: ignore[assignment]
    observation = {"observation": np.zeros(observation_size(10), np.float32), "action_mask": np.eye(80, dtype=np.int8)[55]}
    sb3 = []
    for _ in range(play.num_tables):
        pool.reset()
        for seat in range(play.seats):
            pool.act(observation, {"seat": seat, "legal_action_ids": [55]})
        sb3.append([pool.assigned[seat] for seat in range(play.seats)])
    assert sb3 == batched
    assert {name for row in batched for name in row} == set(baselines + snapshots)  # every kind of choice met


def test_the_same_seed_seats_the_same_opponents() -> None:
    data = _tiny(pool={"baselines": ["random", "random-uniform"]}, batched={"num_tables": 64})
    seats = []
    for _ in range(2):
        play, model = _play(data, seed=4)
        play.add_snapshot("snap_1", model.actor, limit=2)
        play.add_snapshot("snap_2", model.actor, limit=2)
        play.steps = lambda: 10_000
        play.draw_seats(torch.ones(play.num_tables, dtype=torch.bool))
        seats.append((play.learner_seat.tolist(), play.seat_kind.tolist()))
    assert seats[0] == seats[1]


# ---------------------------------------------------------------------- the ratings
def test_one_win_moves_the_ratings_by_the_elo_rule_and_a_truncated_episode_moves_nothing() -> None:
    elo = {"learner": ELO_START, "snap_1": ELO_START}
    present = update_ratings(elo, Result(won=True, truncated=False, opponents={1: "snap_1", 2: "rule"},
                                         winners=[0]), baselines=["rule"])
    assert present == ["snap_1", "rule"]
    # 1000 vs 1000: expected 0.5, a win moves both by K/2 = 8; then 1008 vs a fresh 1000 for rule
    expected = 1 / (1 + 10 ** (-8 / 400))
    assert elo["learner"] == pytest.approx(ELO_START + 8.0 + 16 * (1 - expected))
    assert elo["rule"] == pytest.approx(ELO_START - 16 * (1 - expected))
    assert elo["snap_1"] == pytest.approx(ELO_START - 8.0) and sum(elo.values()) == pytest.approx(3 * ELO_START)
    frozen = dict(elo)
    update_ratings(elo, Result(won=False, truncated=True, opponents={1: "snap_1"}, winners=[]), baselines=["rule"])
    assert elo == frozen
    update_ratings(elo, Result(won=False, truncated=False, opponents={1: "gone"}, winners=[1]), baselines=["rule"])
    assert elo == frozen  # a snapshot dropped from the pool meanwhile is not rated


def _rated(seed: int) -> tuple[dict[str, float], dict[str, float], SelfPlay]:
    play, model = _play(_tiny(env={"num_players": 2}, pool={"baselines": ["rule"]}, batched={"num_tables": 16}),
                        seed=seed)
    _rollout(play, model, 1024)
    elo = {"learner": ELO_START}
    return elo, play.rate(elo), play


def test_batched_ratings_move_by_who_won_and_the_same_seed_rates_the_same() -> None:
    """An untrained learner against the network fitted to RuleAgent loses: its rating falls, rule's rises."""
    elo, scalars, play = _rated(seed=2)
    stats = play.statistics()
    assert stats["episodes/count"] >= 5 and stats["pool/win_rate_vs/rule"] < 0.5
    assert elo["learner"] < ELO_START < elo["rule"]
    assert sum(elo.values()) == pytest.approx(2 * ELO_START)  # every update is zero-sum
    assert scalars == {"pool/elo/learner": elo["learner"], "pool/elo/rule": elo["rule"]}
    assert play.rate(elo) == scalars  # each ended episode is rated once
    assert _rated(seed=2)[0] == elo


# ---------------------------------------------------------------------- a batched run: ratings, scalars, progress
def test_an_interrupted_batched_run_says_how_far_it_got_and_keeps_its_moved_ratings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 23.4: the last progress line of a stopped batched run is how far it got, never "T/T steps done";
    its ratings moved (``pool/elo/<name>`` logged every update) and are in the resume state. The scalars it
    logs are the list on docs/training.md."""
    import training.batched.ppo as ppo

    logged: list[dict[str, float]] = []

    def log_and_stop(self: Any, scalars: dict[str, float]) -> None:
        logged.append(dict(scalars))
        if len(logged) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does: StopRequests records it

    monkeypatch.setattr(ppo.Learner, "log_scalars", log_and_stop)
    run_dir = tmp_path / "run"
    data = _tiny(run_dir, total_steps=100_000, checkpoint_every=100_000, pool={"baselines": ["rule", "random"]})
    with pytest.raises(TrainingInterrupted):
        train(config_from_dict(data), progress_bar=True)
    err = capfd.readouterr().err
    steps = json.loads((run_dir / "resume" / "state.json").read_text())["steps"]
    last = [line for line in err.splitlines() if line.startswith("[train]")][-1]
    assert steps > 0 and last.startswith(f"[train] stopped at {steps:,}/100,000 steps after ")
    assert "done" not in err and "100,000/100,000" not in err
    elo = json.loads((run_dir / "resume" / "state.json").read_text())["elo"]
    assert elo["learner"] != ELO_START and set(elo) >= {"learner", "rule", "random"}
    assert logged[-1]["pool/elo/learner"] == elo["learner"]
    assert _scalar_names(logged[-1]) == BATCHED_SCALARS


BATCHED_SCALARS = {
    "train/policy_loss", "train/value_loss", "train/entropy", "train/approx_kl", "train/clip_fraction",
    "train/loss", "train/explained_variance", "train/learning_rate", "train/clip_range",
    "episodes/count", "episodes/length", "episodes/truncated_share", "rollout/learner_win_rate",
    "pool/win_rate_vs/<name>", "pool/win_rate_table/<name>", "pool/elo/<name>", "pool/snapshots",
    "time/steps_per_second", "time/rollout_share",
}
"""What docs/training.md says the batched trainer logs every update (besides ``eval/*`` at evaluations)."""

SB3_SCALARS = {
    "train/policy_gradient_loss", "train/value_loss", "train/entropy_loss", "train/approx_kl", "train/clip_fraction",
    "train/loss", "train/explained_variance", "train/learning_rate", "train/clip_range",
    "episodes/length", "episodes/truncated_share",
    "pool/win_rate_vs/<name>", "pool/win_rate_table/<name>", "pool/elo/<name>", "pool/snapshots",
    "time/fps", "eval/<name>",
}
"""What docs/training.md says the SB3 trainer writes to TensorBoard (and ``imitation/*`` after a warm start)."""


def _scalar_names(keys: Any) -> set[str]:
    """Scalar names with the pool member, table or matchup replaced by ``<name>``."""
    prefixes = ("pool/win_rate_vs/", "pool/elo/", "pool/win_rate_table/", "eval/")
    return {next((p + "<name>" for p in prefixes if key.startswith(p)), key) for key in keys}


@pytest.mark.slow
def test_the_sb3_trainer_writes_the_documented_scalars(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from test_training_resume import _tiny as sb3_tiny

    run_dir = train(config_from_dict(sb3_tiny(tmp_path / "run", total_steps=256, tensorboard=True)))
    (events_dir,) = {path.parent for path in (run_dir / "tb").rglob("events.out.tfevents.*")}
    events = EventAccumulator(str(events_dir))
    events.Reload()
    assert _scalar_names(events.Tags()["scalars"]) == SB3_SCALARS
