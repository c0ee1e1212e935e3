"""The batched trainer (``trainer: batched``, ``training.batched.ppo``): on-device self-play PPO over ``BatchedUno``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the batched engine needs torch: pip install torch==2.13.0")

pytest.importorskip("yaml")

import yaml  # noqa: E402

from agents import PPOAgent  # noqa: E402
from agents.ppo_agent import SHIPPED_DIR, read_checkpoint, write_checkpoint  # noqa: E402
from agents.tournament import evaluate  # noqa: E402
from training.batched.networks import (  # noqa: E402
    Actor,
    ActorCritic,
    actor_tensors,
    fair_actor,
    load_actor_tensors,
    sample_actions,
    sparse_linear,
)
from training.batched.ppo import gae  # noqa: E402
from training.batched.selfplay import (  # noqa: E402
    Opponent,
    Rollout,
    SelfPlay,
    oracle_keep,
    privileged_features,
    table_options,
)
from training.cli import train  # noqa: E402
from training.run import critic  # noqa: E402
from training.run.config import ConfigError, config_from_dict  # noqa: E402
from training.run.resume import read_resume  # noqa: E402
from uno_env.batched import BatchedUno  # noqa: E402
from uno_env.core import Rules  # noqa: E402
from uno_env.core.actions import DRAW, NUM_PLAY_ACTIONS  # noqa: E402
from uno_env.observation import observation_size  # noqa: E402

torch.set_num_threads(1)  # small tensors: a second thread only contends for the cores (tenfold slower here)

ROOT = Path(__file__).resolve().parent.parent
STAND_IN = str(SHIPPED_DIR / "rule_net.safetensors")  # the network fitted to RuleAgent


def _tiny(run_dir: Path | str = "", **sections: Any) -> dict[str, Any]:
    """A batched run of a second or two: 2-4 players, a small network, snapshots, an evaluation at the end."""
    data: dict[str, Any] = {
        "trainer": "batched", "name": "tiny", "seed": 5, "total_steps": 1024, "run_dir": str(run_dir),
        "checkpoint_every": 512, "tensorboard": False, "progress_bar": False,
        "env": {"edition": "classic", "num_players": [2, 4], "max_turns": 400, "skip_forced": True,
                "truncation_reward": -1.0},
        "ppo": {"n_envs": 2, "n_steps": 128, "batch_size": 128, "n_epochs": 2, "hidden": [16],
                "privileged_critic": True},
        "pool": {"baselines": ["rule", "random"], "snapshot_every": 256, "size": 2, "baseline_only_steps": 256},
        "batched": {"num_tables": 16, "rule": f"ppo:path={STAND_IN}"},
        "eval": {"every": 0, "games": 4, "max_decisions": 400,
                 "matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule"}]},
    }
    for key, value in sections.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    return data


def _play(data: dict[str, Any], seed: int = 0) -> tuple[SelfPlay, ActorCritic]:
    config = config_from_dict(data)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    return SelfPlay(config, torch.device("cpu"), seed, generator, lambda: 0), ActorCritic(config)


def _rollout(play: SelfPlay, model: ActorCritic, size: int = 256) -> tuple[Rollout, Any]:
    buffer = play.new_buffer(size)
    steps = play.rollout(model, buffer, size)
    assert steps is not None
    return buffer, steps


# ---------------------------------------------------------------------- the pieces
def test_privileged_features_from_the_tables_are_training_critics_features_of_the_same_position() -> None:
    env = BatchedUno(12, edition=["classic", "monster_high", "angry_birds", "masters_of_the_universe"] * 3,
                     num_players=[2, 3, 4, 6, 10, 5] * 2, episode="round", seed=4)
    state = env.reset()
    noise = torch.Generator().manual_seed(1)
    for step in range(60):
        if step % 20 == 19:
            for i in range(env.num_tables):
                game = env.to_game(i)
                rows = torch.tensor([i] * game.num_players)
                seats = torch.arange(game.num_players)
                ours = privileged_features(env.tables, rows, seats, 10).numpy()
                for seat in range(game.num_players):
                    assert np.array_equal(ours[seat], critic.privileged_features(game, seat, 10)), (i, seat)
        actions = torch.where(state.action_mask, torch.rand(state.action_mask.shape, generator=noise), -1.0).argmax(1)
        state = env.step(actions)


def test_the_sparse_first_layer_is_the_dense_product_forward_and_backward() -> None:
    env = BatchedUno(64, num_players=[2, 4, 10, 6] * 16, episode="round", seed=3)
    observations = env.reset().observation
    scale = torch.rand(observations.shape[1]) + 0.5
    for x in (observations, torch.randn(8, observations.shape[1])):  # sparse, then dense (the dense path)
        layer = torch.nn.Linear(x.shape[1], 32)
        ours = sparse_linear(layer, x, scale)
        ours.square().sum().backward()
        ours_grad = layer.weight.grad.clone()
        layer.weight.grad = None
        dense = layer(x * scale)
        dense.square().sum().backward()
        assert torch.allclose(ours, dense, atol=1e-5) and torch.allclose(ours_grad, layer.weight.grad, atol=1e-4)


def test_the_sparse_layer_never_uses_a_dead_networks_weights_whose_id_and_version_a_new_one_reuses() -> None:
    # the no-grad path keeps each weight's transpose; a new layer's weight often gets a freed one's id and
    # the same version count (made, then copied into once): the cached transpose must not be used for it
    generator = torch.Generator().manual_seed(0)
    x = torch.zeros(4, 40)
    x[:, :3] = 1.0
    scale = torch.ones(40)
    for _ in range(50):
        layer = torch.nn.Linear(40, 8)
        with torch.no_grad():
            layer.weight.copy_(torch.randn(8, 40, generator=generator))
            assert torch.allclose(sparse_linear(layer, x, scale), layer(x * scale), atol=1e-5)
        del layer


def _reference_gae(slots: np.ndarray, rewards: np.ndarray, dones: np.ndarray, boots: np.ndarray,
                   values: np.ndarray, last: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Per table: the learner's steps as one sequence, then textbook GAE over it."""
    out = np.zeros_like(values)
    t_max, tables = slots.shape
    for b in range(tables):
        steps = []  # (row, reward until the next learner step, ended, bootstrap)
        for t in range(t_max):
            if slots[t, b] >= 0:
                steps.append([slots[t, b], 0.0, False, 0.0])
            if steps and not steps[-1][2]:
                steps[-1][1] += rewards[t, b]
                if dones[t, b]:
                    steps[-1][2], steps[-1][3] = True, boots[t, b]
        advantage = 0.0
        for i in range(len(steps) - 1, -1, -1):
            row, reward, ended, boot = steps[i]
            if ended:
                following, advantage = boot, 0.0
            else:
                following = values[steps[i + 1][0]] if i + 1 < len(steps) else last[b]
            advantage = reward + gamma * following - values[row] + gamma * lam * advantage
            out[row] = advantage
    return out


