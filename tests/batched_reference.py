"""Lockstep runs of ``uno_env.batched.BatchedUno`` against ``uno_env.uno_v0.raw_env``, table by table.

Every table of the batch has a reference: a PettingZoo ``raw_env`` (so rewards, termination and
truncation are the env's own) whose ``Game`` shuffles exactly as the table does
(``EngineShuffle``: ``uno_env.batched.rng.shuffle_order`` in place of ``random.shuffle``; the
batched generator is its own, so this is what lets a reshuffle, the next round's deal and a new
game's deal be compared card for card). Both get the same action each step and are compared:
observation and mask bit for bit, seat to act, rewards, termination and truncation every step;
the whole position (hands as multisets, piles in order, known cards, scores, phase, pending
card, ...) for a rotating share of tables every step; the final observation when an episode
ends, and the new episode's deal against ``Game(deck=..., dealer=...)``. Used by
``tests/test_batched.py`` and the soak script ``tests/soak/soak_batched.py``.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from uno_env.batched import BatchedUno, State
from uno_env.batched import rng as batched_rng
from uno_env.core import EDITIONS, Game
from uno_env.core.actions import NUM_PLAY_ACTIONS
from uno_env.observation import action_mask, observe
from uno_env.uno_v0 import raw_env

POLICIES = ("random", "plays-first")


class EngineShuffle(random.Random):
    """A ``random.Random`` whose ``shuffle`` is the batched engine's for one table (key, counter)."""

    def __init__(self, key: int, counter: int) -> None:
        super().__init__(0)
        self.key = key
        self.counter = counter

    def shuffle(self, x: Any) -> None:  # type: ignore[override]
        order = batched_rng.shuffle_order(self.key, self.counter, len(x))
        x[:] = [x[o] for o in order]
        self.counter += 1


def normalised(data: dict[str, Any]) -> dict[str, Any]:
    """A ``Game.to_dict`` without the generator and log, hands and known cards as sorted multisets."""
    data = {k: v for k, v in data.items() if k not in ("rng_state", "log")}
    data["hands"] = [sorted(h) for h in data["hands"]]
    data["known"] = sorted((k["observer"], k["target"], tuple(sorted(k["cards"]))) for k in data["known"])
    return data


