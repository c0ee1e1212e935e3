"""UNO as a PettingZoo AEC environment (``uno_v0``), for every edition and table size.

>>> import uno_env
>>> env = uno_env.env(edition="monster_high", num_players=4, target_score=200)
>>> env.reset(seed=7)
>>> for agent in env.agent_iter():
...     observation, reward, termination, truncation, info = env.last()
...     if termination or truncation:
...         action = None
...     else:
...         action = env.action_space(agent).sample(observation["action_mask"])
...     env.step(action)

Same seed, same game: ``reset(seed=7)`` fixes the deal, and the loop above is reproducible
once the action spaces' sampling is seeded too (``env.action_space(agent).seed(7)`` for each
agent after ``reset``, or sample from a ``numpy.random.Generator`` of your own).

This module is the PettingZoo-style entry point (like ``pettingzoo.classic.connect_four_v3``):
``uno_env.uno_v0.env(**kwargs)`` stacks PettingZoo's standard wrappers like its classic games
(``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``; subclasses
that read the episode's attributes from the bare env directly instead of through each layer's
``__getattr__``, pass the usual calls on in one hop after the same checks, and whose
out-of-bounds check raises ``IllegalActionError``);
``uno_env.uno_v0.raw_env(**kwargs)`` is the bare environment; ``uno_env.env`` and
``uno_env.raw_env`` are the same two. ``pettingzoo.make("aec", "uno_env/uno-v0", **kwargs)``
builds the wrapped one once registered (see ``uno_env.register_envs``).

Not parallelizable: ``metadata["is_parallelizable"]`` is False, since one seat decides at a
time and who decides next depends on the action (UNO calls, challenges, catches), so
``pettingzoo.utils.conversions.aec_to_parallel`` refuses the env. For a ``ParallelEnv``,
``pettingzoo.utils.conversions.turn_based_aec_to_parallel(uno_env.env())`` is the way: its
``step(actions)`` applies the action of the agent that decides now (named by every
``infos[agent]["active_agent"]`` it returns) and ignores the others' (their masks are all zero).

Arguments
---------
* the ``Rules`` options (``uno_env.core.rules``): ``edition`` (``classic``, ``monster_high``,
  ``angry_birds``, ``masters_of_the_universe``), ``num_players`` (2-10), ``target_score``
  (500), ``uno_call``, ``allow_bluff``, ``scoring``, ``first_dealer`` and the variants
  (``teams``, ``elimination``, ``stacking``, ``seven_zero``, ``draw_until_playable``);
  invalid options raise ``RulesError`` (an unknown keyword raises ``UnknownOptionError``, a
  ``RulesError`` that is also a ``TypeError``, Python's error for an unexpected argument);
* ``episode``: ``"game"`` (default: rounds are dealt one after another until the game is won)
  or ``"round"`` (the episode is one round);
* ``reward``: ``"win"`` (default) or ``"score"`` (see Rewards);
* ``max_players``: the observation is sized for tables of up to this many seats (default
  10; at least ``num_players``), so one network fits every table size;
* ``max_turns``: decisions per episode before it is truncated. Default ``DEFAULT_MAX_TURNS``:
  10,000 for ``"round"`` and 100,000 for ``"game"``. Uniformly random play (what an untrained
  policy does) draws half the time; measured over 12 seeds per setting, a random round's
  median length was 450-7,400 decisions and its longest 1,600-44,000 in most settings, but
  Masters of the Universe at 4 players (Greyskull feeds 3 cards to every other seat) had a
  median near 300,000 and rounds past 1,200,000, so such episodes are cut off;
* ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table as text from the
  deciding seat's view, no hidden cards) or ``"human"`` (prints it);
* ``infos``: ``None`` (default: every ``infos[agent]`` is an empty dict), ``"view"`` (the
  deciding agent's structured view) or ``"mask"`` (every agent's action mask); see Infos.

Agents
------
``player_0 ... player_{n-1}``; ``player_i`` sits in seat ``i``. Only the agent that decides
now acts (``agent_selection``); decisions include answering a Wild Draw Four, calling UNO
and catching, so the turn order is not a plain cycle.

Action space
------------
``Discrete(NUM_ACTIONS)`` with the fixed layout of ``uno_env.core.actions`` (the same ids
for every edition and table size; the special wild ``WU``/``WK``/``WG`` has one id, 54).
An action is a Python int or a numpy integer (a scalar or a 0-d array); anything else
(``55.0``, ``"55"``, ``b"55"``, ``np.float32(55)``, ``True``), and ``None`` from an agent that
must act, raises ``IllegalActionError`` and changes nothing, from ``raw_env.step`` and from
``env().step`` alike (also under ``python -O``; ``action_id(action)`` is the check). Under
``env()`` an int outside ``0..NUM_ACTIONS - 1`` raises it too (PettingZoo's out-of-bounds check,
typed); an id in range that is not legal now ends the episode (see Rewards).
``uno_env.core.action_texts(EDITIONS[name])`` gives the id <-> text table in that edition's
card letters and color names:

======  ======================  =================================================
id      text                    meaning
======  ======================  =================================================
0-51    ``play <code>``         play a colored card, id ``color * 13 + rank``
52-54   ``play W|W4|WU|WK|WG``  play a Wild, a Wild Draw Four, the special wild
55      ``draw``                draw one card instead of playing
56      ``keep``                keep the card just drawn (forced when it does not
                                play)
57-60   ``color <name>``        name the active color after a wild
61-64   ``give <name>``         Urrrhhh: give away every card of that color
65-66   ``challenge|accept``    answer a Wild Draw Four
67-68   ``uno|no-uno``          call UNO or not
69-70   ``catch|no-catch``      catch a missed UNO call or not
71-79   ``swap +k``             seven-zero house rule: swap hands with the seat k
                                places clockwise
======  ======================  =================================================

Observation space
-----------------
``Dict({"observation": Box(float32, (observation_size(max_players),)), "action_mask":
Box(0, 1, (NUM_ACTIONS,), int8)})``. The vector's named slices are documented in
``uno_env.observation`` (own hand, top card, active color, phase, direction, drawn card,
discard counts, draw pile size, pending penalty and ``W4`` color, edition, rule flags, and
per seat relative to the observer: presence, who acts, who played the pending card, dealer,
hand size, score, UNO called, teammate, eliminated, and the cards of theirs it has seen).
It holds exactly what that seat may know. The mask is 1 for each legal action of the agent
that decides now and all zeros for every other agent (and for everyone once the episode has
ended).

Infos
-----
By default ``infos[agent]`` is an empty dict for every agent, always: fixed keys and shapes,
so libraries that store infos in buffers (Tianshou, RLlib, AgileRL) can, and the step loop
builds nothing it would throw away. The structured view of what a seat may know
(``game.view(seat)``, keys documented in ``uno_env.core.view``; what rule-based agents,
search and humans read) is one call away: ``env.view(agent)``, for any agent at any time.
With ``infos="view"``, ``infos[agent]`` of the agent that decides now holds its view (built
after each step, so ``last()`` returns it) and every other agent's is ``{}``; once the episode
has ended every agent's holds its final view. A view is a snapshot that later steps do not
change. With ``infos="mask"``, every ``infos[agent]`` is ``{"action_mask": int8 vector}``, the
same mask as in that agent's observation (fixed keys and shapes, so buffers can store it), where
AgileRL's parallel algorithms and other libraries that read the mask from the infos look.

Rewards
-------
Zero-sum; every agent receives its own rewards through ``last()``, the final ones after the
end included (each terminated agent is stepped with ``None`` once, as PettingZoo requires).

* ``reward="win"``, ``episode="game"``: 0 until the game ends; then each of the ``k``
  winners gets ``+1/k`` and every other seat ``-1/(n-k)`` (one winner: ``+1`` and
  ``-1/(n-1)``; teams: both partners share the win).
* ``reward="win"``, ``episode="round"``: at the round's end the seat that went out gets
  ``+1`` and every other seat ``-1/(n-1)`` (teams: the winner's team shares ``+1``).
* ``reward="score"``: at each round's end, points. Standard scoring: the seat that went out
  gets the points it scores (the value of the cards left in the others' hands) and each other
  seat minus the value of its own hand. Teams: the winning team's points split evenly among
  its members, each opponent minus its own hand. Lowest scoring and elimination (each seat
  adds its own hand): ``mean(hand values) - own hand value``, the zero-sum version of "a
  low total is good".
* Truncation (``max_turns``) gives 0 to everyone and sets ``truncations``.
* Under ``env()`` an illegal action ends the episode: the offender gets -1 and the others 0
  (PettingZoo's ``TerminateIllegalWrapper``). ``raw_env`` raises ``IllegalActionError``
  instead and changes nothing.

``reset(seed=..., options={"game": game})`` starts from a copy of a given ``Game`` (same
rules) instead of a new deal, for tests and evaluation positions.

Version history
---------------
* ``uno_v0``: first version (observation layout ``OBSERVATION_VERSION`` 1).
* ``uno_v0``, unreleased (CHANGELOG.md):

  - rules (RULES.md 3.4, 7.4): every turn draw that yields a card is followed by a
    ``play_drawn`` decision of the drawer (``play`` it if it plays, ``keep``; a card that
    does not play gives a forced ``keep``, one legal action), where before an unplayable
    drawn card was kept at once; under ``draw_until_playable`` the card that ends the drawing
    must be played (``keep`` was offered). So a seed deals the same cards but an episode has
    these extra decisions. The observation is version 2 (same layout; ``uno_env.observation``'s
    version history says why version 1 policies still read it, and ``agents.PPOAgent`` loads
    checkpoints of both);
  - the observation is version 3: a ``drew_on`` slice appended (who drew on what, as shares of
    each seat's hand), 1,009 floats at ``max_players=10`` (was 839); checkpoints of versions 1
    and 2 load widened and play as before;
  - ``infos[agent]`` is ``{}`` by default (it was ``game.view(seat)`` built on read);
    ``env.view(agent)`` or ``infos="view"`` give the view;
  - actions must be Python or numpy integers: ``raw_env.step`` raises ``IllegalActionError``
    for floats, text, bytes and bools (it converted them, ``50.9`` playing id 50);
  - the module is ``uno_env.uno_v0`` (was ``uno_env.env``, a module that was also callable);
    ``uno_env.env(...)`` and ``uno_env.raw_env(...)`` work as before, ``uno_env.env`` is now
    the factory function; the registry entry point is ``uno_env.uno_v0:env``;
  - registration by ``import uno_env``: with the libraries already imported, and with the
    others right after they are imported (a one-shot hook, so TorchRL's ``GymEnv`` finds the
    id), or ``uno_env.register_envs()``;
  - ``env()`` returns subclasses of PettingZoo's stock wrappers that bind the episode's
    attributes (PettingZoo forwards them through ``__getattr__`` per layer, which cost more than
    the game), and whose usual calls (``agent_iter``, ``last``, a legal ``step``) skip the layers'
    forwarding after the same checks (every result, error and warning as PettingZoo's); its
    out-of-bounds check raises ``IllegalActionError`` (was ``AssertionError``, and
    an ``IndexError`` under ``python -O``), for non-integer actions too;
  - an unknown keyword raises ``UnknownOptionError`` (a ``RulesError`` and a ``TypeError``);
  - ``infos="mask"`` gives every agent ``{"action_mask": ...}``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers import order_enforcing

from . import register_envs
from .core import actions as A
from .core.errors import IllegalActionError
from .core.game import Game
from .core.rules import Rules
from .core.view import View, seat_view
from .observation import (
    DEFAULT_MAX_PLAYERS,
    NUM_ACTIONS,
    Encoder,
    action_mask,
    observation_bounds,
)
from .render import render_table

__all__ = ["DEFAULT_MAX_TURNS", "EPISODE_MODES", "INFO_MODES", "REWARD_MODES", "action_id", "env", "raw_env"]

EPISODE_MODES = ("game", "round")
REWARD_MODES = ("win", "score")
INFO_MODES = (None, "view", "mask")
DEFAULT_MAX_TURNS = {"round": 10_000, "game": 100_000}
ILLEGAL_REWARD = -1
_MASK_CACHE_SIZE = 4096  # legal-action sets whose mask an env keeps


def env(**kwargs: Any) -> AECEnv:
    """The UNO AEC env wrapped like PettingZoo's classic games (see the module docstring)."""
    aec: AECEnv = raw_env(**kwargs)
    aec = TerminateIllegalWrapper(aec, illegal_reward=ILLEGAL_REWARD)
    aec = AssertOutOfBoundsWrapper(aec)
    aec = OrderEnforcingWrapper(aec)
    return aec


