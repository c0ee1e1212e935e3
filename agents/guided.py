"""GuidedAgent: information-set search guided by a trained policy and its privileged critic (PUCT).

The agent reads nothing but ``info`` (``game.view(seat)``); ``observation`` is ignored. It
searches like ``agents.ismcts`` (the same determinizer, an open-loop tree over the seat's own
decisions, availability counts) with a checkpoint in two roles. Each playout:

1. *Determinize*: ``InfoSet(info).sample_state(rng)`` deals the hidden cards uniformly;
   ``Game.from_state`` plays on from it.
2. *Select* (PUCT): at each of the seat's decisions in the tree, the action maximising
   ``Q + c_puct * P * sqrt(A) / (1 + N)``, where ``P`` is the policy's masked softmax over *this
   determinization's* legal set, ``N`` the child's visits, ``A`` the number of playouts that
   reached the node with the action legal (legal sets differ between determinizations), and
   ``Q`` the child's mean value (an unvisited child counts as its parent's mean). One new node
   is added per playout. Every other seat is played by the same policy (``opponents``:
   ``sample`` draws from its softmax, ``greedy`` takes its argmax); their moves and the cards
   drawn are not part of a node's key. Decisions with one legal action, ``uno`` (always called)
   and ``catch`` (always made) never branch.
3. *Evaluate the leaf*: after the new node, the other seats play on until the seat's next
   decision (or the round's end). With a critic (``agents.critic.PrivilegedCritic``, the value
   of a position with every hand known, which a determinization is) the leaf's value is the
   critic's, turned from the win reward ``v`` (``+1`` for going out, ``-1/(n-1)`` otherwise)
   into the seat's chance to go out, ``p = ((n-1) v + 1) / n`` clipped to 0..1 (heads up
   ``(v + 1) / 2``); without one (``leaf="rollout"``), the round is played out by
   ``agents.ismcts.heuristic_action`` for every seat and scores 1 for a win, 0 otherwise. A
   round's end inside the search scores the same way; a playout still running after
   ``MAX_PLAYOUT_DECISIONS`` scores 0.5.
4. *Back up* ``p`` along the path.

Playouts run ``batch`` at a time in lockstep: each step, every playout's network input is
encoded and the policy (then the critic, for the leaves reached) runs once as one matrix
product over the batch. Within a batch a selected child carries a virtual loss (its visit is
counted when selected, its value when the batch backs up), so the batch's playouts spread.

The choice is the root's most visited action (ties: the higher mean, then the higher prior,
then the lower id). With one legal action, at an UNO call or a catch, it returns at once.

Budget and determinism: ``playouts`` counts playouts (default 512 when no ``time_budget``);
``time_budget`` is seconds per decision, checked between batches (so it can overrun by one
batch). With ``playouts`` alone the choice depends only on the seed (``seed()``, which the
tournament harness calls before each game) and ``info``; with a time budget it depends on the
machine's speed. ``clock`` (an attribute, ``time.perf_counter`` by default) is what the time
budget reads.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from uno_env.core import Game
from uno_env.core import actions as A
from uno_env.core.determinize import InfoSet
from uno_env.core.state import Phase
from uno_env.observation import NUM_ACTIONS, observe
from uno_env.privileged import privileged_features

from .base import Agent, legal_action_ids
from .critic import PrivilegedCritic
from .ismcts import heuristic_action
from .ppo_agent import PPOAgent

__all__ = ["LEAVES", "MAX_PLAYOUT_DECISIONS", "OPPONENT_MODELS", "ROOTS", "GuidedAgent"]

OPPONENT_MODELS = ("sample", "greedy")
LEAVES = ("critic", "rollout", "policy")
ROOTS = ("puct", "compare")
MAX_PLAYOUT_DECISIONS = 3000  # a playout still running after this many decisions scores as a draw
ROUND_OVER, UNO_PHASE, CATCH_PHASE = Phase.ROUND_OVER, Phase.UNO, Phase.CATCH
_TREE, _TO_LEAF = 0, 1  # a playout walks the tree, then plays on to its leaf


class _Node:
    """Statistics of one of the seat's actions (visits, summed value, availability, prior) and what followed."""

    __slots__ = ("available", "children", "prior", "value", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.value = 0.0
        self.available = 0
        self.prior = 0.0  # the policy's probability when last legal
        self.children: dict[int, _Node] = {}


class _Playout:
    """One playout in flight: its determinized game, where it is in the tree, the nodes it went through, its value."""

    __slots__ = ("game", "mode", "node", "path", "steps", "value")

    def __init__(self, game: Game, root: _Node) -> None:
        self.game = game
        self.node = root
        self.path: list[_Node] = []
        self.mode = _TREE
        self.steps = 0
        self.value = 0.5  # set at the backup


class GuidedAgent(Agent):
    """PUCT search over the seat's information set with a policy prior and a critic (module docstring).

    ``policy``: the checkpoint's ``PPOAgent`` (prior and opponent model); ``critic``: its
    ``PrivilegedCritic`` or None; ``playouts``, ``time_budget``: the budget per decision;
    ``c_puct``: the exploration constant; ``batch``: playouts run in lockstep; ``opponents``:
    ``sample`` or ``greedy``; ``leaf``: ``critic`` (default with a critic) or ``rollout``.

    A spec read from a file may set the work per decision only within ``FILE_LIMITS`` (as for
    ``ISMCTSAgent``); the command line and Python callers may go further.
    """

    name = "guided"
    # the budget without playouts= or time_budget=: at 2 players 512 won 62.6% of 2,000 new rounds against
    # RuleAgent at about a quarter of a second of CPU a move (docs/agents.md, "classic_2p_long and its critic")
    DEFAULT_PLAYOUTS: ClassVar[int] = 512
    FILE_LIMITS: ClassVar[dict[str, tuple[float, float]]] = {
        "playouts": (1, 5_000), "time_budget": (0.001, 5.0), "batch": (1, 256), "candidates": (1, 16)}

    def __init__(self, policy: PPOAgent, critic: PrivilegedCritic | None = None, playouts: int | None = None,
                 time_budget: float | None = None, seed: int | None = None, c_puct: float = 1.5, batch: int = 16,
                 opponents: str = "sample", leaf: str | None = None, root: str = "puct", candidates: int = 4,
                 margin: float = 1.0) -> None:
        if playouts is None and time_budget is None:
            playouts = self.DEFAULT_PLAYOUTS
        if playouts is not None and (isinstance(playouts, bool) or not isinstance(playouts, int) or playouts < 1):
            raise ValueError(f"playouts must be a positive int, got {playouts!r}")
        if time_budget is not None and not (time_budget > 0 and math.isfinite(time_budget)):
            raise ValueError(f"time_budget must be a positive number of seconds, got {time_budget!r}")
        if not (math.isfinite(c_puct) and c_puct >= 0):
            raise ValueError(f"c_puct must be a finite number >= 0, got {c_puct!r}")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be an int >= 1, got {batch!r}")
        if opponents not in OPPONENT_MODELS:
            raise ValueError(f"opponents must be one of {', '.join(OPPONENT_MODELS)}, got {opponents!r}")
        if leaf is None:
            leaf = "critic" if critic is not None else "rollout"
        if leaf not in LEAVES:
            raise ValueError(f"leaf must be one of {', '.join(LEAVES)}, got {leaf!r}")
        if leaf == "critic" and critic is None:
            raise ValueError("leaf='critic' needs a critic; give one or use leaf='rollout' or leaf='policy'")
        if root not in ROOTS:
            raise ValueError(f"root must be one of {', '.join(ROOTS)}, got {root!r}")
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
            raise ValueError(f"candidates must be an int >= 1, got {candidates!r}")
        if not (math.isfinite(margin) and margin >= 0):
            raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
        self.policy = policy
        self.critic = critic
        self.playouts = playouts
        self.time_budget = time_budget
        self.c_puct = c_puct
        self.batch = batch
        self.opponents = opponents
        self.leaf = leaf
        self.root = root
        self.candidates = candidates
        self.margin = margin
        self.clock: Callable[[], float] = time.perf_counter
        self._seed = seed
        self._rng = random.Random(seed)
        self.last_playouts = 0  # playouts run for the last searched decision
        self.last_root: _Node | None = None  # the last search's root (statistics per action)

    def seed(self, seed: int | None) -> None:
        """Restart the agent's generator from ``seed``."""
        self._seed = seed
        self._rng = random.Random(seed)

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """Search ``info``'s information set and return the most visited legal action."""
        legal = legal_action_ids(observation, info)
        if len(legal) == 1:
            return legal[0]
        if A.UNO in legal:
            return A.UNO
        if A.CATCH in legal:
            return A.CATCH
        return self.search(info)

    # ------------------------------------------------------------------ search
    def search(self, info: Mapping[str, Any]) -> int:
        """Run the search from ``info`` and return the chosen action id."""
        legal = [int(a) for a in info["legal_action_ids"]]
        infoset = InfoSet(info)
        if self.root == "compare":
            return self._compare(infoset, legal)
        seat = infoset.seat
        rng = self._rng
        root = _Node()
        budget = self.playouts
        deadline = None if self.time_budget is None else self.clock() + self.time_budget
        done = 0
        while (budget is None or done < budget) and (deadline is None or self.clock() < deadline):
            size = self.batch if budget is None else min(self.batch, budget - done)
            games = [Game.from_state(infoset.sample_state(rng), check=False, log_limit=0) for _ in range(size)]
            self._run_batch([_Playout(g, root) for g in games], seat, root)
            done += size
        self.last_playouts = done
        self.last_root = root
        best, best_key = legal[0], (-1, -1.0, -1.0, 0)
        for a in legal:
            child = root.children.get(a)
            if child is None:
                continue
            key = (child.visits, child.value / child.visits if child.visits else 0.0, child.prior, -a)
            if key > best_key:
                best, best_key = a, key
        return best

    def _compare(self, infoset: InfoSet, legal: list[int]) -> int:
        """The ``compare`` root: the prior's top actions valued on the same determinizations; a paired test decides.

        Every round of the budget deals ``k`` determinizations and plays each candidate from
        each of them (common random numbers: the candidates differ by their action, not by the
        deal), then on to its leaf. The policy's own choice (the prior's argmax) is kept unless
        another candidate's mean paired difference to it exceeds ``margin`` standard errors.
        """
        seat = infoset.seat
        rng = self._rng
        first = infoset.sample_state(rng)
        mask = np.zeros((1, NUM_ACTIONS), np.int8)
        mask[0, legal] = 1
        view_game = Game.from_state(first.copy(), check=False, log_limit=0)
        prior = self.policy.probabilities(observe(view_game, seat, self.policy.max_players)[None], mask)[0]
        ranked = sorted(legal, key=lambda a: (-float(prior[a]), a))
        chosen = ranked[: self.candidates]
        root = _Node()
        if len(chosen) == 1:
            self.last_playouts, self.last_root = 0, root
            return chosen[0]
        nodes = {a: root.children.setdefault(a, _Node()) for a in chosen}
        for a in chosen:
            nodes[a].prior = float(prior[a])
        values: dict[int, list[float]] = {a: [] for a in chosen}
        per_round = max(1, self.batch // len(chosen))
        deadline = None if self.time_budget is None else self.clock() + self.time_budget
        done = 0
        pending = [first]
        while deadline is None or self.clock() < deadline:
            left = None if self.playouts is None else (self.playouts - done) // len(chosen)
            if left is not None and left < 1:
                break
            k = per_round if left is None else min(per_round, left)
            deals = pending + [infoset.sample_state(rng) for _ in range(k - len(pending))]
            pending = []
            playouts: list[tuple[int, _Playout]] = []
            for a in chosen:
                node = nodes[a]
                for state in deals:
                    game = Game.from_state(state.copy(), check=False, log_limit=0)
                    game.step(a)
                    p = _Playout(game, node)
                    p.mode, p.path, p.steps = _TO_LEAF, [node], 1
                    node.visits += 1
                    node.available += 1
                    playouts.append((a, p))
            self._run_batch([p for _, p in playouts], seat, root)
            for a, p in playouts:
                values[a].append(p.value)
            done += len(playouts)
        self.last_playouts = done
        self.last_root = root
        base = chosen[0]
        best, best_mean = base, 0.0
        base_values = values[base]
        for a in chosen[1:]:
            diffs = [x - y for x, y in zip(values[a], base_values, strict=True)]
            if len(diffs) < 2:
                continue
            mean = sum(diffs) / len(diffs)
            spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1) / len(diffs))
            if mean > 0 and mean > self.margin * spread and mean > best_mean:
                best, best_mean = a, mean
        return best

    def _run_batch(self, playouts: list[_Playout], seat: int, root: _Node) -> None:
        """Advance ``playouts`` in lockstep to their leaves, one policy forward per step, and back them up."""
        policy = self.policy
        m = policy.max_players
        active = playouts
        while active:
            asking: list[tuple[_Playout, list[int]]] = []
            leaves: list[_Playout] = []
            for p in active:
                outcome = self._advance(p, seat)
                if outcome is None:
                    asking.append((p, [int(a) for a in p.game.legal_actions()]))
                elif outcome == "leaf":
                    leaves.append(p)
            if leaves:
                self._evaluate(leaves, seat)
            if not asking:
                break
            obs = np.stack([observe(p.game, p.game.state.public.current, m) for p, _ in asking])
            masks = np.zeros((len(asking), NUM_ACTIONS), np.int8)
            for i, (_, legal) in enumerate(asking):
                masks[i, legal] = 1
            probs = policy.probabilities(obs, masks)
            for i, (p, legal) in enumerate(asking):
                row = probs[i]
                if p.mode == _TREE and p.game.state.public.current == seat:
                    action = self._select(p, legal, row, root)
                elif self.opponents == "greedy":
                    action = legal[int(np.argmax(row[legal]))]
                else:
                    action = self._sample(legal, row)
                p.game.step(action)
                p.steps += 1
            active = [p for p, _ in asking]

    def _advance(self, p: _Playout, seat: int) -> str | None:
        """Play ``p``'s decisions that need no network; None when the next one does, else ``leaf`` or ``done``."""
        game = p.game
        table = game.state.public
        while True:
            if table.phase >= ROUND_OVER or p.steps >= MAX_PLAYOUT_DECISIONS:
                self._backup(p, self._outcome(game, seat))
                return "done"
            legal = game.legal_actions()
            phase = table.phase
            forced = len(legal) == 1 or phase == UNO_PHASE or phase == CATCH_PHASE
            if p.mode == _TO_LEAF and table.current == seat and not forced and self.leaf != "policy":
                if self.leaf == "rollout":
                    self._rollout(p, seat)
                    return "done"
                return "leaf"
            if not forced:
                return None
            game.step(A.UNO if phase == UNO_PHASE else A.CATCH if phase == CATCH_PHASE else legal[0])
            p.steps += 1

    def _select(self, p: _Playout, legal: list[int], probs: np.ndarray, root: _Node) -> int:
        """PUCT at the seat's decision: availability counts, virtual loss; a new node ends the tree walk."""
        node = p.node
        children = node.children
        parent_q = node.value / node.visits if node.visits else 0.5
        c = self.c_puct
        best_action, best_score, best = -1, -math.inf, None
        for a in legal:
            child = children.get(a)
            if child is None:
                child = children[a] = _Node()
            child.available += 1
            prior = float(probs[a])
            child.prior = prior
            q = child.value / child.visits if child.visits else parent_q
            score = q + c * prior * math.sqrt(child.available) / (1 + child.visits)
            if score > best_score:
                best_action, best_score, best = a, score, child
        assert best is not None
        if best.visits == 0:
            p.mode = _TO_LEAF  # one new node per playout
        best.visits += 1  # the virtual loss: counted now, valued at the backup
        p.path.append(best)
        p.node = best
        return best_action

    def _sample(self, legal: list[int], probs: np.ndarray) -> int:
        """An action drawn from the policy's probabilities over ``legal`` with the agent's generator."""
        draw = self._rng.random()
        total = 0.0
        weights = [float(probs[a]) for a in legal]
        scale = sum(weights)
        for a, w in zip(legal, weights, strict=True):
            total += w / scale
            if draw < total:
                return a
        return legal[-1]

    def _rollout(self, p: _Playout, seat: int) -> None:
        """Play ``p``'s round out with the heuristic for every seat and back up its outcome."""
        game = p.game
        table = game.state.public
        rng = self._rng
        while table.phase < ROUND_OVER and p.steps < MAX_PLAYOUT_DECISIONS:
            game.step(heuristic_action(game, rng))
            p.steps += 1
        self._backup(p, self._outcome(game, seat))

    def _evaluate(self, leaves: list[_Playout], seat: int) -> None:
        """The critic's values of ``leaves`` (one forward), as the seat's chances to go out, backed up."""
        critic = self.critic
        assert critic is not None
        m = int(critic.metadata["max_players"])
        rows = np.stack([np.concatenate([observe(p.game, seat, m), privileged_features(p.game, seat, m)])
                         for p in leaves])
        values = critic.values(rows)
        for p, v in zip(leaves, values, strict=True):
            n = p.game.seats_left
            chance = ((n - 1) * float(v) + 1.0) / n
            self._backup(p, min(1.0, max(0.0, chance)))

    @staticmethod
    def _outcome(game: Game, seat: int) -> float:
        """1 when the seat (its team, playing partners) went out, 0 when another did, 0.5 if unfinished."""
        if game.state.public.phase < ROUND_OVER:
            return 0.5
        winner = game.round_winner
        if winner == seat or (game.rules.teams and winner is not None and winner % 2 == seat % 2):
            return 1.0
        return 0.0

    @staticmethod
    def _backup(p: _Playout, value: float) -> None:
        """Add ``value`` to every node on ``p``'s path (their visits were counted when selected)."""
        for node in p.path:
            node.value += value
        p.value = value
        p.mode = -1

    def __repr__(self) -> str:
        return (f"GuidedAgent(policy={self.policy.label!r}, critic={self.critic is not None}, "
                f"playouts={self.playouts}, time_budget={self.time_budget}, seed={self._seed!r})")
