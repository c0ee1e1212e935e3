"""The UNO rules engine: one ``Game`` object, advanced one decision at a time.

The engine follows ``RULES.md`` sections 1-6. Every decision the rules give a player is a
decision here (play or draw, play or keep a drawn card, a wild's color, the Urrrhhh color,
challenge or accept, call UNO, catch); everything else (dealing, drawing, skipping, the
special wilds' effects, scoring) happens automatically between decisions, in the order of
rule 3.7:

1. the played card goes on the discard pile;
2. the player's own choices and the card's effects: Urrrhhh's give-away (``give``), the
   color (``color``), King Pig's deal, Greyskull's draws, a Reverse's flip;
3. if the player has no cards left the next player draws for a Draw Two / ``W4`` and the
   round ends;
4. the player's UNO call (``uno`` / ``no-uno``) when one card is left;
5. if they did not call, each other player in turn order is offered ``catch`` / ``no-catch``;
6. the effect on the next player: a skip, a Draw Two's draws, the ``challenge`` / ``accept``
   decision on a ``W4``, or simply their turn.

``Game.phase`` says which decision is pending and ``Game.current_player`` who makes it.
``legal_actions()`` is the single source of truth for legality; ``step`` applies one of them
or raises ``IllegalActionError`` and changes nothing.

Rulings where RULES.md leaves room (documented, tested):

* a ``W``, ``W4`` or ``WU`` played as the last card asks for no color; ``WK`` does (5.5);
* King Pig's deal (step 2) includes the King Pig player when reached, even when it was
  their last card, so such a player holding a dealt card has not gone out (3.7 step 3);
* a player left with no cards by the Urrrhhh give-away goes out at once, with no color
  choice (4.5, 6.1);
* ``draw`` is always legal in the play phase; when nothing can be drawn (3.6) the turn
  passes;
* a turn's draw that yields a card always leads to the ``play_drawn`` decision: ``play`` the
  drawn card if it plays, and ``keep``, so an unplayable card gives a forced ``keep``; a
  ``keep`` event is logged whichever it was, so other seats never learn whether a kept card
  could have been played (3.4). Under draw until playable the playable card that ends the
  drawing must be played: no ``keep`` (7.4);
* a Draw Two turned up as the first card (2.3) is not stackable, and a challenge on a
  stacked ``W4`` judges only the last one (7.4);
* seats remember exactly the cards they saw in others' hands (gifts they gave, King Pig
  deals, a hand shown in a challenge) until those cards are played or given away.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from . import actions as A
from .actions import Action, action_table, parse_action
from .cards import (
    DRAW_TWO,
    EDITIONS,
    HAND_SIZE,
    KIND_COLOR,
    KIND_RANK,
    NUM_COLORS,
    NUM_KINDS,
    REVERSE,
    SKIP,
    SPECIAL_WILD,
    WILD,
    WILD_DRAW_FOUR,
    Edition,
    deck_from_codes,
)
from .errors import ActionTextError, GameFlowError, IllegalActionError, RulesError
from .rules import Rules

STATE_FORMAT = "uno_env.game"
STATE_VERSION = 1


class Phase(StrEnum):
    """Which decision the game waits for."""

    PLAY = "play"  # play a card or draw
    PLAY_DRAWN = "play_drawn"  # play the card just drawn (if it plays), or keep it
    CHOOSE_COLOR = "choose_color"  # name the color after a wild
    GIVE_AWAY = "give_away"  # Urrrhhh: choose the color to give away
    CHALLENGE = "challenge"  # challenge or accept a Wild Draw Four
    UNO = "uno"  # call UNO or not
    CATCH = "catch"  # catch a missed UNO call or not
    SWAP = "swap"  # seven-zero: choose whose hand to swap with
    STACK = "stack"  # stacking: answer a Draw Two with a Draw Two, or accept the draws
    ROUND_OVER = "round_over"  # no decision: call next_round()
    GAME_OVER = "game_over"  # no decision: the game has ended


_PHASES = tuple(Phase)
(PLAY, PLAY_DRAWN, CHOOSE_COLOR, GIVE_AWAY, CHALLENGE, UNO_PHASE, CATCH_PHASE, SWAP_PHASE, STACK_PHASE,
 ROUND_OVER, GAME_OVER) = range(11)

# _PLAYABLE[active_color][top_rank] is a tuple of 55 bools: whether each kind may be played
# on that top card (rule 3.2). top_rank 13 stands for a wild on top (matches color only).
_PLAYABLE: tuple[tuple[tuple[bool, ...], ...], ...] = tuple(
    tuple(
        tuple(k >= WILD or KIND_COLOR[k] == color or KIND_RANK[k] == top_rank for k in range(NUM_KINDS))
        for top_rank in range(14)
    )
    for color in range(NUM_COLORS)
)
_NO_RANK = 13

# Event types and who sees the card an event names (see Game.events()).
PUBLIC, OWNER, OWNER_AND_OTHER, OTHER = "all", "seat", "seat+other", "other"
EVENT_VISIBILITY = {
    "dealer_draw": PUBLIC,  # seat drew card while choosing the dealer; other = attempt number
    "dealer": PUBLIC,  # seat deals this round; other = round number
    "deal": OWNER,  # seat was dealt card
    "return_w4": PUBLIC,  # card (W4) turned first, put back into the draw pile
    "start": PUBLIC,  # card turned to start the discard pile
    "play": PUBLIC,  # seat played card
    "draw": OWNER,  # seat drew card; other = reason code (DRAW_REASONS)
    "pass": PUBLIC,  # seat had to draw but nothing was left to draw
    "keep": PUBLIC,  # seat kept the card just drawn
    "color": PUBLIC,  # seat named color slot other
    "give": OWNER_AND_OTHER,  # seat gave card to seat other (the others see the color only)
    "king_pig": PUBLIC,  # seat was dealt card face up by King Pig
    "greyskull": PUBLIC,  # seat must draw 3 (by the power of Greyskull)
    "reshuffle": PUBLIC,  # the discard pile was reshuffled into other cards
    "uno": PUBLIC,  # seat called UNO
    "no_uno": PUBLIC,  # seat did not call UNO
    "catch": PUBLIC,  # seat caught seat other
    "no_catch": PUBLIC,  # seat let it pass
    "challenge": PUBLIC,  # seat challenged the W4 of seat other
    "guilty": PUBLIC,  # the challenged seat held the color (other: the challenger)
    "innocent": PUBLIC,  # the challenged seat did not (other: the challenger)
    "show": OTHER,  # seat's card shown to challenger other
    "accept": PUBLIC,  # seat accepted the W4
    "skip": PUBLIC,  # seat lost their turn
    "reverse": PUBLIC,  # direction is now other
    "swap": PUBLIC,  # seat swapped hands with seat other (seven-zero); each now knows the other's
    "rotate": PUBLIC,  # seat's 0 passed every hand one seat; other = direction
    "eliminated": PUBLIC,  # seat reached the target under elimination; other = its total
    "round_end": PUBLIC,  # seat went out; other = points scored this round (per scoring)
    "game_end": PUBLIC,  # seat won the game (one event per winner)
}
SIGNED_OTHER = frozenset({"reverse", "rotate"})  # events whose ``other`` is a direction, +1 or -1
DRAW_REASONS = ("turn", "draw_two", "draw_four", "challenge_guilty", "challenge_innocent",
                "uno_penalty", "greyskull", "start_draw_two")
(R_TURN, R_DRAW_TWO, R_DRAW_FOUR, R_GUILTY, R_INNOCENT, R_UNO, R_GREYSKULL, R_START) = range(8)

# Internal event: (type, seat, card kind or -1, other int or -1)
Event = tuple[str, int, int, int]


class Game:
    """One game of UNO under ``Rules``, from the first deal to the target score.

    ``Game(rules, seed=7)`` shuffles with a ``random.Random(seed)`` the game owns;
    ``Game(rules, deck=[codes, top first], dealer=0)`` deals a stacked deck instead
    (``cards.stacked_deck`` builds one).
    """

    # Round state, set by _deal (and by state.game_from_dict).
    _hands: list[list[int]]
    _draw: list[int]  # top of the pile is the end of the list
    _discard: list[int]  # top is the end of the list
    _known: list[dict[int, list[int]]]  # per target seat: observer -> cards seen there
    _uno: list[bool]
    _alive: list[bool]
    _succ: list[int]
    _pred: list[int]
    _live: int
    _dealer: int
    _direction: int
    _phase: int
    _current: int
    _active: int  # active color slot, -1 while the opening wild's is pending
    _top_rank: int
    _played: int  # card whose effects are being resolved, -1 if none
    _player: int  # who played it, -1 if none
    _drawn: int  # card just drawn (phase play_drawn), -1 otherwise
    _w4_guilty: bool
    _w4_prev_color: int
    _catch_index: int
    _penalty: int  # cards owed for Draw Two / Wild Draw Four (stacked totals)
    _legal: tuple[Action, ...] | None  # cached legal actions

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        *,
        deck: Sequence[str] | None = None,
        dealer: int | None = None,
    ) -> None:
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a uno_env.core.Rules, got {type(rules).__name__}")
        self.rules = rules
        self.edition: Edition = EDITIONS[rules.edition]
        self._actions = action_table(self.edition)
        self.num_players = rules.num_players
        self._rng = random.Random(seed)
        self._log: list[Event] = []
        self.scores = [0] * self.num_players
        self.round_points = [0] * self.num_players
        self.winners: list[int] = []
        self.round_number = 0
        self.round_winner: int | None = None
        self._alive = [True] * self.num_players
        self._rebuild_ring()
        if dealer is None:
            dealer = rules.first_dealer
        if dealer is not None and (isinstance(dealer, bool) or not isinstance(dealer, int)
                                   or not 0 <= dealer < self.num_players):
            raise RulesError(f"dealer must be a seat 0..{self.num_players - 1}, got {dealer!r}")
        kinds = deck_from_codes(self.edition, deck) if deck is not None else None
        if dealer is None:
            dealer = self._draw_for_dealer()
        self._deal(dealer, kinds)

    # ------------------------------------------------------------------ public views
    @property
    def phase(self) -> Phase:
        """The pending decision (a ``Phase``)."""
        return _PHASES[self._phase]

    @property
    def current_player(self) -> int | None:
        """The seat that must decide now, or None when the round or game is over."""
        return self._current if self._phase < ROUND_OVER else None

    @property
    def hands(self) -> list[list[str]]:
        """Every seat's hand as card codes (a copy; hidden information included)."""
        code = self.edition.code
        return [[code(k) for k in hand] for hand in self._hands]

    @property
    def hand_sizes(self) -> list[int]:
        """Number of cards in each seat's hand (public)."""
        return [len(h) for h in self._hands]

    @property
    def draw_pile(self) -> list[str]:
        """The draw pile as card codes, top first."""
        code = self.edition.code
        return [code(k) for k in reversed(self._draw)]

    @property
    def discard_pile(self) -> list[str]:
        """The discard pile as card codes, top last."""
        code = self.edition.code
        return [code(k) for k in self._discard]

    @property
    def top_card(self) -> str:
        """The code of the discard pile's top card."""
        return self.edition.code(self._discard[-1])

    @property
    def active_color(self) -> str | None:
        """The color to match (rule 3.1), or None while the opening wild's color is pending."""
        return None if self._active < 0 else self.edition.colors[self._active]

    @property
    def active_color_index(self) -> int:
        """The active color's slot 0..3, or -1 while none is chosen yet."""
        return self._active

    @property
    def direction(self) -> int:
        """+1 for clockwise, -1 for counter-clockwise."""
        return self._direction

    @property
    def dealer(self) -> int:
        """This round's dealer."""
        return self._dealer

    @property
    def uno_called(self) -> list[bool]:
        """Per seat: called UNO and still holds that one card."""
        return list(self._uno)

    @property
    def is_round_over(self) -> bool:
        """Whether the current round has ended."""
        return self._phase >= ROUND_OVER

    @property
    def is_game_over(self) -> bool:
        """Whether a player or team has won the game."""
        return self._phase == GAME_OVER

    @property
    def pending_card(self) -> str | None:
        """The card whose effects are being resolved (the last card played), if any."""
        return None if self._played < 0 else self.edition.code(self._played)

    @property
    def pending_player(self) -> int | None:
        """The seat that played the pending card, if any."""
        return None if self._player < 0 else self._player

    @property
    def drawn_card(self) -> str | None:
        """In the play_drawn phase, the card just drawn."""
        return self.edition.code(self._drawn) if self._phase == PLAY_DRAWN else None

    def known_cards(self, observer: int, target: int) -> list[str]:
        """Cards of ``target``'s hand that ``observer`` has seen and knows are still there."""
        return [self.edition.code(k) for k in self._known[target].get(observer, ())]

    def next_seat(self, seat: int, steps: int = 1) -> int:
        """The seat still in the game ``steps`` places after ``seat`` in the direction of play."""
        ring = self._succ if self._direction > 0 else self._pred
        if steps == 1:
            return ring[seat]
        for _ in range(steps):
            seat = ring[seat]
        return seat

    def _rebuild_ring(self) -> None:
        """Clockwise and counter-clockwise neighbours among the seats still in the game."""
        n = self.num_players
        alive = self._alive
        self._succ = [next((s + i) % n for i in range(1, n + 1) if alive[(s + i) % n]) for s in range(n)]
        self._pred = [next((s - i) % n for i in range(1, n + 1) if alive[(s - i) % n]) for s in range(n)]
        self._live = sum(alive)

    @property
    def eliminated(self) -> list[bool]:
        """Per seat: out of the game (elimination variant)."""
        return [not a for a in self._alive]

    def team_of(self, seat: int) -> int | None:
        """The seat's team (0 or 1) when playing partners, else None."""
        return seat % 2 if self.rules.teams else None

    @property
    def penalty(self) -> int:
        """Cards owed by the player facing a Draw Two or Wild Draw Four (stacked totals)."""
        return self._penalty

    def card_value(self, code: str) -> int:
        """Points of one card (rule 6.2)."""
        return self.edition.card_value(self.edition.kind(code))

    def hand_value(self, seat: int) -> int:
        """Points of the cards in a seat's hand."""
        value = self.edition.card_value
        return sum(value(k) for k in self._hands[seat])

    # ------------------------------------------------------------------ actions
    def legal_actions(self) -> list[Action]:
        """The actions the current player may take now, in id order."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return list(legal)

    def parse_action(self, text: str) -> Action:
        """An action from its text form (``play R7``, ``draw``, ``color blue``...)."""
        return parse_action(self.edition, text)

    def action(self, action_id: int) -> Action:
        """The Action with a given id (``0 <= id < NUM_ACTIONS``)."""
        if isinstance(action_id, bool) or not isinstance(action_id, int) or not 0 <= action_id < A.NUM_ACTIONS:
            raise IllegalActionError(f"action ids are ints 0..{A.NUM_ACTIONS - 1}, got {action_id!r}")
        return self._actions[action_id]

    def step(self, action: Action | int | str) -> None:
        """Apply one legal action (an Action, its id or its text); raises IllegalActionError."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action.__class__ is not Action:
            action = self._coerce(action)
        if action not in legal:
            self._reject(action, legal)
        self._legal = None
        phase = self._phase
        seat = self._current
        if phase == PLAY:
            if action < A.NUM_PLAY_ACTIONS:
                self._play(seat, int(action))
            else:
                self._draw_for_turn(seat)
        elif phase == PLAY_DRAWN:
            if action == A.KEEP:
                self._log.append(("keep", seat, -1, -1))
                self._begin_turn(self.next_seat(seat))
            else:
                self._play(seat, int(action))
        elif phase == CHOOSE_COLOR:
            self._choose_color(seat, action - A.COLOR_BASE)
        elif phase == GIVE_AWAY:
            self._give_away(seat, action - A.GIVE_BASE)
        elif phase == UNO_PHASE:
            if action == A.UNO:
                self._uno[seat] = True
                self._log.append(("uno", seat, -1, -1))
            else:
                self._log.append(("no_uno", seat, -1, -1))
            self._after_uno_call()
        elif phase == CATCH_PHASE:
            self._answer_catch(seat, action == A.CATCH)
        elif phase == SWAP_PHASE:
            self._swap_hands(seat, (seat + action - A.SWAP_BASE) % self.num_players)
        elif action < A.NUM_PLAY_ACTIONS:  # stacking a Draw Two or a W4
            self._play(seat, int(action))
        elif phase == STACK_PHASE:
            self._take_penalty(seat, R_DRAW_TWO, accepted=True)
        else:  # CHALLENGE
            self._answer_w4(seat, action == A.CHALLENGE)

    def _coerce(self, action: Any) -> Action:
        if isinstance(action, str):
            return parse_action(self.edition, action)
        if isinstance(action, int) and not isinstance(action, bool):
            if 0 <= action < A.NUM_ACTIONS:
                return self._actions[action]
            raise IllegalActionError(f"action ids are 0..{A.NUM_ACTIONS - 1}, got {action}")
        raise ActionTextError(f"an action is an Action, an int id or its text, got {type(action).__name__}")

    def _reject(self, action: Action, legal: tuple[Action, ...]) -> None:
        if self._phase >= ROUND_OVER:
            what = "the game is over" if self._phase == GAME_OVER else "the round is over; call next_round()"
            raise IllegalActionError(f"{action} is not legal: {what}")
        raise IllegalActionError(
            f"{action} is not legal now (phase {self.phase.value}, seat {self._current}); "
            f"legal: {', '.join(map(str, legal))}"
        )

    def _compute_legal(self) -> tuple[Action, ...]:
        phase = self._phase
        table = self._actions
        if phase == PLAY:
            hand = self._hands[self._current]
            playable = _PLAYABLE[self._active][self._top_rank]
            kinds = {k for k in hand if playable[k]}
            if WILD_DRAW_FOUR in kinds and not self.rules.allow_bluff and self._holds_active(hand):
                kinds.discard(WILD_DRAW_FOUR)
            return (*[table[k] for k in sorted(kinds)], table[A.DRAW])
        if phase == PLAY_DRAWN:  # rule 3.4; under draw until playable the card must be played (7.4)
            drawn = self._drawn
            if not self._is_playable(drawn, self._hands[self._current]):
                return (table[A.KEEP],)
            if self.rules.draw_until_playable:
                return (table[drawn],)
            return table[drawn], table[A.KEEP]
        if phase == CHOOSE_COLOR:
            return table[A.COLOR_BASE:A.COLOR_BASE + NUM_COLORS]
        if phase == UNO_PHASE:
            return table[A.UNO], table[A.NO_UNO]
        if phase == CATCH_PHASE:
            return table[A.CATCH], table[A.NO_CATCH]
        if phase == CHALLENGE:
            if self.rules.stacking and WILD_DRAW_FOUR in self._hands[self._current]:
                hand = self._hands[self._current]
                if self.rules.allow_bluff or not self._holds_active(hand):
                    return table[WILD_DRAW_FOUR], table[A.CHALLENGE], table[A.ACCEPT]
            return table[A.CHALLENGE], table[A.ACCEPT]
        if phase == STACK_PHASE:
            twos = sorted({k for k in self._hands[self._current] if KIND_RANK[k] == DRAW_TWO})
            return (*[table[k] for k in twos], table[A.ACCEPT])
        if phase == SWAP_PHASE:
            seat = self._current
            n = self.num_players
            return tuple(table[A.SWAP_BASE + k] for k in range(1, n) if self._alive[(seat + k) % n])
        if phase == GIVE_AWAY:
            held = {KIND_COLOR[k] for k in self._hands[self._current] if k < WILD}
            return tuple(table[A.GIVE_BASE + c] for c in sorted(held))
        return ()

    def _holds_active(self, hand: list[int]) -> bool:
        active = self._active
        for k in hand:
            if KIND_COLOR[k] == active:
                return True
        return False

    def _is_playable(self, kind: int, hand: list[int]) -> bool:
        if not _PLAYABLE[self._active][self._top_rank][kind]:
            return False
        return kind != WILD_DRAW_FOUR or self.rules.allow_bluff or not self._holds_active(hand)

    # ------------------------------------------------------------------ turn flow
    def _begin_turn(self, seat: int) -> None:
        self._phase = PLAY
        self._current = seat
        self._played = -1
        self._player = -1
        self._drawn = -1

    def _draw_for_turn(self, seat: int) -> None:
        """Rule 3.4: draw one card, then decide on it in ``play_drawn`` whether or not it plays.

        Under draw until playable (7.4) the drawing goes on until a playable card comes; when
        the piles run out first, the turn passes.
        """
        until_playable = self.rules.draw_until_playable
        while True:
            card = self._draw_card(seat, R_TURN)
            if card < 0:
                self._log.append(("pass", seat, -1, -1))
                self._begin_turn(self.next_seat(seat))
                return
            if not until_playable or self._is_playable(card, self._hands[seat]):
                self._phase = PLAY_DRAWN
                self._drawn = card
                return

    def _play(self, seat: int, kind: int) -> None:
        hand = self._hands[seat]
        hand.remove(kind)
        self._discard.append(kind)
        self._uno[seat] = False
        self._drawn = -1
        self._log.append(("play", seat, kind, -1))
        if self._known[seat]:
            self._forget(seat, kind)
        self._player = seat
        self._played = kind
        if kind < WILD:
            self._active = KIND_COLOR[kind]
            rank = KIND_RANK[kind]
            self._top_rank = rank
            if rank == REVERSE:
                self._direction = -self._direction
                self._log.append(("reverse", seat, -1, self._direction))
            elif rank == DRAW_TWO:
                self._penalty += 2
            elif self.rules.seven_zero and hand:
                if rank == 7:
                    self._phase = SWAP_PHASE
                    self._current = seat
                    return
                if rank == 0:
                    self._rotate_hands(seat)
            self._resolve_end_of_play()
            return
        self._top_rank = _NO_RANK
        if kind == WILD_DRAW_FOUR:
            self._penalty += 4
            self._w4_guilty = self._holds_active(hand)
            self._w4_prev_color = self._active
        is_king_pig = kind == SPECIAL_WILD and self.edition.special_code == "WK"
        if not hand and not is_king_pig:
            # Rule 5.5: a wild that goes out asks for no color; Greyskull still strikes.
            if kind == SPECIAL_WILD:
                self._special_effect(seat)
            self._resolve_end_of_play()
            return
        self._current = seat
        if kind == SPECIAL_WILD and self.edition.special_code == "WU" and any(k < WILD for k in hand):
            self._phase = GIVE_AWAY
        else:
            self._phase = CHOOSE_COLOR

    def _choose_color(self, seat: int, color: int) -> None:
        self._active = color
        self._log.append(("color", seat, -1, color))
        if self._played < 0:  # the opening wild (rule 2.3): the chooser then plays
            self._phase = PLAY
            return
        if self._played == SPECIAL_WILD:
            self._special_effect(seat)
        self._resolve_end_of_play()

    def _special_effect(self, seat: int) -> None:
        code = self.edition.special_code
        if code == "WK":
            self._king_pig_deal(seat)
        elif code == "WG":
            self._greyskull_draws(seat)

    def _resolve_end_of_play(self) -> None:
        """Steps 3 and 4 of rule 3.7: going out, then the UNO call."""
        seat = self._player
        hand = self._hands[seat]
        if not hand:
            if self._penalty:
                reason = R_DRAW_FOUR if self._played == WILD_DRAW_FOUR else R_DRAW_TWO
                self._draw_cards(self.next_seat(seat), self._penalty, reason)
                self._penalty = 0
            self._end_round(seat)
            return
        if len(hand) == 1 and not self._uno[seat]:
            if self.rules.uno_call == "explicit":
                self._phase = UNO_PHASE
                self._current = seat
                return
            self._uno[seat] = True
            self._log.append(("uno", seat, -1, -1))
        self._after_uno_call()

    def _after_uno_call(self) -> None:
        """Step 5 of rule 3.7: the catch window, when a call was missed."""
        seat = self._player
        if len(self._hands[seat]) == 1 and not self._uno[seat]:
            self._catch_index = 1
            self._phase = CATCH_PHASE
            self._current = self.next_seat(seat)
            return
        self._effect_on_next()

    def _answer_catch(self, seat: int, catch: bool) -> None:
        offender = self._player
        if catch:
            self._log.append(("catch", seat, -1, offender))
            self._draw_cards(offender, 2, R_UNO)
            self._catch_index = 0
            self._effect_on_next()
            return
        self._log.append(("no_catch", seat, -1, -1))
        self._catch_index += 1
        if self._catch_index < self._live:
            self._current = self.next_seat(offender, self._catch_index)
        else:
            self._catch_index = 0
            self._effect_on_next()

    def _effect_on_next(self) -> None:
        """Step 6 of rule 3.7: what the played card does to the next player."""
        seat = self._player
        kind = self._played
        nxt = self.next_seat(seat)
        if kind < WILD:
            rank = KIND_RANK[kind]
            if rank == SKIP or rank == REVERSE and self._live == 2:
                self._log.append(("skip", nxt, -1, -1))
                self._begin_turn(self.next_seat(nxt))
            elif rank == DRAW_TWO:
                if self.rules.stacking:  # offered even without a Draw Two, so holding none stays hidden
                    self._phase = STACK_PHASE
                    self._current = nxt
                else:
                    self._take_penalty(nxt, R_DRAW_TWO, accepted=False)
            else:
                self._begin_turn(nxt)
        elif kind == WILD_DRAW_FOUR:
            self._phase = CHALLENGE
            self._current = nxt
        else:
            self._begin_turn(nxt)

    def _take_penalty(self, seat: int, reason: int, accepted: bool) -> None:
        """Draw the Draw Two / Wild Draw Four total and lose the turn."""
        if accepted:
            self._log.append(("accept", seat, -1, -1))
        self._draw_cards(seat, self._penalty, reason)
        self._penalty = 0
        self._log.append(("skip", seat, -1, -1))
        self._begin_turn(self.next_seat(seat))

    def _answer_w4(self, seat: int, challenge: bool) -> None:
        offender = self._player
        if not challenge:
            self._take_penalty(seat, R_DRAW_FOUR, accepted=True)
            return
        guilty = self._w4_guilty
        self._log.append(("challenge", seat, -1, offender))
        self._log.append(("guilty" if guilty else "innocent", offender, -1, seat))
        shown = self._hands[offender]
        for k in shown:
            self._log.append(("show", offender, k, seat))
        self._known[offender][seat] = list(shown)
        penalty = self._penalty
        self._penalty = 0
        if guilty:
            self._draw_cards(offender, penalty, R_GUILTY)
            self._begin_turn(seat)
        else:
            self._draw_cards(seat, penalty + 2, R_INNOCENT)
            self._log.append(("skip", seat, -1, -1))
            self._begin_turn(self.next_seat(seat))

    # ------------------------------------------------------------------ special wilds
    def _give_away(self, giver: int, color: int) -> None:
        """Rule 4.5: every card of the color, in rank order, one to each other seat clockwise."""
        hand = self._hands[giver]
        given = sorted(k for k in hand if KIND_COLOR[k] == color)
        self._hands[giver] = [k for k in hand if KIND_COLOR[k] != color]
        for observer, seen in list(self._known[giver].items()):
            kept = [k for k in seen if KIND_COLOR[k] != color]
            if kept:
                self._known[giver][observer] = kept
            else:
                del self._known[giver][observer]
        receiver = giver
        for kind in given:
            receiver = self._succ[receiver]
            if receiver == giver:
                receiver = self._succ[receiver]
            self._hands[receiver].append(kind)
            self._uno[receiver] = False
            self._known[receiver].setdefault(giver, []).append(kind)
            self._log.append(("give", giver, kind, receiver))
        if self._hands[giver]:
            self._phase = CHOOSE_COLOR
        else:
            self._resolve_end_of_play()

    def _king_pig_deal(self, player: int) -> None:
        """Rule 4.6: deal face up from the left until someone gets the declared color."""
        n = self.num_players
        seat = player
        while True:
            seat = self._succ[seat]
            card = self._draw_card(seat, -1)
            if card < 0:
                break
            self._log.append(("king_pig", seat, card, -1))
            known = self._known[seat]
            for observer in range(n):
                if observer != seat:
                    known.setdefault(observer, []).append(card)
            if KIND_COLOR[card] == self._active:
                break

    def _greyskull_draws(self, player: int) -> None:
        """Rule 4.7: every other seat draws 3, clockwise from the left."""
        seat = self._succ[player]
        while seat != player:
            self._log.append(("greyskull", seat, -1, -1))
            self._draw_cards(seat, 3, R_GREYSKULL)
            seat = self._succ[seat]

    # ------------------------------------------------------------------ seven-zero
    def _swap_hands(self, seat: int, target: int) -> None:
        """Seven-zero: a 7 swaps the player's hand with a chosen seat's."""
        self._log.append(("swap", seat, -1, target))
        self._move_hands({seat: target, target: seat})
        self._resolve_end_of_play()

    def _rotate_hands(self, seat: int) -> None:
        """Seven-zero: a 0 passes every hand one seat in the direction of play."""
        self._log.append(("rotate", seat, -1, self._direction))
        self._move_hands({s: self.next_seat(s) for s in range(self.num_players) if self._alive[s]})

    def _move_hands(self, moves: dict[int, int]) -> None:
        """Move hands (source seat -> destination seat); knowledge of them moves along.

        A seat that passes its hand on knows exactly what the receiver now holds.
        """
        old_hands = self._hands
        old_known = self._known
        hands = list(old_hands)
        known = [dict(k) for k in old_known]
        for src in moves:
            known[src] = {}
        for src, dst in moves.items():
            hands[dst] = old_hands[src]
            moved = {obs: cards for obs, cards in old_known[src].items() if obs != dst}
            if old_hands[src]:
                moved[src] = list(old_hands[src])
            known[dst] = moved
            self._uno[dst] = False
        self._hands = hands
        self._known = known

    # ------------------------------------------------------------------ drawing
    def _draw_card(self, seat: int, reason: int) -> int:
        """Move the top card of the draw pile to a hand (refilling per 3.6); -1 if none."""
        pile = self._draw
        if not pile:
            self._refill()
            pile = self._draw
            if not pile:
                return -1
        card = pile.pop()
        self._hands[seat].append(card)
        self._uno[seat] = False
        if reason >= 0:
            self._log.append(("draw", seat, card, reason))
        return card

    def _draw_cards(self, seat: int, count: int, reason: int) -> None:
        for _ in range(count):
            if self._draw_card(seat, reason) < 0:
                self._log.append(("pass", seat, -1, -1))
                return

    def _refill(self) -> None:
        discard = self._discard
        if len(discard) <= 1:
            return
        top = discard.pop()
        self._rng.shuffle(discard)
        self._draw = discard
        self._discard = [top]
        self._log.append(("reshuffle", -1, -1, len(discard)))

    def _forget(self, seat: int, kind: int) -> None:
        known = self._known[seat]
        for observer, seen in list(known.items()):
            if kind in seen:
                seen.remove(kind)
                if not seen:
                    del known[observer]

    # ------------------------------------------------------------------ rounds
    def _draw_for_dealer(self) -> int:
        """Rule 2.1: highest number deals; symbols and wilds count 0; ties draw again."""
        deck = self.edition.deck()
        self._rng.shuffle(deck)
        contenders = list(range(self.num_players))
        attempt = 0
        while True:
            best = -1
            drawn: dict[int, int] = {}
            for seat in contenders:
                if not deck:
                    deck = self.edition.deck()
                    self._rng.shuffle(deck)
                card = deck.pop()
                self._log.append(("dealer_draw", seat, card, attempt))
                value = KIND_RANK[card] if card < WILD and KIND_RANK[card] <= 9 else 0
                drawn[seat] = value
                best = max(best, value)
            contenders = [s for s in contenders if drawn[s] == best]
            if len(contenders) == 1:
                return contenders[0]
            attempt += 1

    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        """Rules 2.2 and 2.3: shuffle, deal seven each, turn the first card."""
        n = self.num_players
        if deck is None:
            deck = self.edition.deck()
            self._rng.shuffle(deck)
        self.round_number += 1
        self._dealer = dealer
        self._log.append(("dealer", dealer, -1, self.round_number))
        self._draw = deck[::-1]  # top of the pile is the end of the list
        self._hands = [[] for _ in range(n)]
        self._known = [{} for _ in range(n)]
        self._uno = [False] * n
        self._direction = 1
        self._played = -1
        self._player = -1
        self._drawn = -1
        self._w4_guilty = False
        self._w4_prev_color = -1
        self._catch_index = 0
        self._legal = None
        self.round_winner = None
        self.round_points = [0] * n
        self._penalty = 0
        pile = self._draw
        for _ in range(HAND_SIZE):
            seat = dealer
            for _ in range(self._live):
                seat = self._succ[seat]
                card = pile.pop()
                self._hands[seat].append(card)
                self._log.append(("deal", seat, card, -1))
        first = pile.pop()
        while first == WILD_DRAW_FOUR:
            self._log.append(("return_w4", -1, first, -1))
            pile.insert(len(pile) - len(pile) // 2, first)
            first = pile.pop()
        self._discard = [first]
        self._log.append(("start", -1, first, -1))
        left = self._succ[dealer]
        if first >= WILD:
            self._active = -1
            self._top_rank = _NO_RANK
            self._phase = CHOOSE_COLOR
            self._current = left
            return
        self._active = KIND_COLOR[first]
        rank = self._top_rank = KIND_RANK[first]
        if rank == DRAW_TWO:
            self._draw_cards(left, 2, R_START)
            self._log.append(("skip", left, -1, -1))
            self._begin_turn(self._succ[left])
        elif rank == REVERSE:
            self._direction = -1
            self._log.append(("reverse", -1, -1, -1))
            self._begin_turn(dealer)
        elif rank == SKIP:
            self._log.append(("skip", left, -1, -1))
            self._begin_turn(self._succ[left])
        else:
            self._begin_turn(left)

    def _end_round(self, winner: int) -> None:
        """Rules 6.1-6.4: score the round, then see whether the game is won."""
        rules = self.rules
        value = self.edition.card_value
        n = self.num_players
        hand_points = [sum(value(k) for k in hand) for hand in self._hands]
        standard = rules.scoring == "standard" and not rules.elimination
        if rules.teams:
            team_points = [sum(hand_points[s] for s in range(team, n, 2)) for team in (0, 1)]
            if standard:  # the winning team scores the opposing team's cards
                team_points = [team_points[1], 0] if winner % 2 == 0 else [0, team_points[0]]
            points = [team_points[s % 2] for s in range(n)]
        elif standard:
            points = [0] * n
            points[winner] = sum(hand_points)
        else:
            points = hand_points
        for seat, p in enumerate(points):
            self.scores[seat] += p
        self.round_points = points
        self.round_winner = winner
        self._legal = None
        self._log.append(("round_end", winner, -1, points[winner] if standard else 0))
        target = rules.target_score
        scores = self.scores
        if rules.elimination:
            for seat in range(n):
                if self._alive[seat] and scores[seat] >= target:
                    self._alive[seat] = False
                    self._log.append(("eliminated", seat, -1, scores[seat]))
            self._rebuild_ring()
            winners = [s for s in range(n) if self._alive[s]] if self._live <= 1 else []
        elif standard:
            winners = [s for s in range(n) if scores[s] >= target and (s == winner or rules.teams)]
        elif max(scores) >= target:
            low = min(scores)
            winners = [s for s, total in enumerate(scores) if total == low]
        else:
            winners = []
        if winners:
            self.winners = winners
            self._phase = GAME_OVER
            for seat in winners:
                self._log.append(("game_end", seat, -1, -1))
        else:
            self._phase = ROUND_OVER

    def next_round(self, deck: Sequence[str] | None = None) -> None:
        """Deal the next round (rule 6.5); the dealer moves one seat left."""
        if self._phase != ROUND_OVER:
            raise GameFlowError(
                "next_round() is allowed only when a round is over and the game is not"
                + (" (the game is over)" if self._phase == GAME_OVER else f" (phase is {self.phase.value})")
            )
        kinds = deck_from_codes(self.edition, deck) if deck is not None else None
        self._deal(self._succ[self._dealer], kinds)

    # ------------------------------------------------------------------ log
    @property
    def log(self) -> list[Event]:
        """The raw event log: tuples (type, seat, card kind or -1, other or -1)."""
        return list(self._log)

    def events(self, seat: int | None = None) -> list[dict[str, Any]]:
        """The event log as dicts; with ``seat``, only what that seat may know.

        Each event has ``type``, ``seat``, ``card`` (a code or None), ``other`` and
        ``seen_by``: the seats that saw the card it names (all seats for public events).
        Hidden cards are blanked (``card`` None) in a seat's own view.
        """
        out = []
        everyone = list(range(self.num_players))
        for kind, who, card, other in self._log:
            event = _event_dict(self.edition, kind, who, card, other, everyone)
            if seat is not None and seat not in event["seen_by"] and event["card"] is not None:
                event = {**event, "card": None}
            out.append(event)
        return out

    # ------------------------------------------------------------------ copies and saves
    def clone(self) -> Game:
        """An independent copy (random generator state included)."""
        other = Game.__new__(Game)
        other.__dict__.update(self.__dict__)
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        other._log = list(self._log)
        other.scores = list(self.scores)
        other.round_points = list(self.round_points)
        other.winners = list(self.winners)
        other._draw = list(self._draw)
        other._discard = list(self._discard)
        other._hands = [list(h) for h in self._hands]
        other._known = [{o: list(s) for o, s in known.items()} for known in self._known]
        other._uno = list(self._uno)
        other._alive = list(self._alive)
        return other

    def view(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may know, as a structured dict (see ``uno_env.core.view``)."""
        from .view import seat_view

        return seat_view(self, seat)

    def determinize(self, seat: int, rng: random.Random | int | None = None) -> Game:
        """A full game consistent with what ``seat`` knows, every hidden card resampled.

        Kept: the seat's own hand, the discard pile, hand sizes, the cards the seat has
        seen in others' hands, and everything public. Resampled: the other cards in hands,
        the draw pile order, the game's random generator, and whether a pending ``W4`` was a
        bluff (read again from the resampled hand). ``rng`` is a ``random.Random`` or a seed.
        """
        from .determinize import determinize

        return determinize(self, seat, rng)

    def to_dict(self, include_log: bool = True) -> dict[str, Any]:
        """The whole state as JSON-serialisable data (see ``uno_env.core.state``)."""
        from .state import game_to_dict

        return game_to_dict(self, include_log)

    @classmethod
    def from_dict(cls, data: Any) -> Game:
        """Rebuild a game saved with ``to_dict``; raises ``StateError`` when malformed."""
        from .state import game_from_dict

        return game_from_dict(data)

    def __repr__(self) -> str:
        return (
            f"Game({self.rules.edition}, {self.num_players} players, round {self.round_number}, "
            f"phase {self.phase.value}, seat {self.current_player}, top {self.top_card})"
        )


def _event_dict(edition: Edition, kind: str, who: int, card: int, other: int, everyone: list[int]) -> dict[str, Any]:
    visibility = EVENT_VISIBILITY[kind]
    event: dict[str, Any] = {
        "type": kind,
        "seat": None if who < 0 else who,
        "card": edition.code(card) if card >= 0 else None,
        "other": other if kind in SIGNED_OTHER or other >= 0 else None,
    }
    if kind == "draw":
        event["reason"] = DRAW_REASONS[other]
    if kind == "color":
        event["color"] = edition.colors[other]
    if visibility == PUBLIC:
        event["seen_by"] = everyone
    elif visibility == OWNER:
        event["seen_by"] = [who]
    elif visibility == OWNER_AND_OTHER:
        event["seen_by"] = [who, other]
    else:
        event["seen_by"] = [other]
    return event