def differences(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Field by field, what differs between two normalised positions."""
    return [f"{k}: python {expected[k]!r} batched {got.get(k)!r}" for k in expected if expected[k] != got.get(k)]


def choose(mask: torch.Tensor, plays_first: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One legal action per table: uniform, or uniform among card plays where any is legal (plays_first)."""
    plays = mask.clone()
    plays[:, NUM_PLAY_ACTIONS:] = False
    prefer = plays_first[:, None] & plays.any(1, keepdim=True)
    allowed = torch.where(prefer, plays, mask)
    noise = torch.rand(mask.shape, generator=generator)
    return torch.where(allowed, noise, -1.0).argmax(1)


def expected_new_game(env: BatchedUno, i: int, deck: list[str] | None = None, dealer: int | None = None) -> Game:
    """The game table ``i`` must have just been dealt, as a ``Game`` (``deck``/``dealer``: as given to reset).

    A new game draws its dealer from the table's generator (unless given or fixed by
    ``first_dealer``), then shuffles its deck (unless given): the last one or two counter values.
    """
    rules = env.rules[i]
    key = int(env.tables.rng_key[i])
    counter = int(env.tables.rng_counter[i])
    ed = EDITIONS[rules.edition]
    if deck is None:
        counter -= 1
        kinds = ed.deck()
        deck = [ed.code(kinds[o]) for o in batched_rng.shuffle_order(key, counter, len(kinds))]
    if dealer is None:
        dealer = rules.first_dealer
    if dealer is None:
        dealer = batched_rng.draw_python(key, counter - 1, 0) % rules.num_players
    return Game(rules, deck=deck, dealer=dealer)


@dataclass
class Lockstep:
    """A batch and its references, stepped together; ``seen`` counts what the runs exercised."""

    env: BatchedUno
    policy: list[str]
    full_every: int = 8
    seed: int = 0
    refs: list[raw_env] = field(default_factory=list)
    logs: list[int] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)
    state: State | None = None
    steps: int = 0

    def start(self, decks: list[Any] | None = None, dealers: list[Any] | None = None) -> None:
        """Reset the batch (optionally with exact deals) and check every table's deal against ``Game``."""
        self.env.reset(decks=decks, dealers=dealers)
        games = [expected_new_game(self.env, i, None if decks is None else decks[i],
                                   None if dealers is None else dealers[i]) for i in range(self.env.num_tables)]
        self.attach(games)

    def attach(self, games: list[Game]) -> None:
        """Take ``games`` (one per table, at the batch's current positions) as the references."""
        self.state = self.env.state
        self.generator = torch.Generator().manual_seed(self.seed)
        self.plays_first = torch.tensor([p == "plays-first" for p in self.policy])
        self.refs = [self._reference(i, game) for i, game in enumerate(games)]
        self.logs = [len(ref.game.log) if ref.game is not None else 0 for ref in self.refs]
        self.compare_all()

    def _reference(self, i: int, game: Game) -> raw_env:
        env = self.env
        ref = raw_env(episode=env.episode, reward=env.reward, max_players=env.max_players, max_turns=env.max_turns,
                      **env.rules[i].to_dict())
        ref.reset(options={"game": game})
        assert ref.game is not None
        ref.game.state.rng = EngineShuffle(int(env.tables.rng_key[i]), int(env.tables.rng_counter[i]))
        return ref

    def compare_all(self) -> None:
        """Every table's whole position against its reference."""
        for i in range(self.env.num_tables):
            self.compare_position(i)
        self.compare_views(range(self.env.num_tables))

    def compare_position(self, i: int) -> None:
        game = self.refs[i].game
        assert game is not None
        expected = normalised(game.to_dict())
        got = normalised(self.env.table_dict(i))
        assert expected == got, f"table {i} ({self.env.rules[i]}): " + "; ".join(differences(expected, got))

    def compare_views(self, tables: Any) -> None:
        state = self.state
        assert state is not None
        obs = state.observation.numpy()
        masks = state.action_mask.numpy()
        for i in tables:
            game = self.refs[i].game
            assert game is not None
            seat = game.current_player
            assert seat == int(state.current_player[i]), f"table {i}: seat {int(state.current_player[i])}, python {seat}"
            self.seen["phase " + game.phase.text] += 1
            expected = observe(game, seat, self.env.max_players)
            if not np.array_equal(expected, obs[i]):
                where = np.nonzero(expected != obs[i])[0].tolist()
                raise AssertionError(f"table {i}: observation differs at {where[:12]}")
            assert np.array_equal(action_mask(game, seat).astype(bool), masks[i]), (
                f"table {i}: mask {np.nonzero(masks[i])[0].tolist()}, "
                f"python {[int(a) for a in game.legal_actions()]}")

    def step(self, actions: torch.Tensor | None = None) -> None:
        """One decision at every table (``actions``, or the policies'), in both engines, then every comparison."""
        state = self.state
        assert state is not None
        env = self.env
        if actions is None:
            actions = choose(state.action_mask, self.plays_first, self.generator)
        actors = state.current_player.tolist()
        self.state = state = env.step(actions)
        self.steps += 1
        p = env.max_players
        rewards = state.rewards.numpy()
        for i, action in enumerate(actions.tolist()):
            ref = self.refs[i]
            game = ref.game
            assert game is not None
            assert ref.agent_selection == f"player_{actors[i]}"
            ref.step(action)
            n = game.num_players
            self.seen["decisions"] += 1
            expected = np.zeros(p, np.float32)
            expected[:n] = [ref.rewards[a] for a in ref.possible_agents]
            assert np.array_equal(expected, rewards[i]), f"table {i}: rewards {rewards[i]}, env {expected}"
            ended = ref.terminations["player_0"] or ref.truncations["player_0"]
            assert bool(state.terminated[i]) == ref.terminations["player_0"], f"table {i}: terminated"
            assert bool(state.truncated[i]) == ref.truncations["player_0"], f"table {i}: truncated"
            if ended:
                self.seen["truncated" if ref.truncations["player_0"] else "terminated"] += 1
                observer = int(state.final_observer[i])
                want = actors[i] if ref.terminations["player_0"] else game.current_player
                assert observer == want, f"table {i}: final observer {observer}, expected {want}"
                final = observe(game, observer, p)
                assert np.array_equal(final, state.final_observation[i].numpy()), f"table {i}: final observation"
                self.count_events(i)
                new_game = expected_new_game(env, i)
                self.refs[i] = self._reference(i, new_game)
                self.logs[i] = len(new_game.log)
                self.compare_position(i)
            elif (self.steps + i) % self.full_every == 0:
                self.compare_position(i)
        self.compare_views(range(env.num_tables))

    def count_events(self, i: int) -> None:
        """Add table ``i``'s reference's events since it was attached to ``seen``."""
        game = self.refs[i].game
        assert game is not None
        log = game.log
        self.seen.update(event[0] for event in log[self.logs[i]:])
        self.logs[i] = len(log)

    def run(self, steps: int) -> Counter[str]:
        """``steps`` decisions at every table; returns what was exercised (event types, episode ends)."""
        for _ in range(steps):
            self.step()
        for i in range(self.env.num_tables):
            self.count_events(i)
        return self.seen
