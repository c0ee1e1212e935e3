"""A Gymnasium single-agent view of the UNO env: one learner seat, opponents played inside ``step``.

>>> from uno_env import SingleAgentEnv
>>> env = SingleAgentEnv(edition="classic", num_players=4, episode="round")
>>> obs, info = env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))

Also registered with Gymnasium: ``gymnasium.make("uno_env.single_agent:uno_env/UnoSingleAgent-v0",
**kwargs)`` (the ``module:`` prefix imports this module first).

``SingleAgentEnv(opponents=None, seat="random", illegal_reward=-1.0, **env_kwargs)``:

* ``env_kwargs`` are ``uno_env.raw_env``'s (the ``Rules`` options, ``episode``, ``reward``,
  ``max_players``, ``max_turns``, ``render_mode``). A rule option may also be a list, tuple or
  range (one value drawn uniformly per episode) or a callable taking the episode's
  ``numpy.random.Generator`` (its result is used), so training can sample the edition and
  table size per episode: ``SingleAgentEnv(edition=list(EDITIONS), num_players=[2, 3, 4])``.
  The spaces depend only on ``max_players`` (default 10), so they never change.
* ``opponents``: ``None`` (the default: random legal play as RLCard's random agent plays, a
  uniformly chosen playable card when one plays and ``draw`` only when none does, every other
  decision uniform, drawn from the env's generator), one opponent for every other seat, or a
  sequence with one per other seat in seat order (skipping the learner). An opponent is an object with ``act(observation, info) -> int``
  or a callable ``(observation, info) -> int``; ``observation`` is the AEC observation dict
  (``{"observation", "action_mask"}``; only ``action_mask`` for an agent whose
  ``needs_observation`` is False) and ``info`` is ``game.view(seat)``. Before each episode
  an opponent's ``seed(s)`` (with a seed drawn from the env's generator) and ``reset()`` are
  called when it has them. One object serving several seats shares its memory between them.
* ``seat``: the learner's seat, an int or ``"random"`` (drawn per episode).

With the default opponents a classic round is short enough to learn from: an untrained
(uniformly random) learner's episodes took 81 learner steps on average at 2 players (median
52, longest 578) and 34 at 4 (median 28, longest 141), over 200 seeded episodes each; against
uniformly random opponents (``agents.RandomAgent(uniform=True)``, the default before) they took
896 and 487 (longest 4,209 and 2,477).

Observations are the flat ``float32`` vector of ``uno_env.observation`` (space ``Box``);
actions are ids of the fixed layout (space ``Discrete(NUM_ACTIONS)``). ``action_masks()``
returns the learner's legal actions as a bool array, the method sb3-contrib's MaskablePPO
calls; ``info["action_mask"]`` holds the same as int8 (all zeros once the episode is over).
``info["seat"]`` is the learner's seat; ``env.game`` the game (``env.game.view(env.seat)``
gives the learner's structured view).

Rewards are the AEC env's rewards for the learner's seat (zero-sum between seats; see
``uno_env.env``), summed over everything that happened since the learner's previous action,
its losses included: when an opponent ends the game the learner's final ``step`` returns
the negative reward with ``terminated=True``. Rewards are Python floats and the flags Python
bools. An illegal learner action ends the episode (``terminated=True``) with reward
``illegal_reward`` and ``info["illegal_action"] = True``; the opponents' moves are never
replaced or corrected. ``info`` always has the same keys: ``action_mask``, ``seat`` and
``illegal_action``. An action must be a Python int or a numpy integer (a scalar or a 0-d
array): anything else (``55.0``, ``"55"``, ``b"55"``, ``np.float32(55)``, ``True``) raises
``IllegalActionError`` and changes nothing (an integer outside ``0..NUM_ACTIONS - 1`` is an
illegal action like any other).

Training with Stable-Baselines3 on a CPU: call ``torch.set_num_threads(1)`` first (one
thread per process; on 2 shared cores 2,048 MaskablePPO steps took 3-5 s with one thread and
68-93 s with torch's default of two).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from . import GYM_ID, register_envs
from .core.actions import DRAW, NUM_PLAY_ACTIONS
from .core.rules import option_names
from .observation import DEFAULT_MAX_PLAYERS, NUM_ACTIONS, action_mask, observation_bounds, observe
from .render import render_table
from .uno_v0 import action_id as action_id_of
from .uno_v0 import raw_env

__all__ = ["GYM_ID", "MaskInObservation", "SingleAgentEnv"]

Opponent = Any  # an object with act(observation, info) -> int, or such a callable


class SingleAgentEnv(gymnasium.Env):
    """One learner seat against opponents that act inside ``step`` (see the module docstring)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(
        self,
        opponents: Opponent | Sequence[Opponent] | None = None,
        seat: int | str = "random",
        illegal_reward: float = -1.0,
        truncation_reward: float | None = None,
        **env_kwargs: Any,
    ) -> None:
        self.max_players = env_kwargs.get("max_players", DEFAULT_MAX_PLAYERS)
        self.render_mode = env_kwargs.get("render_mode")
        if seat != "random" and (isinstance(seat, bool) or not isinstance(seat, int) or seat < 0):
            raise ValueError(f"seat must be a seat number or 'random', got {seat!r}")
        self._seat_choice: int | None = None if seat == "random" else int(seat)  # None: drawn each episode
        self.illegal_reward = float(illegal_reward)
        # None: a cut-off episode is a truncation (reward 0, bootstrapped by the learner). A number:
        # it is an outcome with that reward (terminated), so a policy cannot profit from stalling.
        self.truncation_reward = None if truncation_reward is None else float(truncation_reward)
        rule_names = set(option_names())
        self._sampled = {k: v for k, v in env_kwargs.items() if k in rule_names and _is_choice(v)}
        self._fixed = {k: v for k, v in env_kwargs.items() if k not in self._sampled}
        if isinstance(opponents, (list, tuple)):
            self._opponents: list[Opponent] | None = list(opponents)
            self._shared: Opponent | None = None
        else:
            self._opponents = None
            self._shared = opponents
        low, high = observation_bounds(self.max_players)
        self.observation_space = spaces.Box(low=low, high=high, dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._envs: dict[tuple[tuple[str, Any], ...], raw_env] = {}
        self._env: raw_env | None = None
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._done = True
        self._render_from = 0
        # Validate the options now (a sampled option is checked with its first draw at reset).
        if not self._sampled:
            self._make_env({})
        self.seat = 0

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; opponents act until the learner decides."""
        super().reset(seed=seed)
        rng = self.np_random
        for _ in range(100):
            drawn = {k: _draw(v, rng) for k, v in self._sampled.items()}
            env = self._make_env(drawn)
            n = env.rules.num_players
            if self._seat_choice is None:
                self.seat = int(rng.integers(n))
            elif self._seat_choice >= n:
                raise ValueError(f"seat {self._seat_choice} does not exist at a {n}-player table")
            else:
                self.seat = self._seat_choice
            self._seat_opponents = self._assign_opponents(n)
            for opp in {id(o): o for o in self._seat_opponents.values() if o is not None}.values():
                if hasattr(opp, "seed"):
                    opp.seed(int(rng.integers(2**31)))
                if hasattr(opp, "reset"):
                    opp.reset()
            env.reset(seed=int(rng.integers(2**63)), options=options)
            self._agent = env.possible_agents[self.seat]
            self._render_from = 0
            self._done = False
            self._advance()
            if not self._done:
                env._cumulative_rewards[self._agent] = 0.0
                if self.render_mode == "human":
                    self.render()
                return self._observation(), self._info()
        raise RuntimeError("100 episodes in a row ended before the learner's first decision; raise max_turns")

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the learner's action, let the opponents act, return the learner's result."""
        if self._done or self._env is None:
            raise RuntimeError("the episode is over; call reset()")
        env = self._env
        action_id = action if type(action) is int else action_id_of(action)  # a non-integer raises
        if not 0 <= action_id < NUM_ACTIONS or not self._mask[action_id]:
            self._done = True
            self._mask = np.zeros(NUM_ACTIONS, np.int8)
            info = self._info(illegal=True)
            return self._observation(), self.illegal_reward, True, False, info
        env.step(action_id)
        self._advance()
        agent = self._agent
        reward = float(env._cumulative_rewards[agent])
        env._cumulative_rewards[agent] = 0.0
        terminated = bool(env.terminations[agent])
        truncated = bool(env.truncations[agent])
        if truncated and self.truncation_reward is not None:
            reward += self.truncation_reward
            terminated, truncated = True, False
        self._done = terminated or truncated
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (for sb3-contrib's MaskablePPO)."""
        return self._mask.astype(bool)

    @property
    def game(self) -> Any:
        """The current ``uno_env.core.Game``."""
        return None if self._env is None else self._env.game

    def render(self) -> str | None:
        """``"ansi"``: the table from the learner's seat as text; ``"human"``: print it."""
        if self.render_mode is None or self._env is None or self._env.game is None:
            return None
        game = self._env.game
        text = render_table(game, self.seat, self._render_from)
        self._render_from = game.log_length
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ internals
    def _make_env(self, drawn: dict[str, Any]) -> raw_env:
        key = tuple(sorted(drawn.items(), key=lambda kv: kv[0]))
        env = self._envs.get(key)
        if env is None:
            env = raw_env(**{**self._fixed, **drawn, "render_mode": None})
            if env.max_players != self.max_players:
                raise ValueError("max_players cannot vary")
            if len(self._envs) >= 256:
                self._envs.clear()
            self._envs[key] = env
        self._env = env
        return env

    def _assign_opponents(self, n: int) -> dict[int, Opponent | None]:
        others = [s for s in range(n) if s != self.seat]
        if self._opponents is None:
            return dict.fromkeys(others, self._shared)
        if len(self._opponents) != n - 1:
            raise ValueError(f"{len(self._opponents)} opponents given for a {n}-player table (need {n - 1})")
        return dict(zip(others, self._opponents, strict=True))

    def _advance(self) -> None:
        """Let the opponents decide until the learner must, or the episode ends."""
        env = self._env
        assert env is not None
        learner = self._agent
        rng = self.np_random
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                self._done = True
                return
            if agent == learner:
                return
            game = env.game
            assert game is not None
            seat = env.seat(agent)
            opponent = self._seat_opponents[seat]
            if opponent is None:
                action = _random_play_first(game.legal_actions(), rng)
            else:
                if getattr(opponent, "needs_observation", True):
                    observation = env.observe(agent)
                else:
                    observation = {"action_mask": action_mask(game, seat)}
                act: Callable[[Any, Any], Any] = opponent.act if hasattr(opponent, "act") else opponent
                action = int(act(observation, game.view(seat)))
            env.step(action)

    def _observation(self) -> np.ndarray:
        assert self._env is not None and self._env.game is not None
        return observe(self._env.game, self.seat, self.max_players)

    def _info(self, illegal: bool = False) -> dict[str, Any]:
        assert self._env is not None and self._env.game is not None
        if not self._done:
            self._mask = action_mask(self._env.game, self.seat)
        else:
            self._mask = np.zeros(NUM_ACTIONS, np.int8)
        return {"action_mask": self._mask.copy(), "seat": self.seat, "illegal_action": illegal}


register_envs()


def _random_play_first(legal: Sequence[int], rng: np.random.Generator) -> int:
    """The default opponent: a uniformly chosen playable card when one plays, else uniform over ``legal``."""
    if DRAW in legal:
        plays = [a for a in legal if a < NUM_PLAY_ACTIONS]
        if plays:
            return int(plays[int(rng.integers(len(plays)))])
    return int(legal[int(rng.integers(len(legal)))])


def _is_choice(value: Any) -> bool:
    return isinstance(value, (list, tuple, range)) or callable(value)


def _draw(value: Any, rng: np.random.Generator) -> Any:
    if callable(value):
        return value(rng)
    options = list(value)
    return options[int(rng.integers(len(options)))]


class MaskInObservation(gymnasium.ObservationWrapper):
    """The action mask inside the observation, as Tianshou reads it: ``{"obs": vector, "mask": int8 mask}``.

    ``uno_env.MaskInObservation(gymnasium.make(uno_env.GYM_ID, ...))``. Tianshou's policies take an
    action mask from ``obs.mask`` (its ``PettingZooEnv`` gives one that way); a mask kept in ``info``
    does not serve, because a buffer row stores the ``info`` that ``step`` returned, which belongs to
    the row's ``obs_next``. ``info`` keeps its ``action_mask`` too. The observation space is
    ``Dict(obs=<the env's Box>, mask=MultiBinary(NUM_ACTIONS))``.
    """

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        actions = env.action_space
        if not isinstance(actions, spaces.Discrete):
            raise TypeError(f"MaskInObservation needs a Discrete action space, got {actions!r}")
        self.observation_space = spaces.Dict({"obs": env.observation_space, "mask": spaces.MultiBinary(int(actions.n))})
        self._mask = np.zeros(int(actions.n), np.int8)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._mask = np.asarray(info["action_mask"], np.int8)
        return self.observation(obs), info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._mask = np.asarray(info["action_mask"], np.int8)
        return self.observation(obs), reward, terminated, truncated, info

    def observation(self, observation: Any) -> dict[str, np.ndarray]:
        """The env's observation with the mask of the position it shows."""
        return {"obs": observation, "mask": self._mask.copy()}