class BoundAttributes:
    """Reads the episode's attributes from the bare env in one hop.

    PettingZoo's ``BaseWrapper`` forwards every attribute it lacks through ``__getattr__``, one
    call per wrapper layer; ``last()``, ``agent_iter()`` and the wrappers' own checks read these
    dozens of times per decision. Properties are found before ``__getattr__``, and one that
    raises ``AttributeError`` (before ``reset``) falls back to it, so ``OrderEnforcingWrapper``
    still refuses them before ``reset``.
    """

    _bare: raw_env

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        super().__init__(env, *args, **kwargs)  # type: ignore[call-arg]
        self._bare = env.unwrapped

    @property
    def agents(self) -> list[str]:
        return self._bare.agents

    @property
    def agent_selection(self) -> str:
        return self._bare.agent_selection

    @property
    def rewards(self) -> dict[str, float]:
        return self._bare.rewards

    @property
    def terminations(self) -> dict[str, bool]:
        return self._bare.terminations

    @property
    def truncations(self) -> dict[str, bool]:
        return self._bare.truncations

    @property
    def infos(self) -> dict[str, Any]:
        return self._bare.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self._bare._cumulative_rewards


class TerminateIllegalWrapper(BoundAttributes, wrappers.TerminateIllegalWrapper):  # type: ignore[misc]
    """PettingZoo's ``TerminateIllegalWrapper`` with the episode's attributes bound (``BoundAttributes``).

    ``observe`` keeps the deciding agent's observation and info as PettingZoo's does, reading the
    bare env once. ``step`` hands the usual decision (a live agent plays an action that the mask
    it last observed allows) straight to the env, which is what PettingZoo's ``step`` does with
    it; everything else (an illegal action, a finished agent, no observation yet) goes through
    PettingZoo's ``step`` itself.
    """

    def observe(self, agent: str) -> Any:
        obs = self.env.observe(agent)
        bare = self._bare
        if agent == bare.agent_selection:
            info: Any = bare.infos.get(agent, {})
            self._prev_obs = obs
            self._prev_info = info
        return obs

    def step(self, action: Any) -> None:
        bare = self._bare
        agent = bare.agent_selection
        prev = self._prev_obs
        if (type(prev) is dict and not (bare.terminations[agent] or bare.truncations[agent])
                and "action_mask" in prev and prev["action_mask"][action]):
            self._prev_obs = self._prev_info = None
            self.env.step(action)
        else:
            super().step(action)


