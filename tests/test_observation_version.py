"""Observation versions 2 (the rule 3.4 ruling) and 3 (``drew_on``), and what older checkpoints read.

Version 2 changed the meaning of the ``phase`` and ``drawn_card`` entries: ``play_drawn`` now
follows every turn draw, a forced ``keep`` of a card that does not play included. The claim
that lets version 1 checkpoints load (``COMPATIBLE_OBSERVATION_VERSIONS``) is tested here: the
new observations come only at decisions with one legal action, so at every decision a policy
really makes, the entries mean what they meant in version 1. Version 3 appended the ``drew_on``
slice: a version 1 or 2 checkpoint is widened as it loads (a zero weight column per new entry),
so it computes from a version 3 vector exactly what it computed from the version 2 prefix."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from agents import PPOAgent
from agents.ppo_agent import METADATA_KEY, CheckpointVersionError, read_checkpoint, widen_first_layer
from tests.test_ppo_agent import _random_checkpoint, _raw_write
from uno_env.core import EDITIONS, Game, Phase, Rules
from uno_env.core.actions import KEEP
from uno_env.observation import (
    COMPATIBLE_OBSERVATION_VERSIONS,
    OBSERVATION_VERSION,
    ObservationVersionError,
    action_mask,
    observation_size,
    observe,
    split_observation,
    widening,
    widening_of_growth,
)


def test_version_3_is_current_and_version_1_and_2_checkpoints_stay_readable() -> None:
    assert OBSERVATION_VERSION == 3
    assert COMPATIBLE_OBSERVATION_VERSIONS == (1, 2, 3)
    for m in (2, 4, 10):
        assert observation_size(m, 1) == observation_size(m, 2) == observation_size(m) - 17 * m


@pytest.mark.parametrize("edition", list(EDITIONS))
@pytest.mark.parametrize("until_playable", [False, True])
def test_rule_3_4_new_play_drawn_observations_come_only_with_one_legal_action(edition: str,
                                                                              until_playable: bool) -> None:
    rules = Rules(edition=edition, num_players=3, draw_until_playable=until_playable)
    rng = random.Random(11)
    seen = {"choice": 0, "forced keep": 0}
    for seed in range(6):
        game = Game(rules, seed=seed)
        while not game.is_round_over and sum(seen.values()) < 400:
            legal = game.legal_actions()
            seat = game.current_player
            assert seat is not None
            if game.phase == Phase.PLAY_DRAWN:
                drawn = game.state.drawn_card
                parts = split_observation(observe(game, seat))
                assert np.flatnonzero(parts["phase"]).tolist() == [Phase.PLAY_DRAWN]
                assert np.flatnonzero(parts["drawn_card"]).tolist() == [drawn]
                if [int(a) for a in legal] == [KEEP]:
                    seen["forced keep"] += 1  # version 2's new observation: nothing to choose
                    assert not until_playable
                else:  # a decision a policy makes: the drawn card plays, as in version 1
                    assert int(legal[0]) == drawn
                    seen["choice"] += 1
                    if until_playable:
                        assert len(legal) == 1  # 7.4: it must be played
                    else:
                        assert [int(a) for a in legal] == [drawn, KEEP]
                assert action_mask(game, seat).sum() == len(legal)
            game.step(rng.choice(legal))
    assert seen["choice"] > 10 and (seen["forced keep"] > 10 or until_playable)


def _forward(tensors: dict[str, np.ndarray], x: np.ndarray, activation: str) -> np.ndarray:
    """The policy's logits written out plainly (the checkpoint layout of ``agents.ppo_agent``)."""
    x = x * tensors["obs_scale"]
    i = 0
    while f"hidden.{i}.weight" in tensors:
        x = x @ tensors[f"hidden.{i}.weight"].T + tensors[f"hidden.{i}.bias"]
        x = np.maximum(x, 0.0) if activation == "relu" else np.tanh(x)
        i += 1
    return x @ tensors["action.weight"].T + tensors["action.bias"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("old_version", [1, 2])
def test_an_older_checkpoint_reads_the_version_2_prefix_of_a_version_3_vector(tmp_path: Path, old_version: int) -> None:
    tensors, meta = read_checkpoint(_random_checkpoint(tmp_path / "v3.safetensors"))
    assert meta["observation_version"] == 3
    size = observation_size(meta["max_players"], 2)
    old = {**tensors, "obs_scale": tensors["obs_scale"][:size].copy(),
           "hidden.0.weight": np.ascontiguousarray(tensors["hidden.0.weight"][:, :size])}
    path = tmp_path / "old.safetensors"
    _raw_write(path, old, {**meta, "observation_version": old_version, "observation_size": size})
    agent = PPOAgent.load(path)
    assert agent.metadata["widened_from_observation_version"] == old_version
    assert agent.metadata["observation_version"] == 3
    game = Game(Rules(num_players=4), seed=5)
    observations = []
    rng = random.Random(5)
    while not game.is_round_over and len(observations) < 80:
        observations.append(observe(game, game.current_player))
        game.step(rng.choice(game.legal_actions()))
    batch = np.stack(observations)
    assert batch[:, size:].any()  # the draw evidence is there, and the old policy ignores it
    np.testing.assert_allclose(agent.logits(batch), _forward(old, batch[:, :size], meta["activation"]),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(CheckpointVersionError, match="observation_size"):  # a v2 label on a v3 layout
        _raw_write(path, tensors, {**meta, "observation_version": old_version})
        PPOAgent.load(path)


@pytest.mark.parametrize("version", [0, 4, True, 1.0, "1", None])
def test_other_observation_versions_are_refused_naming_the_readable_ones(tmp_path: Path, version: object) -> None:
    tensors, meta = read_checkpoint(_random_checkpoint(tmp_path / "good.safetensors"))
    bad = tmp_path / "bad.safetensors"
    _raw_write(bad, tensors, {**meta, "observation_version": version})
    with pytest.raises(CheckpointVersionError, match=r"observation_version .* reads observation_version 1 or 2 or 3"):
        PPOAgent.load(bad)


def test_every_shipped_checkpoint_is_of_a_readable_version_and_loads() -> None:
    from agents.registry import shipped_checkpoint_files

    shipped = shipped_checkpoint_files()  # the actors, not critics
    assert len(shipped) >= 4
    for path in shipped:
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as handle:
            version = json.loads((handle.metadata() or {})[METADATA_KEY])["observation_version"]
        assert version in COMPATIBLE_OBSERVATION_VERSIONS, path.name
        agent = PPOAgent.load(path)
        assert agent.metadata["observation_version"] == OBSERVATION_VERSION
        assert agent.metadata.get("widened_from_observation_version", OBSERVATION_VERSION) == version


@pytest.mark.parametrize("max_players", [2, 4, 10])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_widening_inserts_at_the_older_vectors_end_what_this_version_added(max_players: int, version: int) -> None:
    """``widening``: the one rule checkpoints, the critic and resume states widen by; a first layer with
    zero columns there computes on this version's vector bit for bit what it did on the older one."""
    at, extra = widening(max_players, version)
    assert (at, extra) == widening(max_players, version, OBSERVATION_VERSION)
    assert at == observation_size(max_players, version)
    assert at + extra == observation_size(max_players)
    assert (extra == 0) == (version == OBSERVATION_VERSION)
    if extra:
        assert widening_of_growth(extra, version) == (max_players, at)
    rng = np.random.default_rng(version)
    weight = rng.standard_normal((8, at)).astype(np.float32)
    wide = widen_first_layer({"hidden.0.weight": weight, "obs_scale": np.full(at, 2, np.float32)}, "obs_scale", at, extra)
    assert wide["hidden.0.weight"].shape == (8, observation_size(max_players))
    assert np.array_equal(wide["hidden.0.weight"][:, :at], weight) and not wide["hidden.0.weight"][:, at:].any()
    assert np.array_equal(wide["obs_scale"], np.r_[np.full(at, 2), np.ones(extra)])
    old = rng.standard_normal((4, at)).astype(np.float32)
    new = np.concatenate([old, rng.standard_normal((4, extra)).astype(np.float32)], axis=1)  # the new entries
    # BLAS blocks its sums by the width, so bit for bit is the correctly rounded dot product (fsum of
    # the exact float64 products); the float32 product agrees to rounding
    def exact(x: np.ndarray, w: np.ndarray) -> list[float]:
        return [math.fsum(row.astype(np.float64) * unit.astype(np.float64)) for row in x for unit in w]
    assert exact(new, wide["hidden.0.weight"]) == exact(old, weight)
    np.testing.assert_allclose(new @ wide["hidden.0.weight"].T, old @ weight.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("version", [0, 4, True, "2", None])
def test_widening_from_an_unknown_version_is_refused_naming_the_readable_ones(version: object) -> None:
    with pytest.raises(ObservationVersionError, match=r"from_version: observation version must be one of \(1, 2, 3\)"):
        widening(4, version)  # type: ignore[arg-type]
    with pytest.raises(ObservationVersionError, match=r"to_version: observation version must be one of \(1, 2, 3\)"):
        widening(4, 1, version)  # type: ignore[arg-type]


def test_widening_to_an_older_version_is_refused() -> None:
    assert widening(4, 1, 2) == (observation_size(4, 1), 0)  # version 2 kept version 1's layout
    with pytest.raises(ObservationVersionError, match="to_version must be at least from_version"):
        widening(4, 3, 2)


@pytest.mark.parametrize("extra", [0, -34, 5, 33, 17 * 11, True])
def test_a_growth_no_table_size_makes_is_refused_naming_those_that_exist(extra: int) -> None:
    with pytest.raises(ObservationVersionError, match=r"by .* inputs; the growths are \[34, 51, .*, 170\]"):
        widening_of_growth(extra, 2)