def test_gae_over_interleaved_seats_is_textbook_gae_over_each_tables_learner_steps() -> None:
    rng = np.random.default_rng(0)
    t_max, tables = 40, 7
    acted = rng.random((t_max, tables)) < 0.4
    slots = np.full((t_max, tables), -1)
    slots[acted] = np.arange(acted.sum())
    rewards = np.where(rng.random((t_max, tables)) < 0.2, rng.normal(size=(t_max, tables)), 0.0)
    dones = rng.random((t_max, tables)) < 0.1
    boots = np.where(rng.random((t_max, tables)) < 0.5, rng.normal(size=(t_max, tables)), 0.0) * dones
    values, last = rng.normal(size=acted.sum()), rng.normal(size=tables)
    ours = gae(*(torch.as_tensor(a) for a in (slots, rewards, dones, boots, values, last)), 0.97, 0.9)
    expected = _reference_gae(slots, rewards, dones, boots, values, last, 0.97, 0.9)
    assert np.allclose(ours.numpy(), expected)


def test_batched_random_opponents_play_randomagents_two_policies() -> None:
    mask = torch.zeros(3000, 80, dtype=torch.bool)
    mask[:, [3, 17, DRAW]] = True  # two playable cards and draw
    mask[1000:, :NUM_PLAY_ACTIONS] = False
    mask[1000:, [60, 61]] = True  # no card to play: draw or two others, uniformly
    generator = torch.Generator().manual_seed(0)
    chosen = Opponent("random").act(torch.zeros(3000, 839), mask, generator)
    assert mask.gather(1, chosen[:, None]).all()
    assert set(chosen[:1000].tolist()) == {3, 17}  # a playable card, never a draw
    assert set(chosen[1000:].tolist()) == {DRAW, 60, 61}
    uniform = Opponent("random-uniform", uniform=True).act(torch.zeros(3000, 839), mask, generator)
    assert set(uniform[:1000].tolist()) == {3, 17, DRAW}


