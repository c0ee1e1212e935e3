"""Imitation warm start: before PPO, fit the policy (and its critic) to a teacher's play.

An untrained policy plays close to uniformly at random: its rounds last hundreds of
decisions and it loses nearly all of them against the baselines, so the first million PPO
steps go into learning what any heuristic already knows. With ``imitation.teacher`` set
(an agent spec, ``rule`` by default in the shipped configs), ``train`` first

1. plays ``imitation.decisions`` decisions of the teacher against itself at every seat, on
   the tables the config trains on (edition, table size and rule options drawn per round
   like the training env's), recording each decision's observation (with the privileged
   part when ``ppo.privileged_critic``), mask, the teacher's action, and the discounted
   return that seat went on to get (the env's reward times ``env.reward_scale``, ``ppo.gamma``
   per decision of that seat);
2. trains the policy for ``imitation.epochs`` passes over them: cross-entropy of the masked
   policy on the teacher's actions plus ``ppo.vf_coef`` x the squared error of the value on
   the returns (a value fitted to the teacher's play, so PPO's first advantages are sound).

PPO then starts from a policy that plays about as well as the teacher. Everything is
derived from the run's seed. Decisions with a single legal action are left out when
``env.skip_forced`` (the learner never sees them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.registry import make_agent
from training.run.config import TrainConfig
from training.run.critic import privileged_features
from uno_env.core.rules import Rules
from uno_env.observation import action_mask, observe
from uno_env.progress import Progress
from uno_env.uno_v0 import raw_env

__all__ = ["Demonstrations", "imitate", "play_demonstrations"]


@dataclass
class Demonstrations:
    """A teacher's decisions: observations (float16), masks, actions and returns."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    rounds: int

    def __len__(self) -> int:
        return len(self.actions)


def _draw_table(config: TrainConfig, rng: np.random.Generator) -> dict[str, Any]:
    """Edition, table size and rule options for one episode, drawn like the training env's."""
    e = config.env

    def pick(value: Any) -> Any:
        return value[int(rng.integers(len(value)))] if isinstance(value, list) else value

    options = {"edition": pick(e.editions()), "num_players": pick(e.num_players)}
    options.update({key: pick(value) for key, value in e.rules.items()})
    return options


def play_demonstrations(config: TrainConfig, decisions: int, seed: int,
                        on_progress: Callable[[int], None] | None = None) -> Demonstrations:
    """Play the teacher at every seat until ``decisions`` decisions are recorded (``on_progress`` gets the count
    after each round)."""
    e, spec = config.env, config.imitation.teacher
    gamma = config.ppo.gamma
    rng = np.random.default_rng(seed)
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    envs: dict[tuple[tuple[str, Any], ...], raw_env] = {}
    teachers_at: dict[int, list[Any]] = {}  # per table size, built once (a checkpoint teacher loads its file)
    rounds = 0
    while len(actions) < decisions:
        options = _draw_table(config, rng)
        key = tuple(sorted(options.items()))
        env = envs.get(key)
        if env is None:
            Rules(**options)  # a bad option combination fails here, naming the option
            env = envs[key] = raw_env(**options, episode=e.episode, reward=e.reward, max_turns=e.max_turns,
                                      max_players=e.max_players)
        env.reset(seed=int(rng.integers(2**63)))
        n = env.rules.num_players
        if n not in teachers_at:
            teachers_at[n] = [make_agent(spec, allow_import=False) for _ in range(n)]
        teachers = teachers_at[n]
        for teacher in teachers:  # reseeded and reset every round, as the tournament harness does
            teacher.seed(int(rng.integers(2**31)))
            teacher.reset()
        # per seat: indices of its recorded decisions, and the reward collected after each
        recorded: list[list[int]] = [[] for _ in range(n)]
        collected: list[list[float]] = [[] for _ in range(n)]
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            game = env.game
            assert game is not None
            seat = env.possible_agents.index(agent)
            mask = action_mask(game, seat)
            obs = observe(game, seat, e.max_players)
            action = int(teachers[seat].act({"observation": obs, "action_mask": mask}, game.view(seat)))
            if not (e.skip_forced and mask.sum() == 1):
                if config.ppo.privileged_critic:
                    obs = np.concatenate([obs, privileged_features(game, seat, e.max_players)])
                recorded[seat].append(len(actions))
                collected[seat].append(0.0)
                observations.append(obs.astype(np.float16))
                masks.append(mask)
                actions.append(action)
                returns.append(0.0)
            env.step(action)
            for s, name in enumerate(env.possible_agents):
                reward = env.rewards.get(name, 0.0)
                if reward and collected[s]:
                    collected[s][-1] += reward * e.reward_scale
        truncated = any(env.truncations.values())
        for s in range(n):
            # a cut-off round scores truncation_reward (when set) at the seat's last decision
            value = e.truncation_reward if truncated else 0.0
            for index, reward in zip(reversed(recorded[s]), reversed(collected[s]), strict=True):
                value = reward + gamma * value
                returns[index] = value
        rounds += 1
        if on_progress is not None:
            on_progress(len(actions))
    return Demonstrations(np.stack(observations), np.stack(masks), np.asarray(actions, np.int64),
                          np.asarray(returns, np.float32), rounds)


