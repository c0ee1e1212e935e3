"""Ray RLlib: the env keyed for the action-masking RLModule, self-play PPO on a local Ray, export.

Needs the ``rllib`` extra; skipped, with the reason, where Ray is not installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[rllib]')")
pytest.importorskip("ray.rllib", reason="Ray is installed without RLlib (pip install -e '.[rllib]')")
torch = pytest.importorskip("torch", reason="torch is not installed")

from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

import uno_env  # noqa: E402
from agents import PPOAgent  # noqa: E402
from agents.tournament import evaluate  # noqa: E402
from training.rllib import trainer as rllib  # noqa: E402
from uno_env.core import Rules  # noqa: E402
from uno_env.observation import NUM_ACTIONS, observation_size  # noqa: E402

pytestmark = pytest.mark.slow
CONFIG = Path(__file__).resolve().parent.parent / "configs" / "rllib" / "self_play.yaml"


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_pettingzoo_env_keyed_for_the_masking_module_passes_rllibs_checker() -> None:
    env = PettingZooEnv(rllib.rllib_observations(uno_env.env(num_players=3, episode="round", max_turns=200)))
    check_multiagent_environments(env)
    obs, _ = env.reset(seed=1)
    (agent, first), = obs.items()
    assert set(first) == {"observations", "action_mask"} and first["action_mask"].dtype == np.float32
    assert env.observation_space[agent].contains(first)


def test_self_play_env_seats_roles_and_baselines_and_passes_the_checker() -> None:
    env = rllib.SelfPlayEnv.make({"num_players": 4, "max_players": 4, "max_turns": 300, "seed": 3,
                                  "opponents": {"snapshot": 1.0, "rule": 1.0}})
    check_multiagent_environments(env)
    roles_seen, lengths = set(), []
    for episode in range(6):
        obs, _ = env.reset(seed=episode)
        assert set(env.agents) >= {rllib.LEARNER} and set(obs) <= set(env.agents)
        roles_seen.update(env.agents)
        steps = 0
        while True:
            (role, observation), = obs.items()
            legal = np.flatnonzero(observation["action_mask"])
            obs, rewards, terminated, truncated, _ = env.step({role: int(legal[0])})
            steps += 1
            if terminated["__all__"] or truncated["__all__"]:
                assert set(obs) == set(env.agents) and set(rewards) == set(env.agents)  # every role's final reward
                break
        lengths.append(steps)
    assert roles_seen == {rllib.LEARNER, "opponent_1", "opponent_2", "opponent_3"}
    assert env.reset(seed=2)[0].keys() == env.reset(seed=2)[0].keys()


def test_settings_validate_and_name_the_bad_key(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown setting"):
        rllib.load_settings(None, ["num_runners=2"])
    with pytest.raises(ValueError, match="opponents"):
        rllib.load_settings(None, ["opponents={snapshot: 0}"])
    with pytest.raises(ValueError):
        rllib.load_settings(None, ["opponents={'os:system': 1}"])  # only registered agents from a file
    config = tmp_path / "rllib.yaml"
    config.write_text("num_env_runners: 2\naddress: auto\niterations: 3\n")
    settings = rllib.load_settings(str(config), ["iterations=5"])
    assert (settings.num_env_runners, settings.address, settings.iterations) == (2, "auto", 5)


def test_a_few_iterations_on_local_ray_train_snapshot_and_export(local_ray, tmp_path) -> None:
    settings = rllib.load_settings(str(CONFIG), [
        "iterations=2", "train_batch_size=600", "minibatch_size=200", "num_epochs=1", "hidden=[32, 32]",
        "num_env_runners=1", "snapshots=2", "snapshot_every=1", f"out={tmp_path}", "max_turns=400",
    ])
    algorithm = rllib.build_algorithm(settings)
    try:
        lines: list[str] = []
        path = rllib.train(algorithm, settings, log=lines.append)
        learned, hidden = rllib.actor_tensors(rllib.learner_weights(algorithm))
        assert hidden == [32, 32]
        # The last iteration copied the learner into snapshot_1: on the learners, the local and the remote runner.
        snapshot, _ = rllib.actor_tensors(rllib.learner_weights(algorithm, "snapshot_1"))
        assert all(np.array_equal(learned[k], snapshot[k]) for k in learned)
        runners = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: rllib.actor_tensors(runner.module["snapshot_1"].state_dict())[0])
        assert len(runners) == 2 and all(np.allclose(learned[k], r[k].numpy() if hasattr(r[k], "numpy") else r[k])
                                         for r in runners for k in learned)
        learner = algorithm.get_module(rllib.LEARNER)  # the local env runner's copy, synced after each update
        obs = np.random.default_rng(0).random((5, observation_size(10)), dtype=np.float32)
        mask = np.zeros((5, NUM_ACTIONS), np.float32)
        mask[:, [3, 17, 55]] = 1
        with torch.no_grad():
            out = learner.forward_inference({"obs": {"observations": torch.from_numpy(obs),
                                                     "action_mask": torch.from_numpy(mask)}})
        torch_logits = out["action_dist_inputs"].numpy()
    finally:
        algorithm.stop()
    assert len(lines) == 3 and '"iteration": 2' in lines[1] and (tmp_path / "progress.jsonl").exists()
    agent = PPOAgent.load(path)
    assert agent.metadata["config"]["trainer"] == "training.rllib"
    np.testing.assert_allclose(agent.logits(obs)[:, [3, 17, 55]], torch_logits[:, [3, 17, 55]], rtol=1e-4, atol=1e-5)
    assert list(agent.choose(obs, mask)) == list(torch_logits.argmax(axis=1))
    result = evaluate([f"ppo:path={path}", "random"], Rules(num_players=2), games=10, seed=1)
    assert len(result.records) >= 10 and result.labels[0].startswith("ppo")


def test_same_settings_and_seed_train_the_same_weights(local_ray, tmp_path) -> None:
    """Two runs of one iteration with one remote env runner end with identical learner weights."""
    finals = []
    for run in range(2):
        settings = rllib.load_settings(None, [
            "iterations=1", "train_batch_size=300", "minibatch_size=100", "num_epochs=1", "hidden=[16]",
            "num_env_runners=1", "seed=11", f"out={tmp_path / str(run)}", "max_turns=300",
        ])
        algorithm = rllib.build_algorithm(settings)
        try:
            rllib.train(algorithm, settings, log=lambda _line: None)
            finals.append(rllib.learner_weights(algorithm))
        finally:
            algorithm.stop()
    assert finals[0].keys() == finals[1].keys()
    assert all(np.array_equal(finals[0][k], finals[1][k]) for k in finals[0])