def test_sampling_is_legal_and_follows_the_masked_softmax() -> None:
    logits = torch.tensor([[0.0, 1.0, 2.0, 50.0] + [0.0] * 76]).repeat(20000, 1)
    mask = torch.zeros_like(logits, dtype=torch.bool)
    mask[:, :3] = True  # the largest logit is illegal
    actions, log_probs = sample_actions(logits, mask, torch.Generator().manual_seed(0))
    shares = torch.bincount(actions, minlength=80)[:3].float() / len(actions)
    expected = torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0)
    assert actions.max() < 3 and torch.allclose(shares, expected, atol=0.01)
    assert torch.allclose(log_probs, expected.log()[actions], atol=1e-5)
    assert sample_actions(logits, mask, None, deterministic=True)[0].eq(2).all()


def test_tables_mix_editions_sizes_and_rule_options_drawn_from_the_config() -> None:
    config = config_from_dict(_tiny(env={"edition": "all", "num_players": [2, 3, 6], "rules": {"stacking": [True, False]}}))
    options = table_options(config, 400, seed=1)
    assert set(options["edition"]) == set(config.env.editions()) and set(options["num_players"]) == {2, 3, 6}
    assert set(options["stacking"]) == {True, False}
    assert table_options(config, 400, seed=1) == options


# ---------------------------------------------------------------------- rollouts
@pytest.mark.slow
def test_rollout_seats_the_learner_per_table_and_skip_forced_leaves_only_real_choices() -> None:
    play, model = _play(_tiny(env={"edition": "all", "num_players": [2, 3, 4, 6, 10]}, batched={"num_tables": 24}))
    assert len({r.edition for r in play.env.rules}) > 1 and len({r.num_players for r in play.env.rules}) > 1
    seats = play.learner_seat
    assert seats.lt(play.num_players).all() and len(set(seats.tolist())) > 1
    buffer, _ = _rollout(play, model)
    assert buffer.size >= 256 and buffer.masks[:buffer.size].sum(1).gt(1).all()
    play, model = _play(_tiny(env={"skip_forced": False}))
    buffer, _ = _rollout(play, model, 512)
    assert buffer.masks[:buffer.size].sum(1).eq(1).any()  # forced decisions are learner steps without skip_forced
    assert buffer.masks[:buffer.size].gather(1, buffer.actions[:buffer.size, None]).all()  # every action legal


def test_every_non_learner_seat_is_played_by_a_pool_opponent_batched_per_kind() -> None:
    play, model = _play(_tiny(pool={"baselines": ["rule", "random", "random-uniform"]}, batched={"num_tables": 64}))
    names = {k.name for k in play.kinds.values()}
    assert names == {"rule", "random", "random-uniform"}
    _rollout(play, model, 1024)
    stats = play.statistics()
    assert stats["episodes/count"] > 0
    assert {f"pool/win_rate_vs/{n}" for n in names} <= set(stats)
    play.add_snapshot("snap_1", model.actor, limit=2)  # from now on snapshots take most seats
    play.steps = lambda: 10_000
    play.draw_seats(torch.ones(play.num_tables, dtype=torch.bool))
    assert any(play.kinds[k].name == "snap_1" for k in play.seat_kind.unique().tolist())


