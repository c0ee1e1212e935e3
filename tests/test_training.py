"""Training: configs fail fast naming the key, truncation reaches SB3, a smoke run writes a playable checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from agents import PPOAgent, RuleAgent  # noqa: E402
from agents.ppo_agent import SHIPPED_DIR  # noqa: E402
from agents.tournament import evaluate  # noqa: E402
from training.cli import train  # noqa: E402
from training.run.config import ConfigError, config_from_dict, load_config  # noqa: E402
from training.sb3.pool import PoolOpponent, make_training_env  # noqa: E402
from training.tools.ship import SHIPPED  # noqa: E402
from uno_env.core import Rules  # noqa: E402
from uno_env.observation import observation_size  # noqa: E402

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
    ({"pool": {"baselines": ["rule", "human"]}}, "pool.baselines"),
    ({"eval": {"matchups": [{"edition": "classic", "num_players": 2, "opponent": "human"}]}}, "eval.matchups"),
    ({"eval": {"matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule", "seats": 1}]}},
     "eval.matchups[0].seats"),
    ({"ppo": {"n_envs": 3, "n_steps": 10, "batch_size": 7}}, "ppo.batch_size"),
    ({"imitation": {"teacher": "grandmaster"}}, "imitation.teacher"),
    ({"imitation": {"teacher": "ppo:path=no/such/checkpoint.safetensors"}}, "imitation.teacher"),
    ({"imitation": {"decisions": 0}}, "imitation.decisions"),
    ({"env": {"skip_forced": "yes"}}, "env.skip_forced"),
    ({"ppo": {"privileged_critic": 1}}, "ppo.privileged_critic"),
    ({"ppo": {"vec_env": "threads"}}, "ppo.vec_env"),
    ({"ppo": {"vec_env": "sharded", "n_envs": 4, "n_steps": 64, "batch_size": 64, "workers": 5}}, "ppo.workers"),
])
def test_bad_config_fails_at_once_naming_the_key(data: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.").replace("[", r"\[")):
        config_from_dict(data)


def test_workers_only_bound_a_sharded_vec_env() -> None:
    # one env with the default workers is a valid config for the in-process vec envs
    assert config_from_dict({"ppo": {"n_envs": 1, "n_steps": 64, "batch_size": 64}}).ppo.n_envs == 1
    assert config_from_dict({"ppo": {"vec_env": "sharded", "n_envs": 2, "n_steps": 64, "batch_size": 64,
                                     "workers": 2}}).ppo.workers == 2


@pytest.mark.slow
def test_bad_yaml_config_fails_from_the_command_line_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("env:\n  edition: uno_flip\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", "import sys; from uno_app.cli import main; sys.exit(main())", "train", "--config", str(path)],
                         capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2
    assert "env.edition" in out.stderr and "uno_flip" in out.stderr


def test_shipped_configs_load() -> None:
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        config = load_config(path)
        assert config.total_steps > 0 and config.name == path.stem
    for path in sorted(SHIPPED_DIR.glob("*.yaml")):  # each reproduces its checkpoint
        config = load_config(path)
        meta = PPOAgent.load(path.with_suffix(".safetensors")).metadata
        if meta.get("imitates"):  # training.tools.rule_net: imitation only, no PPO step, made from exactly this config
            # keys added since (the batched trainer's) read as their defaults: the same config
            assert meta["steps"] == 0 and config_from_dict(meta["config"]).to_dict() == config.to_dict()
            continue
        assert config.total_steps == meta["steps"] and config.seed == meta["seed"]


def test_the_experiment_configs_in_docs_are_valid_configs() -> None:
    """docs/experiments holds the training report's configs as run (resuming=True: an init_from file is a
    record of where a run started; one of them, run D's, is not kept)."""
    paths = sorted((ROOT / "docs" / "experiments").glob("*.yaml"))
    assert len(paths) >= 6
    for path in paths:
        config = load_config(path, resuming=True)
        assert config.trainer == "batched" and config.total_steps > 0
        if config.ppo.init_from and "runs/" not in config.ppo.init_from:
            load_config(path)  # a kept init file is checked too


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
    obs = {"observation": np.zeros(observation_size(10), np.float32), "action_mask": np.eye(80, dtype=np.int8)[55]}
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
                 "resume/state.json", "resume/model_256.safetensors"):
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