def imitate(policy: Any, config: TrainConfig, seed: int, show_progress: bool = True,
            demos: Demonstrations | None = None, check: Callable[[], None] = lambda: None) -> dict[str, float]:
    """Fit ``policy`` (an SB3 maskable actor-critic) to the teacher (or to ``demos``, recorded already);
    returns the fit's statistics.

    Both phases report progress (``uno_env.progress``; ``show_progress=False``: only a line per epoch).
    ``check`` is called after every round played and every batch fitted (``StopRequests.check``: it
    raises to abandon the warm start).
    """
    import torch

    c = config.imitation
    started = time.perf_counter()
    if demos is None:
        with Progress(f"[imitation] recording {c.teacher}'s play:", c.decisions, "decisions",
                      enabled=show_progress) as bar:
            def recorded(done: int) -> None:
                bar.update(done)
                check()

            demos = play_demonstrations(config, c.decisions, seed, on_progress=recorded)
    played = time.perf_counter() - started
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=c.learning_rate)
    n = len(demos)
    held_out = max(1, n // 50)  # the last rounds' decisions: accuracy on play the fit never saw
    train_n = n - held_out
    stats: dict[str, float] = {}

    def batch(index: np.ndarray) -> tuple[Any, Any, Any, Any]:
        return (torch.as_tensor(demos.observations[index].astype(np.float32)),
                torch.as_tensor(demos.actions[index]), torch.as_tensor(demos.masks[index].astype(bool)),
                torch.as_tensor(demos.returns[index]))

    batches = -(-train_n // c.batch_size)
    policy.set_training_mode(True)
    fit = Progress("[imitation] fitting:", c.epochs * batches, "batches", enabled=show_progress)
    with fit:
        for epoch in range(c.epochs):
            def advance(done: int, epoch: int = epoch) -> None:
                fit.update(epoch * batches + done)
                check()

            _fit_epoch(policy, optimizer, torch.randperm(train_n, generator=generator).numpy(), c.batch_size,
                       config.ppo.vf_coef, batch, advance)
            policy.set_training_mode(False)
            with torch.no_grad():
                index = np.arange(train_n, n)
                obs, act, mask, ret = batch(index)
                values, log_prob, _ = policy.evaluate_actions(obs, act, action_masks=mask)
                dist = policy.get_distribution(obs, action_masks=mask.numpy())
                greedy = dist.distribution.probs.argmax(dim=1)
                stats = {"epoch": epoch + 1, "accuracy": float((greedy == act).float().mean()),
                         "policy_loss": float(-log_prob.mean()),
                         "value_loss": float(torch.mean((values.flatten() - ret) ** 2))}
            policy.set_training_mode(True)
            fit.log(f"[imitation] epoch {stats['epoch']}/{c.epochs}: held-out accuracy {100 * stats['accuracy']:.1f}%, "
                    f"value loss {stats['value_loss']:.3f}")
    policy.set_training_mode(False)
    stats.update({"decisions": float(n), "rounds": float(demos.rounds), "play_seconds": played,
                  "seconds": time.perf_counter() - started})
    return stats


def _fit_epoch(policy: Any, optimizer: Any, order: np.ndarray, batch_size: int, vf_coef: float,
               batch: Callable[[np.ndarray], tuple[Any, Any, Any, Any]], on_batch: Callable[[int], None]) -> None:
    """One pass over the recorded decisions in ``order``: cross-entropy on the teacher's actions plus the value loss."""
    import torch

    for done, start in enumerate(range(0, len(order), batch_size), 1):
        obs, act, mask, ret = batch(order[start:start + batch_size])
        values, log_prob, _ = policy.evaluate_actions(obs, act, action_masks=mask)
        loss = -log_prob.mean() + vf_coef * torch.mean((values.flatten() - ret) ** 2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        on_batch(done)