def test_reward_scale_multiplies_the_learners_rewards_and_truncation_reward_replaces_them() -> None:
    base = _tiny(env={"reward": "score", "truncation_reward": 0.0, "num_players": 2}, ppo={"privileged_critic": False})
    scaled = _tiny(env={"reward": "score", "reward_scale": 0.01, "truncation_reward": 0.0, "num_players": 2},
                   ppo={"privileged_critic": False})
    (one, m1), (hundredth, m2) = _play(base), _play(scaled)
    m2.load_state_dict(m1.state_dict())
    _, a = _rollout(one, m1, 512)
    _, b = _rollout(hundredth, m2, 512)
    ra, rb = torch.stack(a.rewards), torch.stack(b.rewards)
    assert ra.abs().gt(1).any() and torch.allclose(rb, ra * 0.01)
    cut = _tiny(env={"max_turns": 6, "truncation_reward": -0.5, "num_players": 4})
    play, model = _play(cut)
    _, steps = _rollout(play, model, 512)
    dones, rewards = torch.stack(steps.dones), torch.stack(steps.rewards)
    assert dones.any() and rewards[dones].eq(-0.5).all()  # every episode cut off at 6 decisions, never bootstrapped
    assert torch.stack(steps.bootstraps).eq(0).all()


def test_a_truncated_episode_is_bootstrapped_from_the_learners_seat_when_truncation_reward_is_zero() -> None:
    play, model = _play(_tiny(env={"max_turns": 6, "truncation_reward": 0.0, "num_players": 3}))
    _, steps = _rollout(play, model, 512)
    dones, boots = torch.stack(steps.dones), torch.stack(steps.bootstraps)
    assert dones.any() and boots[dones].ne(0).all() and boots[~dones].eq(0).all()


# ---------------------------------------------------------------------- oracle guiding (batched.oracle_steps)
def test_the_oracles_keep_rate_is_one_until_the_decay_then_falls_linearly_to_zero() -> None:
    batched = config_from_dict(_tiny(batched={"oracle_steps": 300, "oracle_decay_from": 100})).batched
    assert [oracle_keep(batched, s) for s in (0, 99, 100, 150, 200, 299, 300, 10**6)] == \
        pytest.approx([1.0, 1.0, 1.0, 0.75, 0.5, 0.005, 0.0, 0.0], abs=1e-12)
    assert oracle_keep(config_from_dict(_tiny(batched={"oracle_steps": 4})).batched, 1) == 0.75  # decay from 0


def test_an_oracle_actor_with_the_hidden_cards_zeroed_is_its_fair_actor_which_is_what_it_exports(tmp_path: Path) -> None:
    torch.manual_seed(3)
    actor = Actor(4, [16, 8], "relu", oracle=True)
    assert actor.scale.numel() == critic.critic_size(4) and actor.public_size == observation_size(4)
    env = BatchedUno(6, num_players=[2, 3, 4] * 2, max_players=4, episode="round", seed=1)
    public = env.reset().observation
    hidden = torch.rand(6, critic.privileged_size(4))
    fair = fair_actor(actor)
    assert not fair.oracle and fair.scale.numel() == actor.public_size and fair_actor(fair) is fair
    with torch.no_grad():
        zeroed = actor(torch.cat([public, torch.zeros_like(hidden)], 1))
        assert torch.allclose(fair(public), zeroed, atol=1e-6)
        assert not torch.allclose(actor(torch.cat([public, hidden], 1)), zeroed, atol=1e-3)  # it does read them
    exported = actor_tensors(actor)
    assert exported["hidden.0.weight"].shape == (16, actor.public_size)
    write_checkpoint(tmp_path / "fair.safetensors", exported, {"max_players": 4, "hidden": [16, 8], "activation": "relu",
                                                               "observation_size": actor.public_size})
    assert np.allclose(PPOAgent.load(tmp_path / "fair.safetensors").logits(public.numpy()), zeroed.numpy(), atol=1e-5)
    # warm-started from a checkpoint, an oracle actor starts as it, hidden cards or not
    started = Actor(4, [16, 8], "relu", oracle=True)
    load_actor_tensors(started, actor_tensors(Actor(4, [16, 8], "relu")))
    with torch.no_grad():
        assert torch.equal(started.linears()[0].weight[:, actor.public_size:], torch.zeros(16, hidden.shape[1]))
        assert torch.allclose(started(torch.cat([public, hidden], 1)), fair_actor(started)(public), atol=1e-6)


