"""Full games sampled from one seat's view: the determinizations a search agent plays out.

``sample_game(view, rng)`` takes nothing but ``game.view(seat)`` and returns a ``Game`` that
the seat cannot tell apart from the real one: ``sample_game(v, rng).view(seat) == v``. Kept
from the view: the rules, the seat's own hand (and the card it just drew), the discard pile,
every hand size, the cards the seat has seen in other hands, scores, dealer, direction,
phase, whose decision it is, the pending card and player, the color before a pending Wild
Draw Four, the cards owed, UNO calls and eliminated seats. Sampled: every card hidden from
the seat (the rest of each other hand and the draw pile's order), dealt uniformly from the
cards the seat has not seen, and the game's random generator (future reshuffles are hidden).

Derived rather than read: the catch window's position (the steps from the pending player
to the seat deciding), the card another seat just drew in the ``play_drawn`` phase (any
hidden card, since a keep looks the same whether or not the card plays (rule 3.4); under draw
until playable one of the hidden cards that would have been playable (7.4)), a colored card in
the hand of another seat choosing what to give away (Urrrhhh is offered only to a holder of
colors), and whether another seat's pending Wild Draw Four was a bluff (read from its sampled hand; the seat's own is ``view["my_w4_bluff"]``).

Not reproduced, because nothing in the view shows it and nothing in play depends on it:
what other seats know of each other's hands (a sample knows only the observer's knowledge)
and the event log (a sample starts with an empty one). Inferences a seat could draw from the
log (an opponent who drew on a color lacks it) are not used: hidden cards are uniform.

``InfoSet(view)`` parses the view once and samples many games from it (``InfoSet.sample``),
which is what a search agent calls in its inner loop.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from .actions import action_table
from .cards import EDITIONS, KIND_COLOR, KIND_RANK, NUM_KINDS, WILD, WILD_DRAW_FOUR
from .determinize import give_the_giver_a_color, playable_hidden_card
from .game import _NO_RANK, _PHASES, CATCH_PHASE, GIVE_AWAY, PLAY_DRAWN, ROUND_OVER, Game
from .rules import Rules

__all__ = ["InfoSet", "sample_game"]

_RULES_CACHE: dict[tuple[tuple[str, Any], ...], Rules] = {}


def _rules(data: Mapping[str, Any]) -> Rules:
    key = tuple(sorted(data.items()))
    rules = _RULES_CACHE.get(key)
    if rules is None:
        if len(_RULES_CACHE) > 256:
            _RULES_CACHE.clear()
        rules = _RULES_CACHE[key] = Rules.from_dict(dict(data))
    return rules


class InfoSet:
    """One seat's knowledge, parsed from its view; ``sample(rng)`` deals the hidden cards."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = view
        self.seat = seat = int(view["seat"])
        self.rules = rules = _rules(view["rules"])
        self.edition = ed = EDITIONS[rules.edition]
        n = self.num_players = rules.num_players
        kind = ed.kind
        self.phase = phase = [p.value for p in _PHASES].index(view["phase"])
        self.hand = [kind(c) for c in view["hand"]]
        self.discard = [kind(c) for c in view["discard_pile"]]
        self.known: list[list[int]] = [[] for _ in range(n)]
        for opp in view["opponents"]:
            self.known[opp["seat"]] = [kind(c) for c in opp["known_cards"]]
        self.sizes = list(view["hand_sizes"])
        current = view["current_player"]
        if current is None:  # round or game over: whoever went out, as the engine keeps it
            current = view["round_winner"] if view["round_winner"] is not None else view["dealer"]
        self.current = current
        color = view["active_color"]
        self.active = -1 if color is None else ed.color_index(color)
        top = self.discard[-1]
        self.top_rank = KIND_RANK[top] if top < WILD else _NO_RANK
        self.played = -1 if view["pending_card"] is None else kind(view["pending_card"])
        self.player = -1 if view["pending_player"] is None else int(view["pending_player"])
        prev = view["w4_prev_color"]
        self.w4_prev_color = -1 if prev is None else ed.color_index(prev)
        self.my_w4_bluff = bool(view.get("my_w4_bluff"))
        # The card another seat just drew is hidden. Under draw until playable this seat knows it
        # plays (rule 7.4); otherwise it knows nothing of it (rule 3.4) and it is sampled like any.
        self.hidden_drawer = current if phase == PLAY_DRAWN and current != seat else -1
        self.drawn_plays = rules.draw_until_playable
        self.drawn = kind(view["drawn_card"]) if phase == PLAY_DRAWN and current == seat else -1

        pool = [0] * NUM_KINDS
        for k in ed.deck():
            pool[k] += 1
        for cards in (self.hand, self.discard, *self.known):
            for k in cards:
                pool[k] -= 1
        if min(pool) < 0:
            raise ValueError("the view shows more copies of a card than the deck holds")
        self.pool = [k for k in range(NUM_KINDS) for _ in range(pool[k])]
        self.hidden = [0 if s == seat else self.sizes[s] - len(self.known[s]) for s in range(n)]
        self.draw_size = int(view["draw_pile_size"])
        if min(self.hidden) < 0 or sum(self.hidden) + self.draw_size != len(self.pool):
            raise ValueError("the view's hand sizes and draw pile do not add up to the unseen cards")

        # Everything but the hidden cards, shared by every sample (lists are copied per sample).
        alive = [not e for e in view["eliminated"]]
        base = Game.__new__(Game)
        base.rules = rules
        base.edition = ed
        base._actions = action_table(ed)
        base.num_players = n
        base._log = []
        base.scores = list(view["scores"])
        base.round_points = list(view["round_points"])
        base.winners = list(view["winners"])
        base.round_number = int(view["round"])
        base.round_winner = view["round_winner"]
        base._dealer = int(view["dealer"])
        base._direction = int(view["direction"])
        base._phase = phase
        base._current = current
        base._active = self.active
        base._top_rank = self.top_rank
        base._discard = self.discard
        base._uno = list(view["uno_called"])
        base._played = self.played
        base._player = self.player
        base._drawn = self.drawn
        base._alive = alive
        base._rebuild_ring()
        base._penalty = int(view["penalty"])
        base._w4_guilty = False
        base._w4_prev_color = self.w4_prev_color
        base._catch_index = 0
        if phase == CATCH_PHASE:  # the seat offered the catch is catch_index steps past the offender
            steps, at = 1, base.next_seat(self.player)
            while at != current and steps < n:
                steps, at = steps + 1, base.next_seat(at)
            base._catch_index = steps
        base._legal = None
        self._base = base

    def sample(self, rng: random.Random) -> Game:
        """A full game consistent with the view, hidden cards dealt uniformly by ``rng``."""
        base = self._base
        seat = self.seat
        pool = list(self.pool)
        rng.shuffle(pool)
        drawer = self.hidden_drawer
        drawn = -1
        if drawer >= 0:
            if self.drawn_plays:
                drawn = playable_hidden_card(base, pool)
                if drawn < 0:
                    raise ValueError("no unseen card could be the card just drawn")
                pool.remove(drawn)
            else:  # any unseen card (rule 3.4)
                drawn = pool.pop()
        game = Game.__new__(Game)
        game.__dict__.update(base.__dict__)
        hands: list[list[int]] = []
        known: list[dict[int, list[int]]] = []
        at = 0
        for target in range(self.num_players):
            if target == seat:
                hands.append(list(self.hand))
                known.append({})
                continue
            seen = self.known[target]
            need = self.hidden[target] - (1 if target == drawer else 0)
            hand = seen + pool[at:at + need]
            at += need
            if target == drawer:
                hand.append(drawn)
            hands.append(hand)
            known.append({seat: list(seen)} if seen else {})
        if self.phase == GIVE_AWAY and self.current != seat and all(k >= WILD for k in hands[self.current]):
            if not give_the_giver_a_color(hands[self.current], len(self.known[self.current]), pool, at):
                raise ValueError("the seat giving away cards must hold a colored card")
        game._hands = hands
        game._known = known
        game._draw = pool[at:]
        game._discard = list(base._discard)
        game._uno = list(base._uno)
        game._alive = list(base._alive)
        game._succ = list(base._succ)
        game._pred = list(base._pred)
        game.scores = list(base.scores)
        game.round_points = list(base.round_points)
        game.winners = list(base.winners)
        game._log = []
        if drawer >= 0:
            game._drawn = drawn
        game._rng = random.Random(rng.getrandbits(64))
        if self.played == WILD_DRAW_FOUR and self.w4_prev_color >= 0 and self.phase < ROUND_OVER:
            if self.player == seat:
                game._w4_guilty = self.my_w4_bluff
            else:
                prev = self.w4_prev_color
                game._w4_guilty = any(KIND_COLOR[k] == prev for k in hands[self.player])
        return game



def sample_game(view: Mapping[str, Any], rng: random.Random | int | None = None) -> Game:
    """A full ``Game`` consistent with ``view`` (a ``game.view(seat)``); see the module docstring."""
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    return InfoSet(view).sample(rng)
