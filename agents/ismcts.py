"""ISMCTSAgent: single-observer information-set Monte Carlo tree search (Cowling et al. 2012).

The agent reads nothing but ``info`` (``game.view(seat)``); ``observation`` is ignored. Each
playout:

1. *Determinize*: ``uno_env.core.determinize.InfoSet(info).sample_state(rng)`` (the engine's
   one determinizer) deals the cards hidden from the seat uniformly from the cards it has not
   seen; ``Game.from_state`` plays on from that state (keeping no event log).
2. *Select / expand*: the tree holds the seat's own decisions only. Walking down, the seat's
   decisions are chosen by UCT with availability counts (a child's exploration term uses the
   number of playouts in which its action was legal, since the legal actions differ from one
   determinization to the next); an untried legal action is expanded first. The other seats'
   decisions in between are made by the rollout policy: opponents are modelled as that
   policy rather than searched, and their moves and the cards drawn are not part of a node's
   key (below the root the tree is open-loop over everything but the seat's own actions).
   Decisions with one legal action, ``uno`` (always called) and ``catch`` (always made)
   never branch. A node below the root branches only once it has been visited
   ``expand_after`` times; until then the rollout policy makes the seat's decisions there
   too (a freshly expanded node would otherwise make the seat's next decision, such as the
   color after a Wild, at random, which biases the value of the move before it).
3. *Roll out* to the round's end with the rollout policy for every seat.
4. *Back up* the round's outcome for the seat: 1 for a win (its team's, playing partners),
   0 otherwise (a playout cut at ``MAX_ROLLOUT_DECISIONS`` counts 0.5).

The root (``root=``): ``"paired"`` (default) plays every legal root action on each
determinization, each continued with a generator seeded alike (common random numbers: the
actions are compared on the same hidden cards, which removes much of the deal's noise from
their difference); ``"uct"`` selects at the root by UCT like every other node, one action per
determinization, and takes the most visited action (ties: the better mean, then the lower id).

Prior (``prior=``, default ``"rule"``): round outcomes in UNO are so noisy that a few hundred
playouts rarely separate two reasonable moves, and a choice made on noise is close to a
random one (it draws and plays wilds far too often). So under the paired root the agent
keeps a ``RuleAgent`` (``"simple"``: a ``SimpleRuleAgent``), fed every decision it sees, and
plays that agent's choice unless another action beat it on the same determinizations by
at least ``confidence`` standard errors of the paired differences; among those it takes the
best mean. ``prior=None`` is plain search (the best mean; ties to the lower id). With one
legal action, at an UNO call or a catch, it returns at once without searching.

Rollout policies (``rollout=``), both fast game-level code (no view dicts in the inner loop):
``"heuristic"`` (default) goes out when it can; otherwise it scores each playable card: a
colored card by the cards of its color it holds, plus its points, plus tempo (a Draw Two, and
heads up a Skip or Reverse) and more when the next player holds two cards or fewer; wild-type
cards come last except a Wild Draw Four against such a threat. It draws only when nothing
plays, plays a drawn card, names and gives away the color it holds most, stacks when it can,
swaps hands with the seat holding fewest cards, accepts a Wild Draw Four, calls UNO and
catches; with probability ``epsilon`` it plays a uniformly chosen playable card instead.
``"random"`` plays a uniformly chosen playable card when it can and is uniform over every
other decision (it always calls UNO).

Belief (``belief=``): ``"uniform"`` (default) deals the hidden cards uniformly. ``"voids"``
deals each opponent's hidden cards without the kinds it is believed to lack: a player seen to
draw instead of playing holds no card of the color or number it drew on, among the cards it held
then (a count that falls with every card played since; ``agents.belief.VoidTracker``, fed every
decision the seat sees; ``InfoSet.sample_state(rng, lacks)``). The belief assumes opponents play a card when one plays, as most players and every
heuristic agent here do. ``"rule"`` adds the opponents' model: it deals as ``"voids"`` and keeps a
determinization with chance ``BELIEF_MISS`` for each move of the last stretch read
(``VoidTracker.moves``: a card played or a draw, for players still holding the hand they moved
from) that a ``RuleAgent`` dealt that determinization's hand would not have made
(``agents.belief.model_agrees``), drawing up to ``BELIEF_TRIES`` determinizations and keeping the
one that missed fewest when none is kept: the likelihood of the observed moves under a model of
the other players, as in policy-based inference for card games.

Budget and determinism: ``iterations`` counts playouts (the paired root rounds up to whole
determinizations). With ``iterations`` (and no ``time_budget``) the choice depends only on
the seed (``seed()``, which the tournament harness calls before each game) and ``info``. With
``time_budget`` (seconds per decision) the number of playouts depends on the machine's speed
and load, so choices are not reproducible; with both, the search stops at whichever limit
comes first.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from uno_env.core import Game
from uno_env.core import actions as A
from uno_env.core.cards import DRAW_TWO, KIND_COLOR, KIND_RANK, NUM_COLORS, SKIP, WILD, WILD_DRAW_FOUR
from uno_env.core.determinize import InfoSet
from uno_env.core.state import GameState, Phase

from .base import Agent, legal_action_ids
from .belief import Move, VoidTracker, model_agrees
from .rule_agent import RuleAgent

PLAY, PLAY_DRAWN, CHOOSE_COLOR, GIVE_AWAY, CHALLENGE = (
    Phase.PLAY, Phase.PLAY_DRAWN, Phase.CHOOSE_COLOR, Phase.GIVE_AWAY, Phase.CHALLENGE)
UNO_PHASE, CATCH_PHASE, SWAP_PHASE, STACK_PHASE, ROUND_OVER = (
    Phase.UNO, Phase.CATCH, Phase.SWAP, Phase.STACK, Phase.ROUND_OVER)
ROLLOUTS = ("heuristic", "random")
ROOTS = ("paired", "uct")
BELIEFS = ("uniform", "voids", "rule")
BELIEF_TRIES = 16  # belief="rule": determinizations drawn per playout's one, at most
BELIEF_MISS = 0.1  # belief="rule": the chance kept for each of the last stretch's moves the model would not make
MAX_ROLLOUT_DECISIONS = 3000  # a playout still running after this many decisions scores as a draw


def heuristic_action(game: Game, rng: random.Random, epsilon: float = 0.1) -> int:
    """The fast heuristic's action for the current decision (see the module docstring)."""
    legal = game.legal_actions()
    if len(legal) == 1:
        return legal[0]
    state = game.state
    phase = state.public.phase
    seat = state.public.current
    hand = state.hands[seat]
    if phase == PLAY:
        plays = legal[:-1]  # the last legal action of the play phase is always draw
        if len(hand) == 1 or len(plays) == 1:
            return plays[0]
        if epsilon and rng.random() < epsilon:
            return rng.choice(plays)
        counts = [0, 0, 0, 0]
        for k in hand:
            if k < WILD:
                counts[KIND_COLOR[k]] += 1
        heads_up = game.seats_left == 2
        threat = len(state.hands[game.next_seat(seat)]) <= 2
        best, best_score = plays[0], -1e9
        for k in plays:
            if k < WILD:
                rank = KIND_RANK[k]
                score = counts[KIND_COLOR[k]] + (rank / 20 if rank < 10 else 1.0)
                if rank == DRAW_TWO or (heads_up and rank >= SKIP):
                    score += 1.5 + (4.0 if threat else 0.0)
                elif rank == SKIP and threat:
                    score += 3.0
            elif k == WILD_DRAW_FOUR:
                score = 30.0 if threat else -7.0
            else:
                score = -8.0
            if score > best_score:
                best, best_score = k, score
        return best
    if phase == PLAY_DRAWN:
        return legal[0]
    if phase == CHOOSE_COLOR or phase == GIVE_AWAY:
        counts = [0, 0, 0, 0]
        for k in hand:
            if k < WILD:
                counts[KIND_COLOR[k]] += 1
        base = A.COLOR_BASE if phase == CHOOSE_COLOR else A.GIVE_BASE
        if phase == CHOOSE_COLOR:
            return base + max(range(NUM_COLORS), key=counts.__getitem__)
        return max(legal, key=lambda a: counts[a - base])
    if phase == UNO_PHASE:
        return A.UNO
    if phase == CATCH_PHASE:
        return A.CATCH
    if phase == CHALLENGE or phase == STACK_PHASE:
        return legal[0] if legal[0] < A.NUM_PLAY_ACTIONS else A.ACCEPT
    if phase == SWAP_PHASE:
        hands = state.hands
        n = game.num_players
        return min(legal, key=lambda a: len(hands[(seat + a - A.SWAP_BASE) % n]))
    return legal[0]