@pytest.mark.parametrize("step", [0, 500, 1000])
def test_the_oracle_actor_reads_the_hidden_cards_at_the_keep_rate_and_its_update_replays_what_it_read(step: int) -> None:
    play, model = _play(_tiny(batched={"oracle_steps": 1000, "num_tables": 32}))
    play.steps = lambda: step  # keep rate 1, 0.5, 0
    buffer, _ = _rollout(play, model)
    n = buffer.size
    hidden, read = buffer.hidden[:n], buffer.oracle[:n]
    assert read.shape == hidden.shape and bool(hidden.ne(0).any())
    assert bool(((read == hidden) | (read == 0)).all())  # every entry is the hidden card's or zero
    kept = float(read.ne(0).sum() / hidden.ne(0).sum())
    assert kept == {0: 1.0, 1000: 0.0}.get(step, kept) and (step != 500 or 0.4 < kept < 0.6)
    with torch.no_grad():  # the actor's input at the update is the rollout's: the same log-probabilities
        logits = model.actor(torch.cat([buffer.observations[:n], read], 1)).masked_fill(~buffer.masks[:n], -1e9)
    replayed = torch.log_softmax(logits, 1).gather(1, buffer.actions[:n, None])[:, 0]
    assert torch.allclose(replayed, buffer.log_probs[:n], atol=1e-5)
    play.add_snapshot("snap_1", model.actor, limit=2)  # the pool's copy plays the public observation alone
    assert not play.kinds[play.snapshot_ids[-1]].actor.oracle  # type: ignore[union-attr]


@pytest.mark.slow
def test_an_oracle_guided_run_exports_a_fair_checkpoint_and_resumes(tmp_path: Path) -> None:
    data = _tiny(tmp_path / "run", batched={"oracle_steps": 768, "oracle_decay_from": 256}, tensorboard=True,
                 ppo={"init_from": STAND_IN, "hidden": [256, 256], "activation": "relu"})
    run_dir = train(config_from_dict(data))
    agent = PPOAgent.load(run_dir / "last.safetensors")
    assert agent.metadata["config"]["batched"]["oracle_steps"] == 768
    state, tensors = read_resume(run_dir)  # type: ignore[misc]
    assert tensors["policy/actor.body.0.weight"].shape[1] == critic.critic_size(10)
    actor = Actor(10, [256, 256], "relu", oracle=True)
    actor.load_state_dict({k.removeprefix("policy/actor."): v for k, v in tensors.items()
                           if k.startswith("policy/actor.")})
    last = read_checkpoint(run_dir / "last.safetensors")[0]
    assert all(np.array_equal(v, last[k]) for k, v in actor_tensors(actor).items())
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tb"))
    events.Reload()
    keep = [e.value for e in events.Scalars("train/oracle_keep")]
    assert keep[0] == 1.0 and keep[-1] < 0.5 and keep == sorted(keep, reverse=True)
    resumed = train(config_from_dict({**data, "total_steps": state.steps + 256}), resume=True)
    assert read_resume(resumed)[0].steps >= state.steps + 256  # type: ignore[index]


def test_oracle_use_measures_how_often_the_hidden_cards_change_the_choice(tmp_path: Path) -> None:
    from training.tools.oracle_use import main, oracle_actor, oracle_use, positions

    config = config_from_dict(_tiny(batched={"oracle_steps": 100}, env={"max_players": 4}))
    observations, hidden, masks = positions(4, 4, tables=32, steps=30)
    assert observations.shape[0] == hidden.shape[0] > 0 and masks.sum(1).gt(1).all() and bool(hidden.ne(0).any())
    torch.manual_seed(0)
    started = ActorCritic(config).actor  # warm-started: zero weights on the hidden cards
    load_actor_tensors(started, actor_tensors(Actor(4, [16], "tanh")))
    assert oracle_use(started, observations, hidden, masks).changed == 0.0
    with torch.no_grad():
        started.linears()[0].weight[:, started.public_size:].normal_(0, 5.0)  # now it leans on them
    leaning = oracle_use(started, observations, hidden, masks)
    assert leaning.changed > 0.05 and leaning.kl > 0
    assert oracle_use(oracle_actor(config, {f"policy/actor.{k}": v for k, v in started.state_dict().items()}),
                      observations, hidden, masks) == leaning
    # the command reads a run's config and its newest resume model, and refuses a run without the oracle
    run_dir = train(config_from_dict(_tiny(tmp_path / "run", batched={"oracle_steps": 512}, total_steps=256,
                                           checkpoint_every=256, pool={"snapshot_every": 256})))
    assert main([str(run_dir), "--tables", "16"]) == 0
    plain = train(config_from_dict(_tiny(tmp_path / "plain", total_steps=256, checkpoint_every=256,
                                         pool={"snapshot_every": 256})))
    assert main([str(plain)]) == 2
    assert main([str(run_dir), "--players", "11"]) == 2