class OrderEnforcingWrapper(BoundAttributes, wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's ``OrderEnforcingWrapper`` with the episode's attributes bound (``BoundAttributes``).

    After ``reset``, ``step`` and ``last`` do what PettingZoo's do in one hop to the bare env
    (its order checks pass then, but for stepping with no agents left, which goes through
    PettingZoo's ``step`` and its warning); before ``reset`` PettingZoo's own methods raise.
    """

    def step(self, action: Any) -> None:
        if self._has_reset and self._bare.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, Any]:
        if not self._has_reset:
            return super().last(observe)  # type: ignore[no-any-return]
        bare = self._bare
        agent = bare.agent_selection
        observation = self.env.observe(agent) if observe else None
        return (observation, bare._cumulative_rewards[agent], bare.terminations[agent],
                bare.truncations[agent], bare.infos[agent])

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        if not self._has_reset:
            return super().agent_iter(max_iter)  # type: ignore[no-any-return]
        return AECOrderEnforcingIterable(self, max_iter)


class AECOrderEnforcingIterable(order_enforcing.AECOrderEnforcingIterable):  # type: ignore[misc]
    """PettingZoo's ``agent_iter()`` iterable, iterating with ``AECOrderEnforcingIterator``."""

    def __iter__(self) -> AECOrderEnforcingIterator:
        return AECOrderEnforcingIterator(self.env, self.max_iter)


class AECOrderEnforcingIterator(order_enforcing.AECOrderEnforcingIterator):  # type: ignore[misc]
    """PettingZoo's ``agent_iter()`` iterator (same stop, same check), reading the bare env in one hop."""

    def __next__(self) -> str:
        env = self.env
        bare = env._bare
        if not bare.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return bare.agent_selection  # type: ignore[no-any-return]


class AssertOutOfBoundsWrapper(BoundAttributes, wrappers.AssertOutOfBoundsWrapper):  # type: ignore[misc]
    """PettingZoo's out-of-bounds check as a typed error: ``IllegalActionError``, also under ``python -O``.

    An action that is not an integer id (``55.0``, ``"55"``, ``None`` for an agent that must act)
    or an id outside ``0..NUM_ACTIONS - 1`` raises ``IllegalActionError`` and changes nothing,
    as ``raw_env.step`` does; an id in range that is not legal now goes on to
    ``TerminateIllegalWrapper`` (the episode ends, the offender gets -1).
    """

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < NUM_ACTIONS:  # an id in range passes for every agent
            self.env.step(action)
            return
        agent = self._bare.agent_selection
        if not (self._bare.terminations[agent] or self._bare.truncations[agent]):
            if action is None:
                raise IllegalActionError(f"{agent} must act now; None is only for a finished agent")
            number = action if type(action) is int else action_id(action)
            if not 0 <= number < NUM_ACTIONS:
                raise IllegalActionError(f"an action is an int id 0..{NUM_ACTIONS - 1}, got {number}")
        self.env.step(action)


def action_id(action: Any) -> int:
    """``action`` as an int id: a Python int or a numpy integer (scalar or 0-d array), else ``IllegalActionError``.

    Floats (``55.0``, ``np.float32(55)``, ``50.9``), text (``"55"``), bytes and bools are refused
    rather than converted, so a policy that emits the wrong type fails loudly. The id's range
    and legality are the game's to check.
    """
    if type(action) is int:
        return action
    if isinstance(action, np.integer) or (
        isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer)
    ):
        return int(action)
    if isinstance(action, int) and not isinstance(action, bool):  # an int subclass such as core's Action
        return int(action)
    raise IllegalActionError(
        f"an action is an int id 0..{NUM_ACTIONS - 1} (a Python int or a numpy integer), "
        f"got {action!r} of type {type(action).__name__}"
    )


class raw_env(AECEnv, EzPickle):  # type: ignore[misc]  # noqa: N801 (PettingZoo's naming)
    """The bare UNO AEC environment; ``env()`` wraps it. Arguments: see the module docstring."""

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi"],
        "name": "uno_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        episode: str = "game",
        reward: str = "win",
        max_players: int = DEFAULT_MAX_PLAYERS,
        max_turns: int | None = None,
        infos: str | None = None,
        **rule_options: Any,
    ) -> None:
        EzPickle.__init__(
            self, render_mode=render_mode, episode=episode, reward=reward, max_players=max_players,
            max_turns=max_turns, infos=infos, **rule_options,
        )
        super().__init__()
        self.rules = Rules(**rule_options)
        n = self.rules.num_players
        if episode not in EPISODE_MODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODE_MODES)}, got {episode!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, got {reward!r}")
        if isinstance(max_players, bool) or not isinstance(max_players, int) or not n <= max_players <= 10:
            raise ValueError(f"max_players must be an int from num_players ({n}) to 10, got {max_players!r}")
        if max_turns is None:
            max_turns = DEFAULT_MAX_TURNS[episode]
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        if infos not in INFO_MODES:
            raise ValueError(f"infos must be None (empty dicts), 'view' (the seat views) or 'mask' "
                             f"(the action masks), got {infos!r}")
        self.info_mode = infos
        self.episode = episode
        self.reward_mode = reward
        self.max_players = max_players
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat_of = {agent: i for i, agent in enumerate(self.possible_agents)}
        low, high = observation_bounds(max_players)
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(low=low, high=high, dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            })
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self._seeder = random.Random()
        self._masks: dict[tuple[int, ...], np.ndarray] = {}
        self._encode = Encoder(self.rules, max_players).encode  # this env's encoder (its caches are its own)
        self._ended = False
        self._render_from = 0
        self.game: Game | None = None

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The same Dict space object for every call (PettingZoo requires it)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(NUM_ACTIONS)``."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game (or start from ``options["game"]``); ``seed`` seeds this and later resets."""
        if seed is not None:
            self._seeder = random.Random(seed)
        start = (options or {}).get("game")
        if start is not None:
            if not isinstance(start, Game) or start.rules != self.rules:
                raise ValueError("options['game'] must be a uno_env.core.Game with this env's rules")
            if start.is_round_over:
                raise ValueError("options['game'] must be a position where a seat decides")
            self.game = start.clone()
        else:
            self.game = Game(self.rules, seed=self._seeder.getrandbits(64))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._rewards_set = False
        self._ended = False
        self.turns = 0
        self._render_from = 0
        self._in_round = [not e for e in self.game.eliminated]
        self.agent_selection = self.possible_agents[self._deciding_seat()]
        self.infos: dict[str, View | dict[str, Any]] = {agent: {} for agent in self.agents}
        if self.info_mode == "view":
            self._refresh_view_infos(None)
        elif self.info_mode == "mask":
            self._refresh_mask_infos()

    def step(self, action: Any) -> None:
        """Apply the deciding agent's action (an id); a terminated agent steps ``None``."""
        agent = self.agent_selection
        if self._ended:  # every agent is terminated or truncated once the episode has ended
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must act now; None is only for a finished agent")
        game = self.game
        assert game is not None
        game.step(action if type(action) is int else action_id(action))  # illegal: raises, changes nothing
        self.turns += 1
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_set:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_set = False
        seat = game.current_player
        if seat is None:  # the round is over
            self._end_of_round()
            seat = game.current_player
        if not self._ended and self.turns >= self.max_turns:
            self._ended = True
            self.truncations = dict.fromkeys(self.agents, True)
        if not self._ended:
            assert seat is not None, "a seat decides whenever the episode goes on"
            self.agent_selection = self.possible_agents[seat]
        if self._rewards_set:
            self._accumulate_rewards()
        if self.info_mode == "view":
            self._refresh_view_infos(agent)
        elif self.info_mode == "mask":
            self._refresh_mask_infos()
        if self.render_mode == "human":
            self.render()

    def _end_of_round(self) -> None:
        game = self.game
        assert game is not None
        n = game.num_players
        last = self.episode == "round" or game.is_game_over
        values = None
        if self.reward_mode == "score":
            values = _score_rewards(game, self._in_round)
        elif self.episode == "round":
            winner = game.round_winner
            assert winner is not None, "a round that is over has its winner"
            values = _share([winner], game, n)
        elif game.is_game_over:
            values = _share(list(game.winners), game, n)
        if values is not None:
            for seat, value in enumerate(values):
                self.rewards[self.possible_agents[seat]] = value
            self._rewards_set = True
        if last:
            self._ended = True
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            game.next_round()
            self._in_round = [not e for e in game.eliminated]

    # ------------------------------------------------------------------ views
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 vector}`` for ``agent``."""
        game = self.game
        assert game is not None, "call reset() first"
        seat = self._seat_of[agent]
        obs = self._encode(seat_view(game.state, seat))  # uno_env.observe(game, seat, max_players)
        return {"observation": obs, "action_mask": self._mask_of(game, seat)}

    def _mask_of(self, game: Game, seat: int) -> np.ndarray:
        """A fresh int8 mask of ``seat``'s legal actions (all zeros unless it decides now)."""
        if self._ended or game.current_player != seat:  # (ended: every agent is terminated or truncated)
            return np.zeros(NUM_ACTIONS, np.int8)
        # The masks of the legal-action sets met so far (a few hundred kinds in a game), copied out.
        legal = tuple(game.legal_actions())
        mask = self._masks.get(legal)
        if mask is None:
            if len(self._masks) >= _MASK_CACHE_SIZE:
                self._masks.clear()
            mask = self._masks[legal] = action_mask(game, seat)
        return mask.copy()

    def _refresh_mask_infos(self) -> None:
        """``infos="mask"``: every agent's ``{"action_mask": ...}``, as in its observation."""
        game = self.game
        assert game is not None
        for agent in self.agents:
            self.infos[agent] = {"action_mask": self._mask_of(game, self._seat_of[agent])}

    def _deciding_seat(self) -> int:
        seat = self.game.current_player if self.game is not None else None
        assert seat is not None, "a seat decides whenever the episode goes on"
        return seat

    def seat(self, agent: str) -> int:
        """The seat ``agent`` sits in (``player_i`` sits in seat ``i``)."""
        return self._seat_of[agent]

    def view(self, agent: str) -> View:
        """``game.view(seat)`` of ``agent``: what it may know as a structured dict (``uno_env.core.view``)."""
        game = self.game
        if game is None:
            raise RuntimeError("call reset() first")
        return game.view(self._seat_of[agent])

    def _refresh_view_infos(self, previous: str | None) -> None:
        """``infos="view"``: the deciding agent's view, or every agent's once the episode has ended."""
        if self._ended:
            for agent in self.agents:
                self.infos[agent] = self.view(agent)
            return
        if previous is not None:
            self.infos[previous] = {}
        self.infos[self.agent_selection] = self.view(self.agent_selection)

    def render(self) -> str | None:
        """``"ansi"``: the table as text from the deciding seat's view; ``"human"``: print it."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; use render_mode='ansi' or 'human'")
            return None
        if self.game is None:
            return None
        seat = self._seat_of[self.agent_selection]
        text = render_table(self.game, seat, self._render_from)
        self._render_from = self.game.log_length
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        state = EzPickle.__getstate__(self)
        if self.game is not None:
            state["episode_state"] = {
                "game": self.game,
                "agents": list(self.agents),
                "rewards": dict(self.rewards),
                "cumulative": dict(self._cumulative_rewards),
                "terminations": dict(self.terminations),
                "truncations": dict(self.truncations),
                "agent_selection": self.agent_selection,
                "skip": getattr(self, "_skip_agent_selection", None),
                "turns": self.turns,
                "in_round": list(self._in_round),
                "rewards_set": self._rewards_set,
                "ended": self._ended,
                "render_from": self._render_from,
                "seeder": self._seeder.getstate(),
            }
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        EzPickle.__setstate__(self, state)
        saved = state.get("episode_state")
        if saved is None:
            return
        self.game = saved["game"]
        self.agents = saved["agents"]
        self.rewards = saved["rewards"]
        self._cumulative_rewards = saved["cumulative"]
        self.terminations = saved["terminations"]
        self.truncations = saved["truncations"]
        self.agent_selection = saved["agent_selection"]
        self._skip_agent_selection = saved["skip"]
        self.turns = saved["turns"]
        self._in_round = saved["in_round"]
        self._rewards_set = saved["rewards_set"]
        self._ended = saved["ended"]
        self._render_from = saved["render_from"]
        self._seeder.setstate(saved["seeder"])
        self.infos = {agent: {} for agent in self.agents}
        if self.info_mode == "view" and self.agent_selection in self.infos:
            self._refresh_view_infos(None)
        elif self.info_mode == "mask":
            self._refresh_mask_infos()


def _share(winners: list[int], game: Game, n: int) -> list[float]:
    """+1 split among the winners (a team's members included), -1 split among the rest."""
    if game.rules.teams and len(winners) == 1:
        winners = [s for s in range(n) if s % 2 == winners[0] % 2]
    k = len(winners)
    if k == n:  # everyone shares the win: nothing to gain
        return [0.0] * n
    win, lose = 1.0 / k, -1.0 / (n - k)
    chosen = set(winners)
    return [win if s in chosen else lose for s in range(n)]


def _score_rewards(game: Game, in_round: list[bool]) -> list[float]:
    """Zero-sum round points (see Rewards in the module docstring); ``in_round``: seats dealt in."""
    n = game.num_players
    hands = [float(game.hand_value(s)) for s in range(n)]
    rules = game.rules
    winner = game.round_winner
    assert winner is not None
    if rules.scoring == "lowest" or rules.elimination:
        seats = [s for s in range(n) if in_round[s]]
        mean = sum(hands[s] for s in seats) / len(seats)
        return [mean - hands[s] if in_round[s] else 0.0 for s in range(n)]
    if rules.teams:
        team = [s for s in range(n) if s % 2 == winner % 2]
        gain = sum(hands[s] for s in range(n) if s % 2 != winner % 2) / len(team)
        return [gain if s % 2 == winner % 2 else -hands[s] for s in range(n)]
    rewards = [-h for h in hands]
    rewards[winner] = sum(hands) - hands[winner]
    return rewards


assert A.NUM_ACTIONS == NUM_ACTIONS
register_envs()
