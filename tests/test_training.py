"""Training: configs fail fast naming the key, truncation reaches SB3, a smoke run writes a playable checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from agents import PPOAgent, RuleAgent  # noqa: E402
from agents.tournament import evaluate  # noqa: E402
from training.config import ConfigError, config_from_dict, load_config  # noqa: E402
from training.pool import PoolOpponent, make_training_env  # noqa: E402
from training.train import train  # noqa: E402
from uno_env.core import Rules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _smoke_config(run_dir: Path, **top: Any) -> dict[str, Any]:
    return {
        "name": "smoke", "seed": 3, "total_steps": 256, "run_dir": str(run_dir), "checkpoint_every": 128,
        "progress_bar": False, "tensorboard": False,
        "env": {"edition": "all", "num_players": [2, 3, 4], "max_turns": 300},
        "ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "hidden": [16]},
        "pool": {"snapshot_every": 64, "size": 2},
        "eval": {"every": 0, "games": 4, "max_decisions": 300,
                 "matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule"}]},
        **top,
    }


# ---------------------------------------------------------------------- configs
@pytest.mark.parametrize("data, key", [
    ({"ppo": {"learning_rat": 0.1}}, "ppo.learning_rat"),
    ({"totl_steps": 5}, "totl_steps"),
    ({"ppo": {"n_envs": "8"}}, "ppo.n_envs"),
    ({"ppo": {"learning_rate": "fast"}}, "ppo.learning_rate"),
    ({"progress_bar": 1}, "progress_bar"),
    ({"env": {"edition": "uno_flip"}}, "env.edition"),
    ({"env": {"edition": ["classic", "uno_flip"]}}, "env.edition"),
    ({"env": {"num_players": [2, 11]}}, "env.num_players"),
    ({"env": {"rules": {"stackin": True}}}, "env.rules.stackin"),
    ({"env": {"truncation_reward": "loss"}}, "env.truncation_reward"),
    ({"env": {"rules": {"uno_call": "sometimes"}}}, "env.rules.uno_call"),
    ({"pool": {"baselines": ["grandmaster"]}}, "pool.baselines"),
    ({"eval": {"matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule", "seats": 1}]}},
     "eval.matchups[0].seats"),
    ({"ppo": {"n_envs": 3, "n_steps": 10, "batch_size": 7}}, "ppo.batch_size"),
])
def test_bad_config_fails_at_once_naming_the_key(data: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.").replace("[", r"\[")):
        config_from_dict(data)


def test_bad_yaml_config_fails_from_the_command_line_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("env:\n  edition: uno_flip\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", "from uno_env.cli import main; main()", "train", "--config", str(path)],
                         capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2
    assert "env.edition" in out.stderr and "uno_flip" in out.stderr


def test_shipped_configs_load() -> None:
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        config = load_config(path)
        assert config.total_steps > 0 and config.name == path.stem


def test_edition_all_and_table_lists_are_sampled_per_episode() -> None:
    config = config_from_dict({"env": {"edition": "all", "num_players": [2, 3, 4, 5]}})
    env = make_training_env(config)
    seen = set()
    env.reset(seed=0)
    for _ in range(40):
        env.reset()
        seen.add((env.unwrapped.game.rules.edition, env.unwrapped.game.num_players))
    assert {e for e, _ in seen} == set(config.env.editions())
    assert {n for _, n in seen} == {2, 3, 4, 5}


# ---------------------------------------------------------------------- episodes that end
def test_truncation_reaches_sb3_as_timelimit_with_the_terminal_observation() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    config = config_from_dict({"env": {"num_players": 4, "max_turns": 8}, "pool": {"baselines": ["random"]}})
    venv = DummyVecEnv([lambda: make_training_env(config)])
    venv.seed(5)
    obs = venv.reset()
    truncations = 0
    for _ in range(200):
        mask = venv.env_method("action_masks")[0]
        obs, _, dones, infos = venv.step(np.array([int(np.flatnonzero(mask)[0])]))
        if dones[0]:
            info = infos[0]
            assert info["terminal_observation"].shape == obs[0].shape
            if info["outcome"]["truncated"]:
                assert info["TimeLimit.truncated"] is True
                truncations += 1
            else:
                assert info["TimeLimit.truncated"] is False and info["outcome"]["winners"]
    assert truncations > 10


def test_pool_draws_baselines_until_a_snapshot_exists_then_snapshots(tmp_path: Path) -> None:
    from test_ppo_agent import _random_checkpoint

    snap = _random_checkpoint(tmp_path / "snap.safetensors")
    pool = PoolOpponent(["random", "random-uniform"], baseline_share=0.0, latest_share=1.0)
    pool.seed(0)
    info = {"seat": 1, "legal_action_ids": [55]}
    obs = {"observation": np.zeros(839, np.float32), "action_mask": np.eye(80, dtype=np.int8)[55]}
    pool.reset()
    pool.act(obs, info)
    assert pool.assigned[1] in ("random", "random-uniform")
    pool.set_pool([("snap_1", str(snap))])
    pool.reset()
    assert pool.act(obs, info) == 55
    assert pool.assigned == {1: "snap_1"}
    pool.set_pool([("snap_1", str(snap))], self_play=False)
    pool.reset()
    pool.act(obs, info)
    assert pool.assigned[1] in ("random", "random-uniform")


# ---------------------------------------------------------------------- the smoke run
def test_smoke_run_writes_a_checkpoint_that_plays_a_full_game_and_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    config = config_from_dict(_smoke_config(run_dir))
    train(config)
    for name in ("config.yaml", "last.safetensors", "best.safetensors", "best.json", "evals.jsonl",
                 "resume/model.zip", "resume/state.json"):
        assert (run_dir / name).exists(), name
    agent = PPOAgent.load(run_dir / "best.safetensors", deterministic=False, seed=1)
    meta = agent.metadata
    assert meta["seed"] == 3 and meta["config"]["seed"] == 3 and meta["config"]["ppo"]["hidden"] == [16]
    assert meta["editions"] == ["classic", "monster_high", "angry_birds", "masters_of_the_universe"]
    assert meta["num_players"] == [2, 3, 4]
    result = evaluate([agent, RuleAgent()], Rules(num_players=2, target_score=100), 2, unit="game",
                      max_decisions=5000)
    assert result.unfinished == 0 and sum(sum(r.wins) for r in result.records) == 2
    state = json.loads((run_dir / "resume" / "state.json").read_text())
    assert state["steps"] == 256 and 1 <= len(state["snapshots"]) <= 2
    # resume after an "interruption": continue the same run to a larger budget
    train(config_from_dict(_smoke_config(run_dir, total_steps=384)), resume=True)
    state = json.loads((run_dir / "resume" / "state.json").read_text())
    assert state["steps"] == 384
    assert PPOAgent.load(run_dir / "last.safetensors").metadata["steps"] == 384
    with pytest.raises(FileExistsError):
        train(config)  # a fresh run never overwrites an existing one


def test_same_config_and_seed_train_the_same_weights(tmp_path: Path) -> None:
    from agents.ppo_agent import read_checkpoint

    weights = []
    for name in ("a", "b"):
        data = _smoke_config(tmp_path / name, total_steps=256)
        data["eval"]["matchups"] = []  # only the training trajectory matters here
        train(config_from_dict(data))
        tensors, meta = read_checkpoint(tmp_path / name / "last.safetensors")
        assert meta["steps"] == 256
        weights.append(tensors)
    assert all(np.array_equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_truncation_reward_reaches_the_training_env() -> None:
    from training.pool import make_training_env  # noqa: PLC0415

    config = config_from_dict({"env": {"truncation_reward": -1.0}})
    assert config.env.truncation_reward == -1.0
    assert make_training_env(config).env.truncation_reward == -1.0
    assert make_training_env(config_from_dict({})).env.truncation_reward is None