# ---------------------------------------------------------------------- config
@pytest.mark.parametrize(("change", "key"), [
    ({"trainer": "jax"}, "trainer"),
    ({"imitation": {"teacher": "rule"}}, "imitation.teacher"),
    ({"pool": {"baselines": ["simple"]}}, "pool.baselines"),
    ({"batched": {"rule": "random"}}, "batched.rule"),
    ({"batched": {"rule": "ppo:path=/nonexistent.safetensors"}}, "batched.rule"),
    ({"batched": {"num_tables": 0}}, "batched.num_tables"),
    ({"batched": {"device": "gpu0"}}, "batched.device"),
    ({"batched": {"oracle_steps": 100}, "ppo": {"privileged_critic": False}}, "batched.oracle_steps"),
    ({"batched": {"oracle_steps": 100, "oracle_decay_from": 200}}, "batched.oracle_decay_from"),
    ({"trainer": "sb3", "batched": {"oracle_steps": 100}}, "batched.oracle_steps"),
])
def test_batched_config_refusals_name_the_key(change: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config_from_dict(_tiny(**change))


# ---------------------------------------------------------------------- whole runs
@pytest.mark.slow  # 2.2 s alone here
def test_a_tiny_run_writes_checkpoints_ppoagent_plays_with_the_trained_policys_logits(tmp_path: Path) -> None:
    run_dir = train(config_from_dict(_tiny(tmp_path / "run")))
    state, tensors = read_resume(run_dir)  # type: ignore[misc]
    assert state.complete and state.steps >= 1024 and state.snapshots
    actor = Actor(10, [16], "tanh")
    actor.load_state_dict({k.removeprefix("policy/actor."): v for k, v in tensors.items()
                           if k.startswith("policy/actor.")})
    agent = PPOAgent.load(run_dir / "last.safetensors")
    env = BatchedUno(8, num_players=[2, 3, 4, 10] * 2, episode="round", seed=2)
    observations = env.reset().observation
    with torch.no_grad():
        ours = actor(observations).numpy()
    assert np.allclose(agent.logits(observations.numpy()), ours, atol=1e-5)
    assert agent.metadata["steps"] == state.steps and agent.metadata["config"]["trainer"] == "batched"
    result = evaluate([agent, "rule", "random"], Rules(num_players=3), 3, max_decisions=3000)
    assert result.games == 3
    evals = [json.loads(line) for line in (run_dir / "evals.jsonl").read_text().splitlines()]
    assert evals[-1]["steps"] == state.steps and "classic_2p_vs_rule" in evals[-1]["matchups"]
    assert read_checkpoint(run_dir / "best.safetensors")[1]["steps"] == state.best.steps


@pytest.mark.slow
def test_the_same_seed_reproduces_a_run_and_a_resume_continues_one(tmp_path: Path) -> None:
    first = train(config_from_dict(_tiny(tmp_path / "a", tensorboard=True)))
    second = train(config_from_dict(_tiny(tmp_path / "b")))
    a, b = (read_checkpoint(d / "last.safetensors")[0] for d in (first, second))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(first / "tb"))
    events.Reload()
    assert {"eval/classic_2p_vs_rule/win_rate", "eval/classic_2p_vs_rule/ci_low", "eval/score", "train/policy_loss",
            "train/explained_variance", "rollout/learner_win_rate", "time/steps_per_second"} <= set(events.Tags()["scalars"])
    other = train(config_from_dict(_tiny(tmp_path / "c", seed=6)))
    assert not np.array_equal(read_checkpoint(other / "last.safetensors")[0]["action.weight"], a["action.weight"])
    steps = json.loads((first / "resume" / "state.json").read_text())["steps"]
    resumed = train(config_from_dict(_tiny(tmp_path / "a", total_steps=steps + 512, tensorboard=True)), resume=True)
    state = json.loads((resumed / "resume" / "state.json").read_text())
    assert state["complete"] and state["steps"] >= steps + 512 and state["resumed_at"] == [steps]
    assert PPOAgent.load(resumed / "last.safetensors").metadata["steps"] == state["steps"]