def test_a_run_stops_at_exactly_total_steps_even_mid_rollout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _smoke_config(tmp_path / "run", total_steps=200)  # rollouts of 2 envs x 64 steps: 128, 256, ...
    data["eval"]["matchups"] = []
    assert not data.get("tensorboard")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    train(config_from_dict(data))
    assert list(temp.iterdir()) == []  # SB3's own logger set-up leaves an empty SB3-<time> folder there
    state = json.loads((tmp_path / "run" / "resume" / "state.json").read_text())
    assert state["steps"] == 200 and state["resumed_at"] == [] and state["complete"]
    assert PPOAgent.load(tmp_path / "run" / "last.safetensors").metadata["steps"] == 200


def test_an_interrupted_run_is_reproduced_by_training_to_its_resume_point_then_resuming(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.ppo_agent import read_checkpoint
    from training.run.schedule import Schedule

    class Interrupted(Exception):
        pass

    original = Schedule.save

    def interrupting(self: Schedule, complete: bool = False) -> None:
        original(self, complete)
        if self.trainer.steps >= 200:
            raise Interrupted  # killed right after the resume point due at step 200 was written

    def config(name: str, total: int) -> Any:
        data = _smoke_config(tmp_path / name, total_steps=total, checkpoint_every=200)
        data["eval"]["matchups"] = []
        return config_from_dict(data)

    monkeypatch.setattr(Schedule, "save", interrupting)
    with pytest.raises(Interrupted):
        train(config("interrupted", 384))
    monkeypatch.setattr(Schedule, "save", original)
    # the checkpoint due at 200 lands at the end of the rollout that reaches it (2 envs x 64 steps: 256)
    assert json.loads((tmp_path / "interrupted" / "resume" / "state.json").read_text())["steps"] == 256
    train(config("interrupted", 384), resume=True)
    train(config("recipe", 256))
    train(config("recipe", 384), resume=True)
    weights = [read_checkpoint(tmp_path / name / "last.safetensors")[0] for name in ("interrupted", "recipe")]
    assert all(np.array_equal(weights[0][k], weights[1][k]) for k in weights[0])
    for name in ("interrupted", "recipe"):
        assert json.loads((tmp_path / name / "resume" / "state.json").read_text())["resumed_at"] == [256]


def test_an_sb3_run_driven_by_the_schedule_writes_one_tensorboard_stream_with_every_scalar(tmp_path: Path) -> None:
    """Several ``learn_until`` calls (one per event) share one logger: one ``tb/tb_1`` events file, SB3's scalars
    and ours, each series at increasing steps, the last rollout (ending at total_steps) trained on."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    data = _smoke_config(tmp_path / "run", total_steps=384, tensorboard=True)
    data["eval"]["every"] = 128
    train(config_from_dict(data))
    tb = tmp_path / "run" / "tb"
    assert [p.parent.name for p in tb.rglob("events.out.tfevents.*")] == ["tb_1"]
    events = EventAccumulator(str(tb / "tb_1"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/loss", "train/entropy_loss", "train/explained_variance", "time/fps", "eval/score",
            "eval/classic_2p_vs_rule/win_rate", "pool/elo/learner", "pool/snapshots", "episodes/length",
            "episodes/truncated_share"} <= tags
    for tag in tags:
        steps = [e.step for e in events.Scalars(tag)]
        assert steps == sorted(set(steps)), tag
    assert [e.step for e in events.Scalars("eval/score")] == [128, 256, 384]
    assert [e.step for e in events.Scalars("train/loss")][-1] == 384  # the rollout ending at 384 was trained


def test_truncation_reward_reaches_the_training_env() -> None:
    from training.sb3.pool import make_training_env  # noqa: PLC0415

    config = config_from_dict({"env": {"truncation_reward": -1.0}})
    assert config.env.truncation_reward == -1.0
    assert make_training_env(config).env.truncation_reward == -1.0
    assert make_training_env(config_from_dict({})).env.truncation_reward is None


# ---------------------------------------------------------------------- forced moves, the privileged critic
def test_skip_forced_leaves_the_learner_only_real_choices() -> None:
    config = config_from_dict({"env": {"num_players": [2, 4], "skip_forced": True}, "pool": {"baselines": ["rule"]}})
    env = make_training_env(config)
    obs, info = env.reset(seed=4)
    choices = episodes = 0
    while episodes < 20:
        legal = np.flatnonzero(info["action_mask"])
        assert len(legal) >= 2  # a forced decision never reaches the learner
        choices += 1
        obs, reward, terminated, truncated, info = env.step(int(legal[choices % len(legal)]))
        if terminated or truncated:
            outcome = info["outcome"]
            assert outcome["length"] >= choices  # forced decisions are still counted as played
            assert reward == (1.0 if outcome["won"] else -1.0 / (outcome["num_players"] - 1))
            episodes += 1
            choices = 0
            obs, info = env.reset()


def test_reward_scale_multiplies_the_round_points_but_not_the_truncation_reward() -> None:
    def play(scale: float, max_turns: int) -> list[tuple[float, bool, float]]:
        config = config_from_dict({"env": {"num_players": [2, 3], "reward": "score", "reward_scale": scale,
                                           "max_turns": max_turns, "truncation_reward": -1.0},
                                   "pool": {"baselines": ["rule"]}})
        env = make_training_env(config)
        obs, info = env.reset(seed=9)
        ends, step = [], 0
        while len(ends) < 12:
            legal = np.flatnonzero(info["action_mask"])
            step += 1
            obs, reward, terminated, truncated, info = env.step(int(legal[step % len(legal)]))
            if terminated or truncated:
                game = env.unwrapped.game
                ends.append((reward, info["outcome"]["truncated"], float(game.hand_value(env.unwrapped.seat))))
                obs, info = env.reset()
        return ends

    for max_turns in (1000, 12):  # rounds that finish; rounds cut off by max_turns
        raw, scaled = play(1.0, max_turns), play(0.01, max_turns)
        assert [t for _, t, _ in raw] == [t for _, t, _ in scaled]  # the same episodes
        for (r, cut, hand), (r_scaled, _, _) in zip(raw, scaled, strict=True):
            if cut:
                assert r == r_scaled == -1.0  # truncation_reward, already in the scaled units
            else:
                assert r_scaled == pytest.approx(0.01 * r) and (r > 0 or r == -hand)
        assert any(cut for _, cut, _ in raw) == (max_turns == 12)


@pytest.mark.slow
def test_init_from_starts_the_actor_from_a_checkpoint_and_refuses_another_network(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from agents.ppo_agent import read_checkpoint
    from training.sb3.policy import load_actor, policy_class, policy_kwargs, policy_tensors

    data = _smoke_config(tmp_path / "source")
    data["eval"]["matchups"] = []
    train(config_from_dict(data))
    source = tmp_path / "source" / "last.safetensors"
    config = config_from_dict({**_smoke_config(tmp_path / "tuned"), "ppo": {
        **data["ppo"], "privileged_critic": True, "init_from": str(source)}})
    model = MaskablePPO(policy_class(True), make_training_env(config), n_steps=64, batch_size=64, device="cpu",
                        policy_kwargs=policy_kwargs([16], config.ppo.activation, 10, True), seed=0)
    load_actor(model.policy, source)
    expected, _ = read_checkpoint(source)
    ours = policy_tensors(model.policy)
    assert all(np.array_equal(ours[k], expected[k]) for k in expected)
    with pytest.raises(ConfigError, match=r"ppo\.init_from: .*hidden \[16\].*\[32\]"):
        config_from_dict({"ppo": {"hidden": [32], "init_from": str(source)}})
    with pytest.raises(ConfigError, match=r"ppo\.init_from"):
        config_from_dict({"ppo": {"hidden": [16], "init_from": str(tmp_path / "missing.safetensors")}})
    # a run with init_from trains from those weights
    train(config)
    assert PPOAgent.load(tmp_path / "tuned" / "last.safetensors").metadata["config"]["ppo"]["init_from"] == str(source)


def test_privileged_features_are_the_other_hands_by_offset_then_the_next_draws() -> None:
    from training.run.critic import NEXT_DRAWS, privileged_features, privileged_size
    from uno_env.core import Game
    from uno_env.core.cards import NUM_KINDS

    game = Game(Rules(num_players=3), seed=11)
    for seat in range(3):
        extra = privileged_features(game, seat, 4)
        assert extra.shape == (privileged_size(4),) == ((4 - 1 + NEXT_DRAWS) * NUM_KINDS,)
        hands = extra[:3 * NUM_KINDS].reshape(3, NUM_KINDS)
        for offset in (1, 2):
            expected = np.bincount(game.state.hands[(seat + offset) % 3], minlength=NUM_KINDS)
            assert np.array_equal(hands[offset - 1], expected)
        assert not hands[2].any()  # offset 3 is padding at a 3-player table
        draws = extra[3 * NUM_KINDS:].reshape(NEXT_DRAWS, NUM_KINDS)
        assert [int(np.flatnonzero(row)[0]) for row in draws] == game.state.draw_pile[::-1][:NEXT_DRAWS]


def test_privileged_critic_reads_the_hidden_part_and_the_exported_policy_never_does(tmp_path: Path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from training.run.rundir import checkpoint_metadata
    from training.sb3.policy import export_policy, policy_class, policy_kwargs
    from uno_env.observation import observation_size

    config = config_from_dict({"env": {"num_players": [2, 3]}, "ppo": {"privileged_critic": True, "hidden": [32, 16], "activation": "relu"}})
    env = make_training_env(config)
    model = MaskablePPO(policy_class(True), env, policy_kwargs=policy_kwargs([32, 16], "relu", 10, True),
                        n_steps=64, batch_size=64, seed=0, device="cpu")
    obs, info = env.reset(seed=2)
    public = observation_size(10)
    assert obs.shape[0] > public
    with torch.no_grad():
        for param in model.policy.parameters():
            param.add_(torch.randn_like(param) * 0.2)
        batch = torch.as_tensor(np.stack([obs, obs]))
        batch[1, public:] = torch.rand(obs.shape[0] - public)  # other hidden cards
        features = model.policy.extract_features(batch)
        logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(features)).numpy()
        values = model.policy.predict_values(batch).numpy()
    assert np.array_equal(logits[0], logits[1]) and values[0, 0] != values[1, 0]
    path = tmp_path / "priv.safetensors"
    export_policy(model.policy, path, checkpoint_metadata(config, 0))
    agent = PPOAgent.load(path)
    assert agent.metadata["observation_size"] == public
    np.testing.assert_allclose(agent.logits(obs[:public]), logits[0], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------- the imitation warm start
def test_demonstrations_record_the_teacher_and_the_discounted_round_outcome() -> None:
    from training.sb3.imitation import play_demonstrations

    config = config_from_dict({"env": {"num_players": 2, "skip_forced": True}, "ppo": {"gamma": 0.9},
                               "imitation": {"teacher": "rule"}})
    demos = play_demonstrations(config, 300, seed=1)
    assert len(demos) >= 300 and demos.rounds >= 3
    assert (demos.masks.sum(axis=1) >= 2).all()  # skip_forced: only real choices
    assert all(demos.masks[i, a] for i, a in enumerate(demos.actions))
    # 2-player round win: every return is +-0.9^k for the k decisions the seat took after it
    magnitudes = np.abs(demos.returns)
    exponents = np.log(magnitudes) / np.log(0.9)
    assert np.allclose(exponents, np.round(exponents), atol=1e-4)
    assert (demos.returns == 1.0).sum() == (demos.returns == -1.0).sum() == demos.rounds  # last decisions
    again = play_demonstrations(config, 300, seed=1)
    assert np.array_equal(again.actions, demos.actions) and np.array_equal(again.observations, demos.observations)


def test_imitation_fits_the_policy_to_the_teacher() -> None:
    from sb3_contrib import MaskablePPO

    from training.sb3.imitation import imitate, play_demonstrations
    from training.sb3.policy import policy_kwargs

    config = config_from_dict({"env": {"num_players": 2, "skip_forced": True}, "ppo": {"hidden": [64]},
                               "imitation": {"teacher": "rule", "decisions": 4000, "epochs": 4}})
    model = MaskablePPO("MlpPolicy", make_training_env(config), policy_kwargs=policy_kwargs([64], "relu", 10),
                        n_steps=64, batch_size=64, seed=0, device="cpu")
    test = play_demonstrations(config, 1000, seed=99)  # rounds the fit never saw
    agent_before = _greedy_accuracy(model, test)
    stats = imitate(model.policy, config, seed=3)
    assert stats["decisions"] >= 4000 and stats["epoch"] == 4
    assert _greedy_accuracy(model, test) > max(0.75, agent_before + 0.2)


def _greedy_accuracy(model: Any, demos: Any) -> float:
    actions, _ = model.predict(demos.observations.astype(np.float32), action_masks=demos.masks.astype(bool),
                               deterministic=True)
    return float(np.mean(actions == demos.actions))


def test_smoke_run_with_the_warm_start_and_the_privileged_critic_plays_and_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    data = _smoke_config(run_dir, imitation={"teacher": "rule", "decisions": 500, "epochs": 1})
    data["env"]["skip_forced"] = True
    data["ppo"]["privileged_critic"] = True
    train(config_from_dict(data))
    state = json.loads((run_dir / "resume" / "state.json").read_text())
    assert state["imitation"]["decisions"] >= 500 and 0 < state["imitation"]["accuracy"] <= 1
    agent = PPOAgent.load(run_dir / "last.safetensors")
    assert agent.metadata["config"]["ppo"]["privileged_critic"] is True
    result = evaluate([agent, RuleAgent()], Rules(num_players=2), 4, max_decisions=2000)
    assert result.unfinished == 0
    data["total_steps"] = 384
    train(config_from_dict(data), resume=True)  # the custom policy class survives SB3's save and load
    assert PPOAgent.load(run_dir / "last.safetensors").metadata["steps"] == 384


# ---------------------------------------------------------------------- vectorised envs
def test_sharded_vec_env_steps_every_env_exactly_as_one_dummy_vec_env_does() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.sb3.vec_env import ShardedVecEnv

    config = config_from_dict({"env": {"num_players": [2, 3], "max_turns": 40, "skip_forced": True},
                               "ppo": {"privileged_critic": True}, "pool": {"baselines": ["rule", "random"]}})
    fns = [lambda: make_training_env(config) for _ in range(5)]
    dummy, sharded = DummyVecEnv(fns), ShardedVecEnv(fns, workers=2)
    try:
        assert sharded.shards == [[0, 1, 2], [3, 4]]
        for venv in (dummy, sharded):
            venv.seed(9)
        obs_d, obs_s = dummy.reset(), sharded.reset()
        ends = 0
        for step in range(150):
            assert np.array_equal(obs_d, obs_s)
            masks = np.stack(sharded.env_method("action_masks"))
            assert np.array_equal(masks, np.stack(dummy.env_method("action_masks")))
            actions = np.array([np.flatnonzero(m)[step % int(m.sum())] for m in masks])
            obs_d, rew_d, done_d, info_d = dummy.step(actions)
            obs_s, rew_s, done_s, info_s = sharded.step(actions)
            assert np.array_equal(rew_d, rew_s) and np.array_equal(done_d, done_s)
            for a, b in zip(info_d, info_s, strict=True):
                if "terminal_observation" in a:
                    ends += 1
                    assert np.array_equal(a["terminal_observation"], b["terminal_observation"])
                    assert a["outcome"] == b["outcome"] and a["TimeLimit.truncated"] == b["TimeLimit.truncated"]
        assert ends > 5
        assert sharded.get_attr("skip_forced", indices=[4, 0]) == [True, True]
        sharded.env_method("set_pool", [], False, indices=[1, 3])  # reaches envs in both shards
        assert sharded.get_attr("pool", indices=[3])[0].self_play is False
        with pytest.raises(AttributeError):
            sharded.get_attr("no_such_attribute")
        assert sharded.get_attr("skip_forced") == [True] * 5  # the workers survive an error
    finally:
        dummy.close()
        sharded.close()


def test_a_sharded_run_trains_the_same_weights_as_a_single_process_run(tmp_path: Path) -> None:
    from agents.ppo_agent import read_checkpoint

    weights = []
    for name, vec in (("dummy", {"vec_env": "dummy"}), ("sharded", {"vec_env": "sharded", "workers": 2})):
        data = _smoke_config(tmp_path / name, total_steps=256)
        data["ppo"].update(vec)
        data["eval"]["matchups"] = []
        train(config_from_dict(data))
        weights.append(read_checkpoint(tmp_path / name / "last.safetensors")[0])
    assert all(np.array_equal(weights[0][k], weights[1][k]) for k in weights[0])


@pytest.mark.slow  # 3.0 s alone here
def test_ship_copies_the_checkpoint_with_a_reproducing_config_and_its_evaluation(tmp_path: Path) -> None:
    from training.tools.ship import main as ship

    run_dir = tmp_path / "run"
    data = _smoke_config(run_dir)
    data["env"]["edition"] = "classic"
    train(config_from_dict(data))
    out = tmp_path / "shipped"
    ship([str(run_dir), "--name", "tiny", "--games", "4", "--other-games", "0", "--whole-games", "2",
          "--workers", "1", "--out-dir", str(out), "--curve", str(tmp_path / "curve.png")])
    shipped = PPOAgent.load(out / "tiny.safetensors")
    assert shipped.metadata["steps"] == 256
    reproduce = load_config(out / "tiny.yaml")
    assert reproduce.total_steps == 256 and reproduce.seed == 3 and reproduce.run_dir == ""
    assert f"#   uno-env train --config {SHIPPED}/tiny.yaml\n" in (out / "tiny.yaml").read_text()
    card = json.loads((out / "tiny.json").read_text())
    units = [(r["unit"], r["num_players"], r["opponent"]) for r in card["evaluation"]]
    assert units == [("round", 2, "rule"), ("round", 4, "rule"), ("round", 2, "random"), ("round", 4, "random"),
                     ("game", 2, "rule"), ("game", 4, "rule"), ("game", 2, "random"), ("game", 4, "random")]
    assert "Whole games to 500 points" in (out / "tiny.md").read_text()
    assert (tmp_path / "curve.png").stat().st_size > 0


def test_ship_of_a_resumed_two_player_run_lists_the_commands_and_evaluates_its_table(tmp_path: Path) -> None:
    from training.tools.ship import main as ship

    run_dir = tmp_path / "run"
    data = _smoke_config(run_dir, total_steps=200)
    data["env"].update(edition="classic", num_players=2)
    train(config_from_dict(data))
    train(config_from_dict({**data, "total_steps": 300}), resume=True)
    out = tmp_path / "shipped"
    ship([str(run_dir), "--name", "duo", "--checkpoint", "last.safetensors", "--games", "2", "--whole-games", "0",
          "--workers", "1", "--out-dir", str(out), "--curve", ""])
    text = (out / "duo.yaml").read_text()
    assert (f"#   uno-env train --config {SHIPPED}/duo.yaml --run-dir runs/duo --total-steps 200\n"
            "#   uno-env train --resume runs/duo --total-steps 300\n") in text
    assert load_config(out / "duo.yaml").total_steps == 300
    card = json.loads((out / "duo.json").read_text())
    assert [(r["num_players"], r["opponent"]) for r in card["evaluation"]] == [(2, "rule"), (2, "random")]


def test_quickstart_table_plays_each_policy_against_the_baselines_and_the_first_against_the_rest(
        tmp_path: Path) -> None:
    from test_ppo_agent import _random_checkpoint

    from training.tools.quickstart import evaluation_table

    paths = {name: _random_checkpoint(tmp_path / f"{name}.safetensors", seed=i)
             for i, name in enumerate(("fresh", "shipped-a", "shipped-b"))}
    rows = evaluation_table(paths, games=2, workers=1).splitlines()[2:]
    lineups = [tuple(cell.strip() for cell in row.split("|")[1:5]) for row in rows]
    assert lineups == [(name, "classic", n, opponent) for name in paths
                       for n, opponent in (("2", "random x1"), ("2", "rule x1"), ("4", "rule x3"))] + [
        ("fresh", "classic", "2", "shipped-a x1"), ("fresh", "classic", "2", "shipped-b x1")]


def test_quickstart_table_plays_a_two_player_checkpoint_only_at_two_players(tmp_path: Path) -> None:
    from test_ppo_agent import _random_checkpoint

    from training.tools.quickstart import evaluation_table

    paths = {"fresh": _random_checkpoint(tmp_path / "fresh.safetensors"),
             "shipped-2p": _random_checkpoint(tmp_path / "two.safetensors", seed=1, num_players=[2])}
    rows = evaluation_table(paths, games=2, workers=1).splitlines()[2:]
    cells = [[cell.strip() for cell in row.split("|")[1:7]] for row in rows]
    played = [tuple(c[:4]) for c in cells if c[4] != "-"]
    assert ("shipped-2p", "classic", "4", "rule x3") not in played
    assert ("shipped-2p", "classic", "2", "rule x1") in played
    assert ["shipped-2p", "classic", "4", "rule x3", "-", "not played: trained for 2 players"] in cells


def test_quickstart_table_meets_a_four_player_checkpoint_head_to_head_nowhere(tmp_path: Path) -> None:
    # the head-to-head lineups are at 2 players: a checkpoint trained for 4 players only sits them out
    from test_ppo_agent import _random_checkpoint

    from training.tools.quickstart import evaluation_table

    paths = {"fresh": _random_checkpoint(tmp_path / "fresh.safetensors"),
             "shipped-4p": _random_checkpoint(tmp_path / "four.safetensors", seed=1, num_players=[4])}
    rows = evaluation_table(paths, games=2, workers=1).splitlines()[2:]
    cells = [[cell.strip() for cell in row.split("|")[1:7]] for row in rows]
    played = [tuple(c[:4]) for c in cells if c[4] != "-"]
    assert ("fresh", "classic", "2", "shipped-4p x1") not in played
    assert ("shipped-4p", "classic", "4", "rule x3") in played
    assert ["fresh", "classic", "2", "shipped-4p x1", "-", "not played: shipped-4p trained for 4 players"] in cells
    assert ["shipped-4p", "classic", "2", "rule x1", "-", "not played: trained for 4 players"] in cells
