"""The opponent pool and the training env: baselines plus frozen snapshots of the learner.

``PoolOpponent`` is the single opponent object a ``SingleAgentEnv`` is given; it draws an
opponent for each seat at that seat's first decision of every episode, by the pool's draw rule
(``training.run.pool.draw_opponents``, the batched trainer's too: a baseline with chance
``baseline_share`` or always before self-play begins, else the newest snapshot with chance
``latest_share``, else a uniformly drawn older one) from three uniforms of its generator. Snapshots are
``agents.PPOAgent`` checkpoints (numpy inference, no torch). Each seat gets its own baseline
instance, so agents with memory never share it across seats.

``TrainingEnv`` wraps ``SingleAgentEnv`` for sb3-contrib's MaskablePPO: it forwards
``action_masks()`` and, when an episode ends, adds ``info["outcome"]`` (who sat where, who
won, the edition and table size, whether it was truncated) for the training callback.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from agents.base import Agent
from agents.ppo_agent import PPOAgent
from agents.registry import make_agent
from training.run.config import TrainConfig
from training.run.critic import critic_bounds, privileged_features
from training.run.pool import draw_opponents
from uno_env.single_agent import SingleAgentEnv

__all__ = ["PoolOpponent", "TrainingEnv", "make_training_env"]


class PoolOpponent:
    """Every non-learner seat of one env; draws who plays each seat per episode (see module docstring)."""

    needs_observation = True

    def __init__(self, baselines: list[str], baseline_share: float, latest_share: float,
                 deterministic_snapshots: bool = False) -> None:
        self.baselines = list(baselines)
        self.baseline_share = baseline_share
        self.latest_share = latest_share
        self.deterministic_snapshots = deterministic_snapshots
        self.snapshots: list[tuple[str, str]] = []  # (name, path), oldest first
        self._loaded: dict[str, PPOAgent] = {}
        self._baseline_agents: dict[tuple[int, str], Agent] = {}
        self.rng = np.random.default_rng()
        """The draws' generator (``seed`` resets it): three uniforms per seat, then the opponent's seed."""
        self.self_play = True
        self.assigned: dict[int, str] = {}
        self._agents: dict[int, Any] = {}

    # Called by SingleAgentEnv before each episode.
    def seed(self, seed: int) -> None:
        """Reseed the draws (and, through them, every opponent's own generator)."""
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """A new episode: every seat's opponent is drawn again at its first decision."""
        self.assigned = {}
        self._agents = {}

    def set_pool(self, snapshots: list[tuple[str, str]], self_play: bool = True) -> None:
        """Replace the snapshot list (name, path); ``self_play=False`` plays baselines only."""
        self.snapshots = [(str(n), str(p)) for n, p in snapshots]
        keep = {p for _, p in self.snapshots}
        self._loaded = {p: a for p, a in self._loaded.items() if p in keep}
        self.self_play = self_play

    def _draw(self, seat: int) -> tuple[str, Any]:
        rng = self.rng
        snapshots = len(self.snapshots) if self.self_play else 0
        index = int(draw_opponents(rng.random(3), len(self.baselines), snapshots, self.baseline_share,
                                   self.latest_share))
        if index < len(self.baselines):
            name = self.baselines[index]
            agent = self._baseline_agents.get((seat, name))
            if agent is None:
                agent = self._baseline_agents[(seat, name)] = make_agent(name, allow_import=False)
        else:
            name, path = self.snapshots[index - len(self.baselines)]
            agent = self._loaded.get(path)
            if agent is None:
                agent = self._loaded[path] = PPOAgent.load(path, deterministic=self.deterministic_snapshots)
        agent.seed(int(rng.integers(2**31)))
        agent.reset()
        return name, agent

    def act(self, observation: Any, info: Any) -> int:
        """The action of whoever plays this seat this episode."""
        seat = int(info["seat"])
        agent = self._agents.get(seat)
        if agent is None:
            name, agent = self._draw(seat)
            self.assigned[seat] = name
            self._agents[seat] = agent
        return int(agent.act(observation, info))


class TrainingEnv(gymnasium.Wrapper):
    """``SingleAgentEnv`` plus ``info["outcome"]`` at episode end and a forwarded ``action_masks``.

    ``skip_forced``: a learner decision with one legal action is taken at once, inside ``step``
    (its reward is added to the step's), so the learner only sees real choices.
    ``privileged``: each observation is followed by ``training.run.critic.privileged_features``
    (for a privileged critic; the policy network reads only the public part).
    ``reward_scale``: the env's rewards are multiplied by it (``reward="score"`` pays points, in the
    hundreds); a cut-off episode's ``truncation_reward`` is not, it is already in the scaled units.
    """

    def __init__(self, env: SingleAgentEnv, pool: PoolOpponent, skip_forced: bool = False,
                 privileged: bool = False, reward_scale: float = 1.0) -> None:
        super().__init__(env)
        self.pool = pool
        self.skip_forced = skip_forced
        self.privileged = privileged
        self.reward_scale = reward_scale
        if privileged:
            low, high = critic_bounds(env.max_players)
            self.observation_space = gymnasium.spaces.Box(low=low, high=high, dtype=np.float32)
        self._length = 0

    def reset(self, **kwargs: Any) -> Any:
        """Start an episode."""
        self._length = 0
        obs, info = self.env.reset(**kwargs)
        if self.skip_forced:
            obs, _, terminated, truncated, info = self._skip(obs, 0.0, False, False, info)
            if terminated or truncated:  # the round ended on forced moves alone: start another
                return self.reset(options=kwargs.get("options"))
        return self._observe(obs), info

    def step(self, action: Any) -> Any:
        """Step; at the end add the outcome record."""
        obs, reward, terminated, truncated, info = self._step(action)
        self._length += 1
        if self.skip_forced:
            obs, reward, terminated, truncated, info = self._skip(obs, reward, terminated, truncated, info)
        if terminated or truncated:
            info["outcome"] = self._outcome(reward, truncated)
        return self._observe(obs), reward, terminated, truncated, info

    def _step(self, action: int) -> Any:
        """One env step, its reward scaled unless it is a cut-off episode's ``truncation_reward``."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        game = self.env.game  # type: ignore[attr-defined]
        cut_off = (terminated or truncated) and game is not None and not game.is_round_over
        return obs, float(reward) * (1.0 if cut_off else self.reward_scale), terminated, truncated, info

    def _skip(self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]) -> Any:
        """Take the learner's forced decisions (one legal action) until a real choice or the end."""
        while not (terminated or truncated):
            legal = np.flatnonzero(info["action_mask"])
            if len(legal) != 1:
                break
            obs, more, terminated, truncated, info = self._step(int(legal[0]))
            reward += more
            self._length += 1
        return obs, reward, terminated, truncated, info

    def _observe(self, obs: np.ndarray) -> np.ndarray:
        if not self.privileged:
            return obs
        env: SingleAgentEnv = self.env  # type: ignore[assignment]
        return np.concatenate([obs, privileged_features(env.game, env.seat, env.max_players)])

    def _outcome(self, reward: float, truncated: bool) -> dict[str, Any]:
        env: SingleAgentEnv = self.env  # type: ignore[assignment]
        game = env.game
        seat = env.seat
        winners: list[int] = []
        # A cut-off episode scored by env.truncation_reward ends "terminated" with the round unfinished.
        truncated = truncated or (game is not None and not game.is_round_over)
        if not truncated and game is not None:
            if game.is_game_over:
                winners = [int(w) for w in game.winners]
            elif game.round_winner is not None:
                winners = [int(game.round_winner)]
        return {
            "edition": game.rules.edition, "num_players": game.num_players, "seat": seat,
            "opponents": {int(s): n for s, n in self.pool.assigned.items()},
            "winners": winners, "won": seat in winners, "truncated": bool(truncated),
            "length": self._length, "reward": float(reward),
        }

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (for MaskablePPO)."""
        return self.env.action_masks()  # type: ignore[attr-defined, no-any-return]

    def set_pool(self, snapshots: list[tuple[str, str]], self_play: bool = True) -> None:
        """Forwarded to the pool (called through ``VecEnv.env_method``)."""
        self.pool.set_pool(snapshots, self_play)


def make_training_env(config: TrainConfig) -> TrainingEnv:
    """One training env for ``config`` (edition, table size and rule options sampled per episode)."""
    e, p = config.env, config.pool
    pool = PoolOpponent(p.baselines, p.baseline_share, p.latest_share, p.deterministic)
    options: dict[str, Any] = {}
    editions = e.editions()
    options["edition"] = editions if len(editions) > 1 else editions[0]
    options["num_players"] = e.num_players if isinstance(e.num_players, int) or len(e.num_players) > 1 \
        else e.num_players[0]
    for key, value in e.rules.items():
        options[key] = value if not isinstance(value, list) or len(value) > 1 else value[0]
    env = SingleAgentEnv(opponents=pool, episode=e.episode, reward=e.reward, max_turns=e.max_turns,
                         max_players=e.max_players, truncation_reward=e.truncation_reward or None, **options)
    return TrainingEnv(env, pool, skip_forced=e.skip_forced, privileged=config.ppo.privileged_critic,
                       reward_scale=e.reward_scale)