@pytest.mark.slow
def test_ctrl_c_checkpoints_a_batched_run_without_sb3_and_it_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_tiny(run_dir, total_steps=10_000_000, checkpoint_every=256)), encoding="utf-8")
    blocker = ("import sys, importlib.abc\n"
               "class Block(importlib.abc.MetaPathFinder):\n"
               "    def find_spec(self, name, path, target=None):\n"
               "        if name.split('.')[0] in ('gymnasium', 'pettingzoo', 'stable_baselines3', 'sb3_contrib'):\n"
               "            raise ImportError('no ' + name + ' on this machine')\n"
               "sys.meta_path.insert(0, Block())\n"
               "from training.cli import main\n"
               f"main(['--config', {str(config)!r}, '--no-progress'])\n")
    process = subprocess.Popen([sys.executable, "-c", blocker], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        state = run_dir / "resume" / "state.json"
        deadline = time.monotonic() + 120
        while not (state.exists() and json.loads(state.read_text())["steps"] >= 512):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    steps = json.loads((run_dir / "resume" / "state.json").read_text())["steps"]
    assert f"interrupted at step {steps}; resume with:" in err and "Traceback" not in err
    resumed = train(config_from_dict(_tiny(run_dir, total_steps=steps + 256)), resume=True)
    assert json.loads((resumed / "resume" / "state.json").read_text())["resumed_at"] == [steps]


@pytest.mark.slow  # 3.1 s alone here
def test_without_sb3_the_sb3_trainer_names_the_extra_and_the_batched_trainer(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("total_steps: 64\n", encoding="utf-8")
    script = ("import sys\n"
              "sys.modules['stable_baselines3'] = None  # as on a bare GPU machine\n"
              "from training.cli import main\n"
              f"main(['--config', {str(config)!r}])\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 1
    assert 'pip install "uno-env[train]"' in out.stderr and "trainer: batched" in out.stderr


@pytest.mark.slow
def test_gpu_slices_stop_on_time_with_a_checkpoint_and_the_next_resumes_even_without_the_init_file(
        tmp_path: Path) -> None:
    """training.batched.gpu_slice on the CPU: a slice stops itself after --seconds (exit 0, a checkpoint, the same
    command continues), the next resumes the run and here finishes it; a warm start's init file may be
    gone by then (the weights come from resume/)."""
    seed_run = train(config_from_dict(_tiny(tmp_path / "seed", total_steps=256)))
    init = tmp_path / "init.safetensors"
    init.write_bytes((seed_run / "last.safetensors").read_bytes())
    run_dir = tmp_path / "run"
    config = tmp_path / "slices.yaml"
    config.write_text(yaml.safe_dump(_tiny(run_dir, total_steps=10_000_000, checkpoint_every=100_000,
                                           ppo={"init_from": str(init)})), encoding="utf-8")
    command = [sys.executable, "-m", "training.batched.gpu_slice", "--config", str(config), "--device", "cpu"]
    first = subprocess.run([*command, "--seconds", "8"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    assert "(checkpoint written); run the same command to continue" in first.stderr
    steps = json.loads((run_dir / "resume" / "state.json").read_text())["steps"]  # 0 on a busy machine: still a
    init.unlink()  # checkpoint (of step 0, after set-up), so the test asserts no step count (independent of speed)
    second = subprocess.run([*command, "--seconds", "300", "--total-steps", str(steps + 256)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and "Traceback" not in second.stderr, second.stderr
    state = json.loads((run_dir / "resume" / "state.json").read_text())
    assert f"{run_dir} complete" in second.stderr and state["complete"]
    assert state["steps"] >= steps + 256 and state["resumed_at"] == ([steps] if steps else [])

