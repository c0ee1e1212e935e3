"""Determinization: full game states one seat cannot tell from the real one (for search).

``InfoSet(view)`` takes nothing but a seat's ``View`` (``game.view(seat)``, the env's
``infos[agent]``), parses it once, and ``sample_state(rng)`` deals the cards hidden from the
seat into a full ``GameState``; ``Game.from_state`` plays on from it. This is the one
determinizer: ``Game.determinize(seat, rng)`` and the ISMCTS agent both use it, and
``Game.from_state(InfoSet(v).sample_state(rng)).view(seat) == v``.

Kept from the view: the rules, the seat's own hand (and the card it just drew), the discard
pile, every hand size, the cards the seat has seen in other hands, scores, dealer, direction,
phase, whose decision it is, the pending card and player, the color before a pending Wild
Draw Four, the cards owed, UNO calls and eliminated seats. Sampled: every card hidden from
the seat (the rest of each other hand and the draw pile's order), dealt uniformly from the
cards the seat has not seen, and the game's random generator (future reshuffles are hidden).

Derived rather than read: the catch window's position (the steps from the pending player
to the seat deciding); the card another seat just drew in the ``play_drawn`` phase (any
hidden card, since a keep looks the same whether or not the card plays (rule 3.4); under
draw until playable one of the hidden cards that would have been playable (7.4)); a colored
card in the hand of another seat choosing what to give away (Urrrhhh is offered only to a
holder of colors); and whether another seat's pending Wild Draw Four was a bluff (read from
its sampled hand; the seat's own is ``view["my_w4_bluff"]``).

Not reproduced, because nothing in the view shows it and nothing in play depends on it:
what other seats know of each other's hands (a sample knows only the observer's knowledge)
and the event log (a sample starts with an empty one; ``Game.determinize`` gives it the
seat's own view of the log). Inferences a seat could draw from the log (an opponent who drew
on a color lacks it) are not in the view, so by default hidden cards are uniform; a caller that
drew such inferences from the views it saw passes them as ``lacks`` (``sample_state(rng, lacks)``:
per seat, card kinds and how many of its hidden cards are dealt without them), and those cards
are dealt uniformly from the unseen cards of the other kinds.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping
from typing import Any

from .cards import EDITIONS, KIND_COLOR, NUM_KINDS, WILD, WILD_DRAW_FOUR, playable_kinds
from .rules import Rules
from .state import GameState, Phase, PublicState

__all__ = ["InfoSet"]

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
    """One seat's knowledge, parsed from its view; ``sample_state(rng)`` deals the hidden cards."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = view
        self.seat = seat = int(view["seat"])
        self.rules = rules = _rules(view["rules"])
        self.edition = ed = EDITIONS[rules.edition]
        n = self.num_players = rules.num_players
        kind = ed.kind
        self.phase = phase = Phase.from_text(view["phase"])
        self.hand = [kind(c) for c in view["hand"]]
        self.discard = [kind(c) for c in view["discard_pile"]]
        self.known: list[list[int]] = [[] for _ in range(n)]
        for opp in view["opponents"]:
            self.known[opp["seat"]] = [kind(c) for c in opp["known_cards"]]
        self.sizes = list(view["hand_sizes"])
        self.drew_on = [list(row) for row in view["drew_on"]]
        current = view["current_player"]
        if current is None:  # round or game over: whoever went out, as the engine keeps it
            current = view["round_winner"] if view["round_winner"] is not None else view["dealer"]
        self.current = current
        color = view["active_color"]
        self.active = -1 if color is None else ed.color_index(color)
        self.played = -1 if view["pending_card"] is None else kind(view["pending_card"])
        self.player = -1 if view["pending_player"] is None else int(view["pending_player"])
        prev = view["w4_prev_color"]
        self.w4_prev_color = -1 if prev is None else ed.color_index(prev)
        self.my_w4_bluff = bool(view.get("my_w4_bluff"))
        # The card another seat just drew is hidden. Under draw until playable this seat knows it
        # plays (rule 7.4); otherwise it knows nothing of it (rule 3.4) and it is sampled like any.
        self.hidden_drawer = current if phase == Phase.PLAY_DRAWN and current != seat else -1
        self.drawn_plays = rules.draw_until_playable
        self.drawn = kind(view["drawn_card"]) if phase == Phase.PLAY_DRAWN and current == seat else -1
        self.playable = playable_kinds(self.active, self.discard[-1]) if self.active >= 0 else None

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

        self.alive = [not e for e in view["eliminated"]]
        self.direction = int(view["direction"])
        self.catch_index = 0
        if phase == Phase.CATCH:  # the seat offered the catch is catch_index steps past the offender
            steps, at = 1, self._next(self.player)
            while at != current and steps < n:
                steps, at = steps + 1, self._next(at)
            self.catch_index = steps

    def _next(self, seat: int) -> int:
        n, alive, d = self.num_players, self.alive, self.direction
        return next((seat + i * d) % n for i in range(1, n + 1) if alive[(seat + i * d) % n])

    def sample_state(self, rng: random.Random,
                     lacks: Mapping[int, tuple[Collection[int], int]] | None = None) -> GameState:
        """A full state consistent with the view, hidden cards dealt uniformly by ``rng``.

        ``lacks`` (optional): seat -> (card kinds, count): at least ``count`` of that seat's hidden
        cards (not the cards the observer has seen in its hand, nor a card it just drew) are believed
        not to be of those kinds. That many are dealt uniformly from the unseen cards of other kinds,
        the seats in ascending order, and the rest of its hand uniformly like any hidden card; a
        belief the unseen cards cannot satisfy (too few cards of other kinds) is dropped for that
        seat. The observer's own seat and unknown seats are ignored.
        """
        view = self.view
        seat = self.seat
        pool = list(self.pool)
        rng.shuffle(pool)
        if lacks:
            pool = self._deal_beliefs_first(pool, lacks)
        drawer = self.hidden_drawer
        drawn = self.drawn
        if drawer >= 0:
            if self.drawn_plays:
                drawn = self._playable_hidden_card(pool)
                if drawn < 0:
                    raise ValueError("no unseen card could be the card just drawn")
                pool.remove(drawn)
            else:  # any unseen card (rule 3.4)
                drawn = pool.pop()
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
        if self.phase == Phase.GIVE_AWAY and self.current != seat and all(k >= WILD for k in hands[self.current]):
            if not _give_the_giver_a_color(hands[self.current], len(self.known[self.current]), pool, at):
                raise ValueError("the seat giving away cards must hold a colored card")
        w4_guilty = False
        if self.played == WILD_DRAW_FOUR and self.w4_prev_color >= 0 and self.phase < Phase.ROUND_OVER:
            if self.player == seat:
                w4_guilty = self.my_w4_bluff
            else:
                prev = self.w4_prev_color
                w4_guilty = any(KIND_COLOR[k] == prev for k in hands[self.player])
        round_winner = view["round_winner"]
        public = PublicState(
            round=int(view["round"]), dealer=int(view["dealer"]), direction=self.direction, phase=self.phase,
            current=self.current, active_color=self.active, discard_pile=list(self.discard),
            pending_card=self.played, pending_player=self.player, w4_prev_color=self.w4_prev_color,
            catch_index=self.catch_index, penalty=int(view["penalty"]), scores=list(view["scores"]),
            round_points=list(view["round_points"]), round_winner=-1 if round_winner is None else round_winner,
            winners=list(view["winners"]), uno_called=list(view["uno_called"]), alive=list(self.alive),
            hand_sizes=list(self.sizes), drew_on=[list(row) for row in self.drew_on],
        )
        return GameState(
            rules=self.rules, public=public, hands=hands, draw_pile=pool[at:], known=known, drawn_card=drawn,
            w4_guilty=w4_guilty, rng=random.Random(rng.getrandbits(64)), log=[],
        )

    def _deal_beliefs_first(self, pool: list[int], lacks: Mapping[int, tuple[Collection[int], int]]) -> list[int]:
        """``pool`` reordered so that the slice ``sample_state`` deals each believed seat avoids its kinds.

        ``sample_state`` deals the shuffled pool in seat order (a card just drawn by another seat
        first, then each hidden hand's slots, then the draw pile). A believed seat's first ``count``
        slots are filled with the first cards of the shuffle it may hold, and every other slot with
        the remaining cards in their shuffled order, so the unconstrained cards stay uniform.
        """
        n, seat = self.num_players, self.seat
        drawer = self.hidden_drawer
        if drawer >= 0 and self.drawn_plays:
            return pool  # the drawn card is picked from the shuffle by playability; keep beliefs out of it
        # another seat's drawn card is pool.pop(), the last card: not a slot, it keeps its place
        body, drawn = (pool[:-1], pool[-1:]) if drawer >= 0 else (pool, [])
        sizes = [0 if s == seat else self.hidden[s] - (1 if s == drawer else 0) for s in range(n)]
        taken = [False] * len(body)
        slots: list[list[int] | None] = [None] * n
        for target in sorted(lacks):
            if not (0 <= target < n) or target == seat or not sizes[target]:
                continue
            kinds, count = lacks[target]
            banned, count = set(kinds), min(int(count), sizes[target])
            picks = [i for i, k in enumerate(body) if not taken[i] and k not in banned][:count]
            if count <= 0 or len(picks) < count:
                continue  # no belief, or one the unseen cards cannot satisfy: dealt uniformly
            for i in picks:
                taken[i] = True
            slots[target] = [body[i] for i in picks]
        if all(s is None for s in slots):
            return pool
        rest = iter([k for i, k in enumerate(body) if not taken[i]])
        out: list[int] = []
        for target in range(n):
            dealt = slots[target]
            out.extend(dealt or [])
            out.extend(next(rest) for _ in range(sizes[target] - len(dealt or [])))
        out.extend(rest)
        return out + drawn

    def _playable_hidden_card(self, pool: list[int]) -> int:
        """The first card of ``pool`` that could be the playable card another seat just drew, or -1."""
        playable = self.playable
        if playable is None:
            return -1
        bluff = self.rules.allow_bluff
        return next((k for k in pool if playable[k] and (bluff or k != WILD_DRAW_FOUR)), -1)


def _give_the_giver_a_color(hand: list[int], first_resampled: int, pool: list[int], start: int) -> bool:
    """The give_away phase is public, so the Urrrhhh player holds a colored card: swap the first
    colored card of ``pool[start:]`` into the hand's first resampled slot. False if impossible."""
    colored = next((i for i in range(start, len(pool)) if pool[i] < WILD), -1)
    if colored < 0 or first_resampled >= len(hand):
        return False
    hand[first_resampled], pool[colored] = pool[colored], hand[first_resampled]
    return True
