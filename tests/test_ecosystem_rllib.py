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


def test_the_config_is_the_shared_schema_and_refusals_name_the_key(tmp_path) -> None:
    from training.run.config import ConfigError

    with pytest.raises(ConfigError, match="unknown key num_runners"):
        rllib.rllib_config(None, ["num_runners=2"])
    with pytest.raises(ConfigError, match=r"unknown key lr .* is now ppo\.learning_rate"):
        rllib.rllib_config(None, ["lr=0.1"])  # the former flat settings name the key that replaced them
    with pytest.raises(ConfigError, match=r"rllib\.opponents: needs a weight above 0"):
        rllib.rllib_config(None, ["rllib.opponents={snapshot: 0}"])
    with pytest.raises(ConfigError, match=r"rllib\.opponents: .*may not import"):
        rllib.rllib_config(None, ["rllib.opponents={'os:system': 1}"])  # only registered agents from a file
    config = tmp_path / "rllib.yaml"
    config.write_text("rllib:\n  num_env_runners: 2\n  address: auto\n  iterations: 3\n")
    settings = rllib.rllib_config(str(config), ["rllib.iterations=5"])
    assert (settings.rllib.num_env_runners, settings.rllib.address, settings.rllib.iterations) == (2, "auto", 5)


def test_ppo_settings_keep_their_meaning_on_rllib() -> None:
    """ppo.* maps onto RLlib's names; clip_range, vf_coef and max_grad_norm included (by global norm)."""
    config = rllib.rllib_config(None, ["ppo.learning_rate=0.001", "ppo.gae_lambda=0.9", "ppo.ent_coef=0.02",
                                       "ppo.clip_range=0.1", "ppo.vf_coef=0.7", "ppo.max_grad_norm=2.0",
                                       "ppo.batch_size=128", "ppo.n_epochs=3", "rllib.train_batch_size=1024"])
    ppo = rllib.build_config(config)
    assert (ppo.lr, ppo.lambda_, ppo.entropy_coeff, ppo.clip_param, ppo.vf_loss_coeff, ppo.grad_clip,
            ppo.grad_clip_by) == (0.001, 0.9, 0.02, 0.1, 0.7, 2.0, "global_norm")
    assert (ppo.minibatch_size, ppo.num_epochs, ppo.train_batch_size_per_learner) == (128, 3, 1024)


def test_a_few_iterations_on_local_ray_train_snapshot_and_export(local_ray, tmp_path) -> None:
    settings = rllib.rllib_config(str(CONFIG), [
        "rllib.iterations=2", "rllib.train_batch_size=600", "ppo.batch_size=200", "ppo.n_epochs=1",
        "ppo.hidden=[32, 32]", "rllib.num_env_runners=1", "rllib.snapshots=2", "rllib.snapshot_every=1",
        f"run_dir={tmp_path}", "env.max_turns=400",
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
    assert agent.metadata["config"]["trainer"] == "rllib" and agent.metadata["config"]["rllib"]["iterations"] == 2
    np.testing.assert_allclose(agent.logits(obs)[:, [3, 17, 55]], torch_logits[:, [3, 17, 55]], rtol=1e-4, atol=1e-5)
    assert list(agent.choose(obs, mask)) == list(torch_logits.argmax(axis=1))
    result = evaluate([f"ppo:path={path}", "random"], Rules(num_players=2), games=10, seed=1)
    assert len(result.records) >= 10 and result.labels[0].startswith("ppo")


def test_same_settings_and_seed_train_the_same_weights(local_ray, tmp_path) -> None:
    """Two runs of one iteration with one remote env runner end with identical learner weights."""
    finals = []
    for run in range(2):
        settings = rllib.rllib_config(None, [
            "rllib.iterations=1", "rllib.train_batch_size=300", "ppo.batch_size=100", "ppo.n_epochs=1",
            "ppo.hidden=[16]", "rllib.num_env_runners=1", "seed=11", f"run_dir={tmp_path / str(run)}",
            "env.max_turns=300",
        ])
        algorithm = rllib.build_algorithm(settings)
        try:
            rllib.train(algorithm, settings, log=lambda _line: None)
            finals.append(rllib.learner_weights(algorithm))
        finally:
            algorithm.stop()
    assert finals[0].keys() == finals[1].keys()
    assert all(np.array_equal(finals[0][k], finals[1][k]) for k in finals[0])