def random_action(game: Game, rng: random.Random, epsilon: float = 0.0) -> int:
    """Play-first random: a uniformly chosen playable card when one plays, else uniform."""
    legal = game.legal_actions()
    phase = game.phase
    if phase == PLAY and len(legal) > 1:
        return rng.choice(legal[:-1])
    if phase == UNO_PHASE:
        return A.UNO
    return rng.choice(legal)


class _Node:
    """Statistics of one of the observer's actions, and the decisions that followed it."""

    __slots__ = ("visits", "value", "available", "children", "outcomes")

    def __init__(self) -> None:
        self.visits = 0
        self.value = 0.0
        self.available = 0
        self.children: dict[int, _Node] = {}
        self.outcomes: list[float] | None = None  # root children under the paired root: one per determinization


class ISMCTSAgent(Agent):
    """Information-set MCTS over the seat's own decisions (see the module docstring).

    ``iterations``: determinizations searched per decision (default 200 when no
    ``time_budget`` is given); ``time_budget``: seconds per decision; ``exploration``: the
    UCT constant; ``rollout``: ``heuristic`` or ``random``; ``epsilon``: the heuristic's chance
    of a random playable card; ``root``: ``paired`` or ``uct``; ``prior``: ``rule``,
    ``simple`` or None; ``confidence``: standard errors a searched action must win by to
    replace the prior's choice; ``expand_after``: playouts through a node before it grows children;
    ``belief``: ``uniform``, ``voids`` or ``rule`` (how hidden cards are dealt; module docstring).

    A spec read from a file (a save's opponents, a training config, the web app) may set the work per
    decision only within ``FILE_LIMITS``, so that no file can stall a game; the command line and
    Python callers may go further.
    """

    name = "ismcts"
    FILE_LIMITS: ClassVar[dict[str, tuple[float, float]]] = {
        "iterations": (1, 20_000), "time_budget": (0.001, 5.0), "expand_after": (1, 10_000)}

    def __init__(self, iterations: int | None = None, time_budget: float | None = None, seed: int | None = None,
                 exploration: float = 0.7, rollout: str = "heuristic", epsilon: float = 0.1,
                 root: str = "paired", prior: str | None = "rule", confidence: float = 2.0,
                 expand_after: int = 20, belief: str = "uniform") -> None:
        if iterations is None and time_budget is None:
            iterations = 200
        if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, int)
                                       or iterations < 1):
            raise ValueError(f"iterations must be a positive int, got {iterations!r}")
        if time_budget is not None and not (time_budget > 0 and math.isfinite(time_budget)):
            raise ValueError(f"time_budget must be a positive number of seconds, got {time_budget!r}")
        if not (math.isfinite(exploration) and exploration >= 0):
            raise ValueError(f"exploration must be a finite number >= 0, got {exploration!r}")
        if not (math.isfinite(confidence) and confidence >= 0):
            raise ValueError(f"confidence must be a finite number >= 0, got {confidence!r}")
        if not 0 <= epsilon <= 1:
            raise ValueError(f"epsilon must be a probability 0..1, got {epsilon!r}")
        if isinstance(expand_after, bool) or not isinstance(expand_after, int) or expand_after < 1:
            raise ValueError(f"expand_after must be an int >= 1, got {expand_after!r}")
        if root not in ROOTS:
            raise ValueError(f"root must be one of {', '.join(ROOTS)}, got {root!r}")
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {', '.join(BELIEFS)}, got {belief!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
        self.iterations = iterations
        self.time_budget = time_budget
        self.exploration = exploration
        self.rollout = rollout
        self.root = root
        if prior not in (None, "rule", "simple"):
            raise ValueError(f"prior must be 'rule', 'simple' or None, got {prior!r}")
        self.prior = prior
        self.confidence = confidence
        self.expand_after = expand_after
        self.belief = belief
        self._prior: Agent | None = None
        if prior is not None:
            from .rule_agent import SimpleRuleAgent

            self._prior = RuleAgent() if prior == "rule" else SimpleRuleAgent()
        self._tracker = VoidTracker() if belief != "uniform" else None  # what the views say the others lack
        self._model = RuleAgent() if belief == "rule" else None  # belief="rule": the others' model
        self.epsilon = epsilon
        self._policy = heuristic_action if rollout == "heuristic" else random_action
        self._seed = seed
        self._rng = random.Random(seed)
        self.last_iterations = 0  # playouts run for the last searched decision
        self.last_root: _Node | None = None  # the last search's root (statistics per action)

    def seed(self, seed: int | None) -> None:
        """Restart the agent's generator from ``seed``."""
        self._seed = seed
        self._rng = random.Random(seed)
        if self._prior is not None:
            self._prior.seed(seed)

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """Search ``info``'s information set and return the most visited legal action."""
        legal = legal_action_ids(observation, info)
        prior = None
        if self._prior is not None:
            try:
                prior = self._prior.act(observation, info)
            except ZeroDivisionError:  # RuleAgent._settle_challenge can divide by zero; search alone then
                prior = None
        if self._tracker is not None:
            self._tracker.observe(info)
        if len(legal) == 1:
            choice = legal[0]
        elif A.UNO in legal:
            choice = A.UNO
        elif A.CATCH in legal:
            choice = A.CATCH
        else:
            choice = self.search(info, legal, prior)
            if isinstance(self._prior, RuleAgent) and choice != prior:
                self._prior.played(info, choice)  # its void inference reads the move actually made
        if self._tracker is not None:
            self._tracker.played(info, choice)
        return choice

    def reset(self) -> None:
        """Forget the prior agent's memory of earlier games."""
        if self._prior is not None:
            self._prior.reset()
        if self._tracker is not None:
            self._tracker.reset()

    def search(self, info: Mapping[str, Any], legal: list[int] | None = None, prior: int | None = None) -> int:
        """Run the search from ``info`` and return the chosen action id (``prior``: the default action)."""
        if legal is None:
            legal = list(info["legal_action_ids"])
        if prior not in legal:
            prior = None
        infoset = InfoSet(info)
        seat = infoset.seat
        lacks: dict[int, tuple[frozenset[int], int]] | None = None
        if self._tracker is not None:
            lacks = self._tracker.lacks or None
        rng = self._rng
        root = _Node()
        budget = self.iterations
        deadline = None if self.time_budget is None else time.perf_counter() + self.time_budget
        paired = self.root == "paired"
        done = 0
        moves = self._tracker.moves if self._tracker is not None and self._model is not None else []
        while (budget is None or done < budget) and (deadline is None or time.perf_counter() < deadline):
            game = Game.from_state(self._determinization(infoset, rng, lacks, moves), check=False, log_limit=0)
            if paired:  # every root action on this determinization, with the same rollout seed
                rollout_seed = rng.getrandbits(64)
                for a in legal:
                    child = root.children.get(a)
                    if child is None:
                        child = root.children[a] = _Node()
                        child.outcomes = []
                    child.available += 1
                    copy = game.clone()
                    copy.step(a)
                    before = child.value
                    self._iterate(copy, seat, child, random.Random(rollout_seed), [child])
                    assert child.outcomes is not None
                    child.outcomes.append(child.value - before)
                done += len(legal)
            else:
                self._iterate(game, seat, root, rng, [])
                done += 1
        self.last_iterations = done
        self.last_root = root
        if paired and prior is not None:
            return self._paired_choice(root, legal, prior)
        best, best_key = legal[0], (-1.0, -1.0, 0)
        for a in legal:
            child = root.children.get(a)
            if child is None or not child.visits:
                continue
            mean = child.value / child.visits
            key: tuple[float, float, int] = (mean, child.visits, -a) if paired else (child.visits, mean, -a)
            if key > best_key:
                best, best_key = a, key
        return best

    def _determinization(self, infoset: InfoSet, rng: random.Random,
                         lacks: dict[int, tuple[frozenset[int], int]] | None, moves: list[Move]) -> GameState:
        """One full state to play out: the belief's deal of the hidden cards (a subclass may deal otherwise,
        as the oracle probe of ``training.tools.oracle_distil`` does)."""
        return self._weighed(infoset, rng, lacks, moves) if moves else infoset.sample_state(rng, lacks)

    def _weighed(self, infoset: InfoSet, rng: random.Random, lacks: dict[int, tuple[frozenset[int], int]] | None,
                 moves: list[Move]) -> GameState:
        """``belief="rule"``: a determinization kept with chance ``BELIEF_MISS`` per move of ``moves`` that
        RuleAgent, dealt its hidden cards, would not have made (rejection sampling of the likelihood);
        after ``BELIEF_TRIES`` draws, the one that missed fewest moves."""
        assert self._model is not None
        best, best_misses = None, len(moves) + 1
        for _ in range(BELIEF_TRIES):
            state = infoset.sample_state(rng, lacks)
            misses = sum(not model_agrees(state, move, self._model, rng) for move in moves)
            if not misses or rng.random() < BELIEF_MISS ** misses:
                return state
            if misses < best_misses:
                best, best_misses = state, misses
        assert best is not None
        return best

    def _paired_choice(self, root: _Node, legal: list[int], prior: int) -> int:
        """The prior's action unless another did better on the same determinizations by ``confidence`` SEs."""
        node = root.children.get(prior)
        base = node.outcomes if node is not None else None
        if not base or len(base) < 2:
            return prior
        n = len(base)
        best, best_mean = prior, sum(base) / n
        for a in legal:
            other = root.children.get(a)
            outcomes = other.outcomes if other is not None else None
            if a == prior or not outcomes:
                continue
            diffs = [x - y for x, y in zip(outcomes, base, strict=True)]
            mean = sum(diffs) / n
            if mean <= 0:
                continue
            var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
            if var > 0 and mean / math.sqrt(var / n) < self.confidence:
                continue
            if best_mean < sum(outcomes) / n:
                best, best_mean = a, sum(outcomes) / n
        return best

    def _iterate(self, game: Game, seat: int, node: _Node, rng: random.Random, path: list[_Node]) -> None:
        """One playout from ``node`` (whose state ``game`` is): UCT down the tree, expand, roll out, back up."""
        policy = self._policy
        epsilon = self.epsilon
        c = self.exploration
        expand_after = self.expand_after
        root = node if not path else None  # the search's root always branches
        expanding = True
        steps = 0
        table = game.state.public  # the live public state: whose decision, which phase
        while table.phase < ROUND_OVER and steps < MAX_ROLLOUT_DECISIONS:
            steps += 1
            if not expanding or table.current != seat:
                game.step(policy(game, rng, epsilon))
                continue
            if node.visits < expand_after and node is not root:  # too few visits to branch: the policy decides
                expanding = False
                continue
            legal = game.legal_actions()
            phase = table.phase
            if len(legal) == 1 or phase == UNO_PHASE or phase == CATCH_PHASE:
                game.step(A.UNO if phase == UNO_PHASE else A.CATCH if phase == CATCH_PHASE else legal[0])
                continue
            children = node.children
            untried = []
            best: _Node | None = None
            best_action = -1
            best_score = -1.0
            for a in legal:
                child = children.get(a)
                if child is None:
                    child = children[a] = _Node()
                child.available += 1
                if child.visits == 0:
                    untried.append(a)
                elif not untried:
                    score = child.value / child.visits + c * math.sqrt(math.log(child.available) / child.visits)
                    if score > best_score:
                        best, best_action, best_score = child, a, score
            if untried:
                best_action = untried[0] if len(untried) == 1 else rng.choice(untried)
                best = children[best_action]
                expanding = False  # expand one node per playout, then roll out
            assert best is not None
            path.append(best)
            node = best
            game.step(game.action(best_action))
        if table.phase < ROUND_OVER:
            value = 0.5
        else:
            winner = game.round_winner
            if winner == seat or (game.rules.teams and winner is not None and winner % 2 == seat % 2):
                value = 1.0
            else:
                value = 0.0
        for n in path:
            n.visits += 1
            n.value += value

    def __repr__(self) -> str:
        return (f"ISMCTSAgent(iterations={self.iterations}, time_budget={self.time_budget}, seed={self._seed!r}, "
                f"rollout={self.rollout!r}, belief={self.belief!r})")
