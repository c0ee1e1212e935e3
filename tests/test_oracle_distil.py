"""training.tools.oracle_distil: the all-seeing search plays out the true position; labels are seeded,
consistent and read back checked; the fit moves the policy towards the actions the values favour."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from agents.ppo_agent import CheckpointError, PPOAgent, read_checkpoint
from training.tools.oracle_distil import (
    Labels,
    OracleSearch,
    advantages,
    fit,
    label,
    main,
    read_labels,
    write_labels,
)
from uno_env.core import Game, Rules
from uno_env.core.determinize import InfoSet

ROOT = Path(__file__).resolve().parent.parent
POLICY = str(ROOT / "agents" / "checkpoints" / "classic_4p_points.safetensors")


def a_game_in_play(seed: int = 5) -> Game:
    game = Game(Rules(num_players=4), seed=seed)
    for _ in range(6):
        game.step(game.legal_actions()[0])
    return game


@pytest.mark.parametrize("pile", ["shuffled", "known"])
def test_the_oracle_plays_out_every_true_hand(pile: str) -> None:
    game = a_game_in_play()
    seat = game.current_player
    assert seat is not None
    oracle = OracleSearch(8, seed=1, pile=pile)
    oracle.truth = game
    rng = random.Random(2)
    states = [oracle._determinization(InfoSet(game.view(seat)), rng, None, []) for _ in range(4)]
    for state in states:
        assert state.hands == game.state.hands  # the hidden cards are the real ones, not a deal
        assert state.public.discard_pile == game.state.public.discard_pile
        assert sorted(state.draw_pile) == sorted(game.state.draw_pile)
    orders = {tuple(s.draw_pile) for s in states}
    if pile == "known":
        assert orders == {tuple(game.state.draw_pile)}
    else:
        assert len(orders) == 4  # reshuffled in each determinization


def test_the_oracle_refuses_to_search_without_the_game_and_leaves_it_as_it_was() -> None:
    game = a_game_in_play()
    seat = game.current_player
    assert seat is not None
    with pytest.raises(RuntimeError, match="truth"):
        OracleSearch(8, seed=1).search(game.view(seat))
    before = game.state.copy()
    values = OracleSearch(30, seed=1).action_values(game, seat)
    legal = game.legal_actions()
    assert np.isfinite(values[legal]).all() and np.isnan(np.delete(values, legal)).all()
    assert ((values[legal] >= 0) & (values[legal] <= 1)).all()
    assert game.state.hands == before.hands and game.state.draw_pile == before.draw_pile
    with pytest.raises(ValueError, match="pile"):
        OracleSearch(8, pile="open")


@pytest.fixture(scope="module")
def labels() -> Labels:
    return label(POLICY, seed=3, rounds=2, playouts=12)


def test_labels_are_seeded_and_each_row_is_a_choice_the_policy_made(labels: Labels) -> None:
    again = label(POLICY, seed=3, rounds=2, playouts=12)
    assert np.array_equal(labels.values, again.values, equal_nan=True)
    assert np.array_equal(labels.observation, again.observation)
    rows = labels.meta["rows"]
    assert rows == len(labels.policy) > 0 and labels.meta["rounds"] == 2
    legal = labels.mask == 1
    assert (legal.sum(axis=1) >= 2).all()  # only decisions with a choice
    assert legal[np.arange(rows), labels.policy.astype(int)].all()
    assert np.isfinite(labels.values[legal]).all() and np.isnan(labels.values[~legal]).all()
    # The policy's own action on its observation, as it played.
    agent = PPOAgent.load(POLICY)
    assert (agent.choose(labels.observation, labels.mask) == labels.policy).all()
    adv = advantages(labels)
    assert np.allclose((adv * legal).sum(axis=1), 0.0, atol=1e-5) and (adv[~legal] == 0).all()


def test_labelling_stops_at_the_rows_a_file_may_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    import training.tools.oracle_distil as tool

    monkeypatch.setattr(tool, "MAX_ROWS", 5)
    few = label(POLICY, seed=3, rounds=2, playouts=12)
    assert few.meta["rows"] == len(few.policy) == 5 and few.meta["rounds"] == 1


def test_labels_files_read_back_as_written_and_damaged_ones_are_refused(labels: Labels, tmp_path: Path) -> None:
    path = tmp_path / "labels.safetensors"
    write_labels(labels, path)
    back = read_labels(path)
    assert back.meta == labels.meta
    for name in ("observation", "mask", "policy"):
        assert np.array_equal(getattr(back, name), getattr(labels, name))
    with pytest.raises(CheckpointError, match="not an oracle labels file"):
        read_labels(POLICY)
    bad = labels.policy.copy()
    bad[0] = np.flatnonzero(labels.mask[0] == 0)[0]  # an illegal action
    write_labels(Labels(labels.observation, labels.mask, bad, labels.values, labels.meta), path)
    with pytest.raises(CheckpointError, match="legal"):
        read_labels(path)
    write_labels(Labels(labels.observation, labels.mask, labels.policy, labels.values,
                        {**labels.meta, "rows": 10**9}), path)
    with pytest.raises(CheckpointError, match="rows"):  # refused from the header, before a tensor is read
        read_labels(path)


def test_the_fit_moves_the_policy_to_the_action_the_values_favour(labels: Labels) -> None:
    pytest.importorskip("torch")
    rows = len(labels.policy)
    favoured = np.array([np.flatnonzero((labels.mask[i] == 1) & (np.arange(80) != labels.policy[i]))[0]
                         for i in range(rows)])
    values = np.where(labels.mask == 1, 0.0, np.nan).astype(np.float32)
    values[np.arange(rows), favoured] = 1.0
    target = Labels(labels.observation, labels.mask, labels.policy, values, labels.meta)
    unchanged = fit(POLICY, [target], epochs=0)
    tensors, _ = read_checkpoint(POLICY)
    assert all(np.array_equal(unchanged[k], tensors[k]) for k in tensors)
    lines: list[str] = []
    moved = fit(POLICY, [target], temperature=0.002, epochs=30, lr=1e-3, log=lines.append)
    agent = PPOAgent(moved, read_checkpoint(POLICY)[1])
    chosen = agent.choose(labels.observation, labels.mask)
    assert (chosen != labels.policy).mean() > 0.8  # the favoured action is never the one the policy chose
    assert (chosen == favoured).mean() > 0.8
    assert lines[0].startswith(f"decisions {rows}") and len(lines) == 31


def test_the_command_line_refuses_bad_options_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["label", "--policy", POLICY, "--seed", "1", "--rounds", "0", "--out", str(tmp_path / "x")]) == 2
    assert "rounds must be 1 to" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert main(["fit", "--policy", POLICY, "--out", str(tmp_path / "y"), POLICY]) == 2
    assert "not an oracle labels file" in capsys.readouterr().err
    assert main(["label", "--policy", str(tmp_path / "none"), "--seed", "1", "--rounds", "1",
                 "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "y").exists()  # nothing written on a refusal


def test_the_command_line_labels_and_fits_a_policy_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    labels_file, out = tmp_path / "l.safetensors", tmp_path / "tuned.safetensors"
    assert main(["label", "--policy", POLICY, "--seed", "4", "--rounds", "1", "--playouts", "6",
                 "--out", str(labels_file)]) == 0
    made = read_labels(labels_file)
    assert f"{made.meta['rows']} decisions" in capsys.readouterr().out and made.meta["rounds"] == 1
    assert main(["fit", "--policy", POLICY, "--out", str(out), "--epochs", "1", str(labels_file)]) == 0
    tuned = PPOAgent.load(out)
    assert tuned.metadata["name"] == "tuned" and tuned.metadata["hidden"] == read_checkpoint(POLICY)[1]["hidden"]
