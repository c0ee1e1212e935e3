"""PPOAgent and the shareable checkpoint format: numpy play matches the torch policy, bad files fail typed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import PPOAgent
from agents.ppo_agent import (
    FORMAT_VERSION,
    METADATA_KEY,
    SHIPPED_DIR,
    CheckpointError,
    CheckpointVersionError,
    read_checkpoint,
    write_checkpoint,
)
from agents.registry import make_agent
from agents.tournament import evaluate
from uno_env.core import EDITIONS, Rules
from uno_env.observation import COMPATIBLE_OBSERVATION_VERSIONS, NUM_ACTIONS, OBSERVATION_VERSION, observation_size

ROOT = Path(__file__).resolve().parent.parent


def _random_checkpoint(path: Path, hidden: tuple[int, ...] = (16, 8), activation: str = "tanh", seed: int = 0,
                       **meta_overrides: object) -> Path:
    rng = np.random.default_rng(seed)
    size = observation_size(10)
    tensors = {"obs_scale": rng.uniform(0.01, 1, size).astype(np.float32)}
    width = size
    for i, h in enumerate(hidden):
        tensors[f"hidden.{i}.weight"] = rng.normal(0, 0.3, (h, width)).astype(np.float32)
        tensors[f"hidden.{i}.bias"] = rng.normal(0, 0.1, h).astype(np.float32)
        width = h
    tensors["action.weight"] = rng.normal(0, 0.3, (NUM_ACTIONS, width)).astype(np.float32)
    tensors["action.bias"] = rng.normal(0, 0.1, NUM_ACTIONS).astype(np.float32)
    meta = {"max_players": 10, "observation_size": size, "hidden": list(hidden), "activation": activation,
            "editions": list(EDITIONS), "num_players": list(range(2, 11)), "steps": 0, "seed": seed, "config": {}}
    meta.update(meta_overrides)
    write_checkpoint(path, tensors, meta)
    return path


def _raw_write(path: Path, tensors: dict[str, np.ndarray], meta: dict[str, object]) -> None:
    from safetensors.numpy import save_file

    save_file(tensors, str(path), metadata={METADATA_KEY: json.dumps(meta)})


@pytest.mark.slow
def test_numpy_forward_matches_the_torch_policy_logits_and_masked_argmax(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from training.run.config import config_from_dict
    from training.run.rundir import checkpoint_metadata
    from training.sb3.policy import export_policy, policy_kwargs
    from training.sb3.pool import make_training_env

    for activation in ("tanh", "relu"):
        config = config_from_dict({"env": {"edition": "all", "num_players": [2, 3, 4]},
                                   "ppo": {"hidden": [32, 16], "activation": activation}})
        env = make_training_env(config)
        model = MaskablePPO("MlpPolicy", env, policy_kwargs=policy_kwargs([32, 16], activation, 10), n_steps=64,
                            batch_size=64, seed=0, device="cpu")
        with torch.no_grad():  # random, non-zero weights everywhere (SB3 starts the action head near zero)
            for param in model.policy.parameters():
                param.add_(torch.randn_like(param) * 0.2)
        path = tmp_path / f"{activation}.safetensors"
        export_policy(model.policy, path, checkpoint_metadata(config, 0))
        agent = PPOAgent.load(path)
        observations, masks = [], []
        obs, info = env.reset(seed=1)
        while len(observations) < 300:
            observations.append(obs)
            masks.append(info["action_mask"])
            legal = np.flatnonzero(info["action_mask"])
            obs, _, terminated, truncated, info = env.step(int(legal[len(observations) % len(legal)]))
            if terminated or truncated:
                obs, info = env.reset()
        batch, mask = np.array(observations), np.array(masks)
        with torch.no_grad():
            t = torch.as_tensor(batch)
            torch_logits = model.policy.action_net(
                model.policy.mlp_extractor.forward_actor(model.policy.extract_features(t))).numpy()
        np.testing.assert_allclose(agent.logits(batch), torch_logits, rtol=1e-4, atol=1e-4)
        torch_actions, _ = model.predict(batch, action_masks=mask, deterministic=True)
        assert np.array_equal(agent.choose(batch, mask), torch_actions)
        assert all(mask[i, a] for i, a in enumerate(agent.choose(batch, mask)))
        singles = [agent.act({"observation": o, "action_mask": m}, {}) for o, m in zip(batch, mask, strict=True)]
        assert np.array_equal(singles, torch_actions)


@pytest.mark.slow
def test_ppo_agent_plays_only_legal_actions_in_every_edition_and_table_size(tmp_path: Path) -> None:
    path = _random_checkpoint(tmp_path / "p.safetensors")
    for deterministic in (True, False):
        agent = PPOAgent.load(path, deterministic=deterministic, seed=3)
        for edition in EDITIONS:
            for n in (2, 5, 10):
                # the harness raises IllegalActionError on any illegal action
                result = evaluate([agent] + ["random"] * (n - 1), Rules(edition=edition, num_players=n), n,
                                  max_decisions=3000)
                assert result.games == n


def test_sampled_play_follows_the_masked_softmax(tmp_path: Path) -> None:
    agent = PPOAgent.load(_random_checkpoint(tmp_path / "p.safetensors"), deterministic=False, seed=0)
    obs = np.zeros((1, observation_size(10)), np.float32)
    mask = np.zeros((1, NUM_ACTIONS), np.int8)
    mask[0, [3, 55, 60]] = 1
    logits = agent.logits(obs)[0, [3, 55, 60]]
    expected = np.exp(logits - logits.max())
    expected /= expected.sum()
    draws = np.concatenate([agent.choose(np.repeat(obs, 1000, 0), np.repeat(mask, 1000, 0)) for _ in range(4)])
    assert set(draws) <= {3, 55, 60}
    observed = np.array([(draws == a).mean() for a in (3, 55, 60)])
    assert np.abs(observed - expected).max() < 0.03


def test_load_rejects_another_observation_version_with_a_typed_error(tmp_path: Path) -> None:
    good = _random_checkpoint(tmp_path / "good.safetensors")
    tensors, meta = read_checkpoint(good)
    for key, value in (("observation_version", OBSERVATION_VERSION + 1), ("format_version", FORMAT_VERSION + 1),
                       ("num_actions", NUM_ACTIONS - 9)):
        bad = tmp_path / f"{key}.safetensors"
        _raw_write(bad, tensors, {**meta, key: value})
        with pytest.raises(CheckpointVersionError, match=key):
            PPOAgent.load(bad)


def test_load_rejects_damaged_and_foreign_files_with_a_typed_error(tmp_path: Path) -> None:
    good = _random_checkpoint(tmp_path / "good.safetensors")
    data = good.read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) // 2])
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x00not a checkpoint at all" * 10)
    tensors, meta = read_checkpoint(good)
    no_meta = tmp_path / "no_meta.safetensors"
    from safetensors.numpy import save_file

    save_file(tensors, str(no_meta))
    missing = tmp_path / "missing_tensor.safetensors"
    _raw_write(missing, {k: v for k, v in tensors.items() if k != "action.bias"}, meta)
    wrong_shape = tmp_path / "wrong_shape.safetensors"
    _raw_write(wrong_shape, {**tensors, "hidden.0.bias": np.zeros(3, np.float32)}, meta)
    nan = tmp_path / "nan.safetensors"
    _raw_write(nan, {**tensors, "action.bias": np.full(NUM_ACTIONS, np.nan, np.float32)}, meta)
    for path in (truncated, garbage, no_meta, missing, wrong_shape, nan):
        with pytest.raises(CheckpointError):
            PPOAgent.load(path)
    with pytest.raises(FileNotFoundError):
        PPOAgent.load(tmp_path / "absent.safetensors")


def test_play_needs_neither_torch_nor_stable_baselines(tmp_path: Path) -> None:
    path = _random_checkpoint(tmp_path / "p.safetensors")
    script = (
        "import sys\n"
        "for name in ('torch', 'stable_baselines3', 'sb3_contrib'): sys.modules[name] = None\n"
        "from agents import PPOAgent\n"
        "from agents.tournament import evaluate\n"
        "from uno_env.core import Rules\n"
        f"agent = PPOAgent.load({str(path)!r})\n"
        "r = evaluate([agent, 'rule', 'rule'], Rules(num_players=3), 3, max_decisions=3000)\n"
        "print('games', r.games)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "games 3" in out.stdout


def test_registry_builds_a_ppo_agent_from_a_path(tmp_path: Path) -> None:
    path = _random_checkpoint(tmp_path / "p.safetensors")
    agent = make_agent(f"ppo:path={path},deterministic=false")
    assert isinstance(agent, PPOAgent) and not agent.deterministic


@pytest.mark.skipif(not (SHIPPED_DIR / "universal.safetensors").exists(), reason="no shipped checkpoint yet")
def test_shipped_universal_checkpoint_covers_every_edition_and_table_size() -> None:
    agent = make_agent("ppo")
    assert isinstance(agent, PPOAgent)
    assert agent.metadata["editions"] == list(EDITIONS)
    assert agent.metadata["num_players"] == list(range(2, 11))
    assert agent.metadata["observation_version"] in COMPATIBLE_OBSERVATION_VERSIONS
    assert (SHIPPED_DIR / "universal.safetensors").stat().st_size < 2_000_000  # 256x256 float32: 1.2 MB


# ---------------------------------------------------------------------- hostile weights (issue 13 item 6)
def _huge_checkpoint(path: Path, scale: float, activation: str, seed: int) -> Path:
    """Finite float32 weights of magnitude ``scale``: the logits overflow to +-inf and NaN."""
    rng = np.random.default_rng(seed)
    size = observation_size(10)
    hidden = [32, 32]
    tensors = {"obs_scale": np.ones(size, np.float32)}
    width = size
    for i, h in enumerate(hidden):
        tensors[f"hidden.{i}.weight"] = (rng.choice([-1, 1], (h, width)) * scale).astype(np.float32)
        tensors[f"hidden.{i}.bias"] = (rng.choice([-1, 1], h) * scale).astype(np.float32)
        width = h
    tensors["action.weight"] = (rng.choice([-1, 1], (NUM_ACTIONS, width)) * scale).astype(np.float32)
    tensors["action.bias"] = (rng.choice([-1, 1], NUM_ACTIONS) * scale).astype(np.float32)
    meta = {"max_players": 10, "observation_size": size, "hidden": hidden, "activation": activation,
            "editions": ["classic"], "num_players": [2], "steps": 0, "seed": seed, "config": {}}
    write_checkpoint(path, tensors, meta)
    return path


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("scale", [1e4, 1e20, 3e38])
def test_huge_finite_weights_never_choose_a_masked_action_sampling_or_argmax(
        tmp_path: Path, scale: float, activation: str) -> None:
    path = _huge_checkpoint(tmp_path / "huge.safetensors", scale, activation, seed=int(np.log10(scale)))
    rng = np.random.default_rng(7)
    obs = rng.uniform(0, 5, (400, observation_size(10))).astype(np.float32)
    masks = (rng.random((400, NUM_ACTIONS)) < rng.uniform(0.01, 0.5, (400, 1))).astype(np.int8)
    masks[np.arange(400), rng.integers(NUM_ACTIONS, size=400)] = 1  # at least one legal action per row
    with np.errstate(all="ignore"):
        raw = PPOAgent.load(path).logits(obs)
    if activation == "relu" and scale > 1e10:
        assert not np.isfinite(raw).all()  # the logits really overflow (tanh saturates: finite, far apart)
    for deterministic in (True, False):
        agent = PPOAgent.load(path, deterministic=deterministic, seed=1)
        probs = agent.probabilities(obs, masks)
        assert np.isfinite(probs).all() and (probs[masks == 0] == 0).all()
        np.testing.assert_allclose(probs.sum(axis=1), 1.0)
        for _ in range(3):
            chosen = agent.choose(obs, masks)
            assert masks[np.arange(400), chosen].all()
        singles = [agent.act({"observation": o, "action_mask": m}, {}) for o, m in zip(obs[:100], masks[:100],
                                                                                        strict=True)]
        assert all(m[a] for m, a in zip(masks, singles, strict=False))


def test_overflowed_logits_are_taken_in_the_limit(tmp_path: Path) -> None:
    agent = PPOAgent.load(_random_checkpoint(tmp_path / "p.safetensors"), deterministic=False, seed=0)
    logits = np.zeros((3, NUM_ACTIONS), np.float32)
    logits[0, [1, 2, 3]] = [np.inf, np.inf, 5.0]   # two +inf among the legal: uniform over them
    logits[0, 4] = np.inf                          # an illegal +inf never counts
    logits[1, [1, 2, 3]] = [-np.inf, np.nan, -np.inf]  # nothing usable: uniform over the legal
    logits[2, [1, 2, 3]] = [1e30, -1e30, np.nan]   # finite but far apart: the larger takes it all
    agent.logits = lambda observations: logits  # type: ignore[method-assign]
    masks = np.zeros((3, NUM_ACTIONS), np.int8)
    masks[:, [1, 2, 3]] = 1
    probs = agent.probabilities(np.zeros((3, observation_size(10)), np.float32), masks)
    np.testing.assert_allclose(probs[:, [1, 2, 3]], [[0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3], [1, 0, 0]])
    assert probs.sum() == pytest.approx(3.0)
