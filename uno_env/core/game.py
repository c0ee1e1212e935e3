"""The UNO rules engine: ``Game``, the rules applied to a ``GameState``, one decision at a time.

The engine follows ``docs/RULES.md`` (sections 1-7). Every decision the rules give a player is a
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

The position itself is ``game.state``, a ``GameState`` (``state.py``) with documented public
fields; ``Game.from_state(state)`` plays on from one, ``game.check()`` checks its invariants
(``checks.py``). The event log is bounded: a game keeps its last ``log_limit`` events (default
``DEFAULT_LOG_LIMIT``, 50,000: a few MB; ``None`` keeps every event, ``0`` none), dropping the
oldest in chunks as it plays and at once when a longer log is loaded (``from_state``, ``from_dict``,
which reads only the entries it keeps); ``game.log_length`` counts every event since the game (or its load) began,
and ``events(seat, since=i)`` reads from event number ``i`` on.

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
from typing import Any, cast

from . import actions as A
from .actions import Action, action_table, parse_action
from .cards import (
    DRAW_TWO,
    DREW_ON_SIZE,
    EDITIONS,
    HAND_SIZE,
    KIND_COLOR,
    KIND_RANK,
    NO_RANK,
    NUM_COLORS,
    PLAYABLE,
    REVERSE,
    SKIP,
    SPECIAL_WILD,
    WILD,
    WILD_DRAW_FOUR,
    Edition,
    deck_from_codes,
    integer_scalar,
    short_repr,
    top_rank,
)
from .checks import check_state
from .determinize import InfoSet
from .errors import ActionTextError, GameFlowError, IllegalActionError, RulesError, StateError
from .events import (
    DRAW_REASONS,
    EVENT_VISIBILITY,
    R_DRAW_FOUR,
    R_DRAW_TWO,
    R_GREYSKULL,
    R_GUILTY,
    R_INNOCENT,
    R_START,
    R_TURN,
    R_UNO,
    SIGNED_OTHER,
    Event,
    EventDict,
    event_dict,
    seat_log,
)
from .rules import Rules
from .saves import STATE_FORMAT, STATE_VERSION, state_from_dict, state_to_dict
from .state import GameState, Phase, PublicState
from .view import SeatView, View, checked_seat, seat_view, view_dict

__all__ = [
    "DEFAULT_LOG_LIMIT", "DRAW_REASONS", "EVENT_VISIBILITY", "Game", "Phase", "SIGNED_OTHER", "STATE_FORMAT",
    "STATE_VERSION",
]

DEFAULT_LOG_LIMIT = 50_000

# The phases as plain names for the engine's hot paths (Phase members; they are ints).
PLAY, PLAY_DRAWN, CHOOSE_COLOR, GIVE_AWAY, CHALLENGE = (
    Phase.PLAY, Phase.PLAY_DRAWN, Phase.CHOOSE_COLOR, Phase.GIVE_AWAY, Phase.CHALLENGE)
UNO_PHASE, CATCH_PHASE, SWAP_PHASE, STACK_PHASE, ROUND_OVER, GAME_OVER = (
    Phase.UNO, Phase.CATCH, Phase.SWAP, Phase.STACK, Phase.ROUND_OVER, Phase.GAME_OVER)


class Game:
    """One game of UNO under ``Rules``, from the first deal to the target score.

    ``Game(rules, seed=7)`` shuffles with a ``random.Random(seed)`` the game owns;
    ``Game(rules, deck=[codes, top first], dealer=0)`` deals a stacked deck instead
    (``cards.stacked_deck`` builds one). ``log_limit``: events kept (see the module docstring).
    ``Game.from_state(state)`` and ``Game.from_dict(save)`` play on from a position.
    """

    __slots__ = ("state", "rules", "edition", "num_players", "log_limit", "_log_cap", "_pub", "_actions", "_legal",
                 "_succ", "_pred", "_live", "_top_rank")

    state: GameState
    rules: Rules
    edition: Edition
    num_players: int
    log_limit: int | None

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        *,
        deck: Sequence[str] | None = None,
        dealer: int | None = None,
        log_limit: int | None = DEFAULT_LOG_LIMIT,
    ) -> None:
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a uno_env.core.Rules, got {type(rules).__name__}")
        if seed is not None:
            seed = _checked_int(seed, "seed must be None or an int")
        n = rules.num_players
        self._setup(rules, log_limit)
        public = PublicState(
            round=0, dealer=0, direction=1, phase=PLAY, current=0, active_color=-1, discard_pile=[],
            pending_card=-1, pending_player=-1, w4_prev_color=-1, catch_index=0, penalty=0, scores=[0] * n,
            round_points=[0] * n, round_winner=-1, winners=[], uno_called=[False] * n, alive=[True] * n,
            hand_sizes=[0] * n, drew_on=[[0] * DREW_ON_SIZE for _ in range(n)],
        )
        self.state = GameState(
            rules=rules, public=public, hands=[[] for _ in range(n)], draw_pile=[], known=[{} for _ in range(n)],
            drawn_card=-1, w4_guilty=False, rng=random.Random(seed), log=[],
        )
        self._pub = public
        self._rebuild_ring()
        if dealer is None:
            dealer = rules.first_dealer
        if dealer is not None and (isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n):
            raise RulesError(f"dealer must be a seat 0..{n - 1}, got {short_repr(dealer)}")
        kinds = deck_from_codes(self.edition, deck) if deck is not None else None
        if dealer is None:
            dealer = self._draw_for_dealer()
        self._deal(dealer, kinds)
        self._trim_log()

    def _setup(self, rules: Rules, log_limit: int | None) -> None:
        """The game's constants and caches (everything but the state)."""
        if log_limit is not None:
            log_limit = _checked_int(log_limit, "log_limit must be None or an int >= 0")
            if log_limit < 0:
                raise RulesError(f"log_limit must be None or an int >= 0, got {log_limit}")
        self.rules = rules
        self.edition = EDITIONS[rules.edition]
        self.num_players = rules.num_players
        self.log_limit = log_limit
        # step() trims the log once a quarter of the limit has piled up beyond it
        self._log_cap = 2**62 if log_limit is None else log_limit + (log_limit >> 2)
        self._actions = action_table(self.edition)
        self._legal: tuple[Action, ...] | None = None

    @classmethod
    def from_state(cls, state: GameState, *, check: bool = True, log_limit: int | None = DEFAULT_LOG_LIMIT) -> Game:
        """A game that plays on from ``state`` (taken over, not copied: pass ``state.copy()`` to
        keep yours). ``check=False`` skips ``check_state``, for states known to be valid (search).
        A log longer than ``log_limit`` is cut to its last ``log_limit`` events at once (``log_length``
        still counts the dropped ones), so a game is bounded from the moment it is built."""
        if check:
            check_state(state)
        elif not isinstance(state, GameState):
            raise StateError(f"a game state is a uno_env.core.GameState, got {type(state).__name__}")
        game = cls.__new__(cls)
        game._setup(state.rules, log_limit)
        game._attach(state)
        game._trim_log()
        return game

    def _attach(self, state: GameState) -> None:
        self.state = state
        self._pub = state.public
        self._legal = None
        self._rebuild_ring()
        top = state.public.discard_pile[-1]
        self._top_rank = top_rank(top)

    def check(self, *, log: bool = True) -> None:
        """Raise ``StateError`` unless the state satisfies every invariant (``checks.check_state``;
        ``log=False`` skips checking every event of the log)."""
        check_state(self.state, log=log)
        top = self._pub.discard_pile[-1]
        ring = (list(self._succ), list(self._pred), self._live)
        self._rebuild_ring()
        if (ring != (self._succ, self._pred, self._live) or self._top_rank != top_rank(top)
                or self._pub is not self.state.public or self.rules is not self.state.rules):
            raise StateError("invalid game state: the game's caches disagree with its state")
        if self._legal is not None and self._legal != self._compute_legal():
            raise StateError("invalid game state: the cached legal actions disagree with the state")

    # ------------------------------------------------------------------ public views
    @property
    def phase(self) -> Phase:
        """The pending decision (a ``Phase``)."""
        return self._pub.phase

    @property
    def current_player(self) -> int | None:
        """The seat that must decide now, or None when the round or game is over."""
        pub = self._pub
        return pub.current if pub.phase < ROUND_OVER else None

    @property
    def hands(self) -> list[list[str]]:
        """Every seat's hand as card codes (a copy; hidden information included)."""
        code = self.edition.code
        return [[code(k) for k in hand] for hand in self.state.hands]

    @property
    def hand_sizes(self) -> list[int]:
        """Number of cards in each seat's hand (public)."""
        return [len(h) for h in self.state.hands]

    @property
    def draw_pile(self) -> list[str]:
        """The draw pile as card codes, top first."""
        code = self.edition.code
        return [code(k) for k in reversed(self.state.draw_pile)]

    @property
    def discard_pile(self) -> list[str]:
        """The discard pile as card codes, top last."""
        code = self.edition.code
        return [code(k) for k in self._pub.discard_pile]

    @property
    def top_card(self) -> str:
        """The code of the discard pile's top card."""
        return self.edition.code(self._pub.discard_pile[-1])

    @property
    def active_color(self) -> str | None:
        """The color to match (rule 3.1), or None while the opening wild's color is pending."""
        active = self._pub.active_color
        return None if active < 0 else self.edition.colors[active]

    @property
    def active_color_index(self) -> int:
        """The active color's slot 0..3, or -1 while none is chosen yet."""
        return self._pub.active_color

    @property
    def direction(self) -> int:
        """+1 for clockwise, -1 for counter-clockwise."""
        return self._pub.direction

    @property
    def dealer(self) -> int:
        """This round's dealer."""
        return self._pub.dealer

    @property
    def round_number(self) -> int:
        """Rounds dealt so far, this one included."""
        return self._pub.round

    @property
    def scores(self) -> list[int]:
        """Game scores per seat (a copy)."""
        return list(self._pub.scores)

    @property
    def round_points(self) -> list[int]:
        """Points each seat scored in the round just ended (a copy; zeros while in play)."""
        return list(self._pub.round_points)

    @property
    def round_winner(self) -> int | None:
        """The seat that went out, once the round is over."""
        winner = self._pub.round_winner
        return None if winner < 0 else winner

    @property
    def winners(self) -> list[int]:
        """The game's winners (a copy; empty until the game is over)."""
        return list(self._pub.winners)

    @property
    def uno_called(self) -> list[bool]:
        """Per seat: called UNO and still holds that one card."""
        return list(self._pub.uno_called)

    @property
    def is_round_over(self) -> bool:
        """Whether the current round has ended."""
        return self._pub.phase >= ROUND_OVER

    @property
    def is_game_over(self) -> bool:
        """Whether a player or team has won the game."""
        return self._pub.phase == GAME_OVER

    @property
    def pending_card(self) -> str | None:
        """The card whose effects are being resolved (the last card played), if any."""
        played = self._pub.pending_card
        return None if played < 0 else self.edition.code(played)

    @property
    def pending_player(self) -> int | None:
        """The seat that played the pending card, if any."""
        player = self._pub.pending_player
        return None if player < 0 else player

    @property
    def drawn_card(self) -> str | None:
        """In the play_drawn phase, the card just drawn."""
        st = self.state
        pub = self._pub
        return self.edition.code(st.drawn_card) if pub.phase == PLAY_DRAWN else None

    def known_cards(self, observer: int, target: int) -> list[str]:
        """Cards of ``target``'s hand that ``observer`` has seen and knows are still there."""
        n = self.num_players
        observer, target = checked_seat(observer, n), checked_seat(target, n)
        return [self.edition.code(k) for k in self.state.known[target].get(observer, ())]

    def next_seat(self, seat: int, steps: int = 1) -> int:
        """The seat still in the game ``steps`` places after ``seat`` in the direction of play."""
        ring = self._succ if self._pub.direction > 0 else self._pred
        if steps == 1:
            return ring[seat]
        for _ in range(steps):
            seat = ring[seat]
        return seat

    def _rebuild_ring(self) -> None:
        """Clockwise and counter-clockwise neighbours among the seats still in the game."""
        n = self.num_players
        alive = self._pub.alive
        self._succ = [next((s + i) % n for i in range(1, n + 1) if alive[(s + i) % n]) for s in range(n)]
        self._pred = [next((s - i) % n for i in range(1, n + 1) if alive[(s - i) % n]) for s in range(n)]
        self._live = sum(alive)

    @property
    def seats_left(self) -> int:
        """How many seats are still in the game (fewer than ``num_players`` only under elimination)."""
        return self._live

    @property
    def eliminated(self) -> list[bool]:
        """Per seat: out of the game (elimination variant)."""
        return [not a for a in self._pub.alive]

    def team_of(self, seat: int) -> int | None:
        """The seat's team (0 or 1) when playing partners, else None."""
        seat = checked_seat(seat, self.num_players)
        return seat % 2 if self.rules.teams else None

    @property
    def penalty(self) -> int:
        """Cards owed by the player facing a Draw Two or Wild Draw Four (stacked totals)."""
        return self._pub.penalty

    def card_value(self, code: str) -> int:
        """Points of one card (rule 6.2)."""
        return self.edition.card_value(self.edition.kind(code))

    def hand_value(self, seat: int) -> int:
        """Points of the cards in a seat's hand."""
        value = self.edition.card_value
        return sum(value(k) for k in self.state.hands[checked_seat(seat, self.num_players)])

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
            raise IllegalActionError(f"action ids are ints 0..{A.NUM_ACTIONS - 1}, got {short_repr(action_id)}")
        return self._actions[action_id]

    def step(self, action: Action | int | str) -> None:
        """Apply one legal action (an Action, its id or its text); raises IllegalActionError."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if type(action) is int:  # an id, as the envs pass it
            action = self._actions[action] if 0 <= action < A.NUM_ACTIONS else self._coerce(action)
        elif type(action) is not Action:
            action = self._coerce(action)
        if action not in legal:
            self._reject(action, legal)
        self._legal = None
        st = self.state
        pub = self._pub
        phase = pub.phase
        seat = pub.current
        if phase == PLAY:
            if action < A.NUM_PLAY_ACTIONS:
                self._play(seat, int(action))
            else:
                self._draw_for_turn(seat)
        elif phase == PLAY_DRAWN:
            if action == A.KEEP:
                st.log.append(("keep", seat, -1, -1))
                self._begin_turn(self.next_seat(seat))
            else:
                self._play(seat, int(action))
        elif phase == CHOOSE_COLOR:
            self._choose_color(seat, action - A.COLOR_BASE)
        elif phase == GIVE_AWAY:
            self._give_away(seat, action - A.GIVE_BASE)
        elif phase == UNO_PHASE:
            if action == A.UNO:
                pub.uno_called[seat] = True
                st.log.append(("uno", seat, -1, -1))
            else:
                st.log.append(("no_uno", seat, -1, -1))
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
        if len(st.log) > self._log_cap:
            self._trim_log()

    def _trim_log(self) -> None:
        """Drop the oldest events beyond ``log_limit`` (called once a quarter of it has piled up)."""
        limit = self.log_limit
        log = self.state.log
        if limit is not None and len(log) > limit:
            dropped = len(log) - limit
            del log[:dropped]
            self.state.log_start += dropped

    def _coerce(self, action: object) -> Action:
        if isinstance(action, int) and action.__class__ is int and 0 <= action < A.NUM_ACTIONS:
            return self._actions[action]
        if isinstance(action, str):
            return parse_action(self.edition, action)
        # an integer scalar of another library (numpy's int64, a 0-d integer array or tensor) is an id;
        # a bool, a float (also as a 0-d array) or an array of ids (of any length) is not
        index = integer_scalar(action)
        if index is None:
            raise ActionTextError(
                f"an action is an Action, an int id or its text, got {type(action).__name__} {short_repr(action)}")
        if 0 <= index < A.NUM_ACTIONS:
            return self._actions[index]
        raise IllegalActionError(f"action ids are 0..{A.NUM_ACTIONS - 1}, got {index}")

    def _reject(self, action: Action, legal: tuple[Action, ...]) -> None:
        pub = self._pub
        if pub.phase >= ROUND_OVER:
            what = "the game is over" if pub.phase == GAME_OVER else "the round is over; call next_round()"
            raise IllegalActionError(f"{action} is not legal: {what}")
        raise IllegalActionError(
            f"{action} is not legal now (phase {pub.phase.text}, seat {pub.current}); "
            f"legal: {', '.join(map(str, legal))}"
        )

    def _compute_legal(self) -> tuple[Action, ...]:
        st = self.state
        pub = self._pub
        phase = pub.phase
        table = self._actions
        if phase == PLAY:
            hand = st.hands[pub.current]
            playable = PLAYABLE[pub.active_color][self._top_rank]
            kinds = {k for k in hand if playable[k]}
            if WILD_DRAW_FOUR in kinds and not self.rules.allow_bluff and self._holds_active(hand):
                kinds.discard(WILD_DRAW_FOUR)
            return (*[table[k] for k in sorted(kinds)], table[A.DRAW])
        if phase == PLAY_DRAWN:  # rule 3.4; under draw until playable the card must be played (7.4)
            drawn = st.drawn_card
            if not self._is_playable(drawn, st.hands[pub.current]):
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
            hand = st.hands[pub.current]
            if self.rules.stacking and WILD_DRAW_FOUR in hand:
                if self.rules.allow_bluff or not self._holds_active(hand):
                    return table[WILD_DRAW_FOUR], table[A.CHALLENGE], table[A.ACCEPT]
            return table[A.CHALLENGE], table[A.ACCEPT]
        if phase == STACK_PHASE:
            twos = sorted({k for k in st.hands[pub.current] if KIND_RANK[k] == DRAW_TWO})
            return (*[table[k] for k in twos], table[A.ACCEPT])
        if phase == SWAP_PHASE:
            seat = pub.current
            n = self.num_players
            return tuple(table[A.SWAP_BASE + k] for k in range(1, n) if pub.alive[(seat + k) % n])
        if phase == GIVE_AWAY:
            held = {KIND_COLOR[k] for k in st.hands[pub.current] if k < WILD}
            return tuple(table[A.GIVE_BASE + c] for c in sorted(held))
        return ()

    def _holds_active(self, hand: list[int]) -> bool:
        active = self._pub.active_color
        for k in hand:
            if KIND_COLOR[k] == active:
                return True
        return False

    def _is_playable(self, kind: int, hand: list[int]) -> bool:
        if not PLAYABLE[self._pub.active_color][self._top_rank][kind]:
            return False
        return kind != WILD_DRAW_FOUR or self.rules.allow_bluff or not self._holds_active(hand)

    # ------------------------------------------------------------------ turn flow
    def _begin_turn(self, seat: int) -> None:
        st = self.state
        pub = self._pub
        pub.phase = PLAY
        pub.current = seat
        pub.pending_card = -1
        pub.pending_player = -1
        st.drawn_card = -1

    def _draw_for_turn(self, seat: int) -> None:
        """Rule 3.4: draw one card, then decide on it in ``play_drawn`` whether or not it plays.

        Under draw until playable (7.4) the drawing goes on until a playable card comes; when
        the piles run out first, the turn passes.
        """
        st = self.state
        pub = self._pub
        row = pub.drew_on[seat]  # the evidence this draw gives (see PublicState.drew_on)
        row[pub.active_color] = size = pub.hand_sizes[seat]
        if self._top_rank != NO_RANK:
            row[NUM_COLORS + self._top_rank] = size
        until_playable = self.rules.draw_until_playable
        while True:
            card = self._draw_card(seat, R_TURN)
            if card < 0:
                st.log.append(("pass", seat, -1, -1))
                self._begin_turn(self.next_seat(seat))
                return
            if not until_playable or self._is_playable(card, st.hands[seat]):
                pub.phase = PLAY_DRAWN
                st.drawn_card = card
                return

    def _play(self, seat: int, kind: int) -> None:
        st = self.state
        pub = self._pub
        hand = st.hands[seat]
        hand.remove(kind)
        pub.hand_sizes[seat] -= 1
        if pub.phase != PLAY_DRAWN:  # the card just drawn was not one the draw evidence covers
            row = pub.drew_on[seat]
            if any(row):
                pub.drew_on[seat] = [c - 1 if c else 0 for c in row]
        pub.discard_pile.append(kind)
        pub.uno_called[seat] = False
        st.drawn_card = -1
        st.log.append(("play", seat, kind, -1))
        if st.known[seat]:
            self._forget(seat, kind)
        pub.pending_player = seat
        pub.pending_card = kind
        if kind < WILD:
            pub.active_color = KIND_COLOR[kind]
            rank = KIND_RANK[kind]
            self._top_rank = rank
            if rank == REVERSE:
                pub.direction = -pub.direction
                st.log.append(("reverse", seat, -1, pub.direction))
            elif rank == DRAW_TWO:
                pub.penalty += 2
            elif self.rules.seven_zero and hand:
                if rank == 7:
                    pub.phase = SWAP_PHASE
                    pub.current = seat
                    return
                if rank == 0:
                    self._rotate_hands(seat)
            self._resolve_end_of_play()
            return
        self._top_rank = NO_RANK
        if kind == WILD_DRAW_FOUR:
            pub.penalty += 4
            st.w4_guilty = self._holds_active(hand)
            pub.w4_prev_color = pub.active_color
        special = self.edition.special if kind == SPECIAL_WILD else None
        if not hand and not (special is not None and special.color_when_last):
            # Rule 5.5: a wild that goes out asks for no color; Greyskull still strikes.
            if special is not None:
                self._special_effect(seat)
            self._resolve_end_of_play()
            return
        pub.current = seat
        if special is not None and special.gives_away and any(k < WILD for k in hand):
            pub.phase = GIVE_AWAY
        else:
            pub.phase = CHOOSE_COLOR

    def _choose_color(self, seat: int, color: int) -> None:
        st = self.state
        pub = self._pub
        pub.active_color = color
        st.log.append(("color", seat, -1, color))
        if pub.pending_card < 0:  # the opening wild (rule 2.3): the chooser then plays
            pub.phase = PLAY
            return
        if pub.pending_card == SPECIAL_WILD:
            self._special_effect(seat)
        self._resolve_end_of_play()

    def _special_effect(self, seat: int) -> None:
        """The special wild's effect once its color is named (or at once as a last card)."""
        special = self.edition.special
        if special is None:
            return
        if special.effect == "king_pig_deal":
            self._king_pig_deal(seat)
        elif special.effect == "greyskull_draws":
            self._greyskull_draws(seat)

    def _resolve_end_of_play(self) -> None:
        """Steps 3 and 4 of rule 3.7: going out, then the UNO call."""
        st = self.state
        pub = self._pub
        seat = pub.pending_player
        hand = st.hands[seat]
        if not hand:
            if pub.penalty:
                reason = R_DRAW_FOUR if pub.pending_card == WILD_DRAW_FOUR else R_DRAW_TWO
                self._draw_cards(self.next_seat(seat), pub.penalty, reason)
                pub.penalty = 0
            self._end_round(seat)
            return
        if len(hand) == 1 and not pub.uno_called[seat]:
            if self.rules.uno_call == "explicit":
                pub.phase = UNO_PHASE
                pub.current = seat
                return
            pub.uno_called[seat] = True
            st.log.append(("uno", seat, -1, -1))
        self._after_uno_call()

    def _after_uno_call(self) -> None:
        """Step 5 of rule 3.7: the catch window, when a call was missed."""
        st = self.state
        pub = self._pub
        seat = pub.pending_player
        if len(st.hands[seat]) == 1 and not pub.uno_called[seat]:
            pub.catch_index = 1
            pub.phase = CATCH_PHASE
            pub.current = self.next_seat(seat)
            return
        self._effect_on_next()

    def _answer_catch(self, seat: int, catch: bool) -> None:
        st = self.state
        pub = self._pub
        offender = pub.pending_player
        if catch:
            st.log.append(("catch", seat, -1, offender))
            self._draw_cards(offender, 2, R_UNO)
            pub.catch_index = 0
            self._effect_on_next()
            return
        st.log.append(("no_catch", seat, -1, -1))
        pub.catch_index += 1
        if pub.catch_index < self._live:
            pub.current = self.next_seat(offender, pub.catch_index)
        else:
            pub.catch_index = 0
            self._effect_on_next()

    def _effect_on_next(self) -> None:
        """Step 6 of rule 3.7: what the played card does to the next player."""
        st = self.state
        pub = self._pub
        seat = pub.pending_player
        kind = pub.pending_card
        nxt = self.next_seat(seat)
        if kind < WILD:
            rank = KIND_RANK[kind]
            if rank == SKIP or rank == REVERSE and self._live == 2:
                st.log.append(("skip", nxt, -1, -1))
                self._begin_turn(self.next_seat(nxt))
            elif rank == DRAW_TWO:
                if self.rules.stacking:  # offered even without a Draw Two, so holding none stays hidden
                    pub.phase = STACK_PHASE
                    pub.current = nxt
                else:
                    self._take_penalty(nxt, R_DRAW_TWO, accepted=False)
            else:
                self._begin_turn(nxt)
        elif kind == WILD_DRAW_FOUR:
            pub.phase = CHALLENGE
            pub.current = nxt
        else:
            self._begin_turn(nxt)

    def _take_penalty(self, seat: int, reason: int, accepted: bool) -> None:
        """Draw the Draw Two / Wild Draw Four total and lose the turn."""
        st = self.state
        pub = self._pub
        if accepted:
            st.log.append(("accept", seat, -1, -1))
        self._draw_cards(seat, pub.penalty, reason)
        pub.penalty = 0
        st.log.append(("skip", seat, -1, -1))
        self._begin_turn(self.next_seat(seat))

    def _answer_w4(self, seat: int, challenge: bool) -> None:
        st = self.state
        pub = self._pub
        offender = pub.pending_player
        if not challenge:
            self._take_penalty(seat, R_DRAW_FOUR, accepted=True)
            return
        guilty = st.w4_guilty
        log = st.log
        log.append(("challenge", seat, -1, offender))
        log.append(("guilty" if guilty else "innocent", offender, -1, seat))
        shown = st.hands[offender]
        for k in shown:
            log.append(("show", offender, k, seat))
        st.known[offender][seat] = list(shown)
        penalty = pub.penalty
        pub.penalty = 0
        if guilty:
            self._draw_cards(offender, penalty, R_GUILTY)
            self._begin_turn(seat)
        else:
            self._draw_cards(seat, penalty + 2, R_INNOCENT)
            log.append(("skip", seat, -1, -1))
            self._begin_turn(self.next_seat(seat))

    # ------------------------------------------------------------------ special wilds
    def _give_away(self, giver: int, color: int) -> None:
        """Rule 4.5: every card of the color, in rank order, one to each other seat clockwise."""
        st = self.state
        pub = self._pub
        hand = st.hands[giver]
        given = sorted(k for k in hand if KIND_COLOR[k] == color)
        st.hands[giver] = [k for k in hand if KIND_COLOR[k] != color]
        pub.hand_sizes[giver] -= len(given)
        pub.drew_on[giver] = [max(c - len(given), 0) for c in pub.drew_on[giver]]
        known = st.known
        for observer, seen in list(known[giver].items()):
            kept = [k for k in seen if KIND_COLOR[k] != color]
            if kept:
                known[giver][observer] = kept
            else:
                del known[giver][observer]
        receiver = giver
        for kind in given:
            receiver = self._succ[receiver]
            if receiver == giver:
                receiver = self._succ[receiver]
            st.hands[receiver].append(kind)
            pub.hand_sizes[receiver] += 1
            pub.uno_called[receiver] = False
            known[receiver].setdefault(giver, []).append(kind)
            st.log.append(("give", giver, kind, receiver))
        if st.hands[giver]:
            pub.phase = CHOOSE_COLOR
        else:
            self._resolve_end_of_play()

    def _king_pig_deal(self, player: int) -> None:
        """Rule 4.6: deal face up from the left until someone gets the declared color."""
        st = self.state
        pub = self._pub
        n = self.num_players
        seat = player
        while True:
            seat = self._succ[seat]
            card = self._draw_card(seat, -1)
            if card < 0:
                break
            st.log.append(("king_pig", seat, card, -1))
            known = st.known[seat]
            for observer in range(n):
                if observer != seat:
                    known.setdefault(observer, []).append(card)
            if KIND_COLOR[card] == pub.active_color:
                break

    def _greyskull_draws(self, player: int) -> None:
        """Rule 4.7: every other seat draws 3, clockwise from the left."""
        st = self.state
        seat = self._succ[player]
        while seat != player:
            st.log.append(("greyskull", seat, -1, -1))
            self._draw_cards(seat, 3, R_GREYSKULL)
            seat = self._succ[seat]

    # ------------------------------------------------------------------ seven-zero
    def _swap_hands(self, seat: int, target: int) -> None:
        """Seven-zero: a 7 swaps the player's hand with a chosen seat's."""
        self.state.log.append(("swap", seat, -1, target))
        self._move_hands({seat: target, target: seat})
        self._resolve_end_of_play()

    def _rotate_hands(self, seat: int) -> None:
        """Seven-zero: a 0 passes every hand one seat in the direction of play."""
        st = self.state
        pub = self._pub
        st.log.append(("rotate", seat, -1, pub.direction))
        self._move_hands({s: self.next_seat(s) for s in range(self.num_players) if pub.alive[s]})

    def _move_hands(self, moves: dict[int, int]) -> None:
        """Move hands (source seat -> destination seat); knowledge of them moves along.

        A seat that passes its hand on knows exactly what the receiver now holds.
        """
        st = self.state
        pub = self._pub
        old_hands = st.hands
        old_known = st.known
        hands = list(old_hands)
        known = [dict(k) for k in old_known]
        drew_on = list(pub.drew_on)
        for src in moves:
            known[src] = {}
        for src, dst in moves.items():
            hands[dst] = old_hands[src]
            moved = {obs: cards for obs, cards in old_known[src].items() if obs != dst}
            if old_hands[src]:
                moved[src] = list(old_hands[src])
            known[dst] = moved
            pub.uno_called[dst] = False
            drew_on[dst] = pub.drew_on[src]
        st.hands = hands
        pub.drew_on = drew_on
        pub.hand_sizes = list(map(len, hands))
        st.known = known

    # ------------------------------------------------------------------ drawing
    def _draw_card(self, seat: int, reason: int) -> int:
        """Move the top card of the draw pile to a hand (refilling per 3.6); -1 if none."""
        st = self.state
        pub = self._pub
        pile = st.draw_pile
        if not pile:
            self._refill()
            pile = st.draw_pile
            if not pile:
                return -1
        card = pile.pop()
        st.hands[seat].append(card)
        pub.hand_sizes[seat] += 1
        pub.uno_called[seat] = False
        if reason >= 0:
            st.log.append(("draw", seat, card, reason))
        return card

    def _draw_cards(self, seat: int, count: int, reason: int) -> None:
        for _ in range(count):
            if self._draw_card(seat, reason) < 0:
                self.state.log.append(("pass", seat, -1, -1))
                return

    def _refill(self) -> None:
        st = self.state
        pub = self._pub
        discard = pub.discard_pile
        if len(discard) <= 1:
            return
        top = discard.pop()
        st.rng.shuffle(discard)
        st.draw_pile = discard
        pub.discard_pile = [top]
        st.log.append(("reshuffle", -1, -1, len(discard)))

    def _forget(self, seat: int, kind: int) -> None:
        known = self.state.known[seat]
        for observer, seen in list(known.items()):
            if kind in seen:
                seen.remove(kind)
                if not seen:
                    del known[observer]

    # ------------------------------------------------------------------ rounds
    def _draw_for_dealer(self) -> int:
        """Rule 2.1: highest number deals; symbols and wilds count 0; ties draw again."""
        st = self.state
        deck = self.edition.deck()
        st.rng.shuffle(deck)
        contenders = list(range(self.num_players))
        attempt = 0
        while True:
            best = -1
            drawn: dict[int, int] = {}
            for seat in contenders:
                if not deck:
                    deck = self.edition.deck()
                    st.rng.shuffle(deck)
                card = deck.pop()
                st.log.append(("dealer_draw", seat, card, attempt))
                value = KIND_RANK[card] if card < WILD and KIND_RANK[card] <= 9 else 0
                drawn[seat] = value
                best = max(best, value)
            contenders = [s for s in contenders if drawn[s] == best]
            if len(contenders) == 1:
                return contenders[0]
            attempt += 1

    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        """Rules 2.2 and 2.3: shuffle, deal seven each, turn the first card."""
        st = self.state
        pub = self._pub
        n = self.num_players
        if deck is None:
            deck = self.edition.deck()
            st.rng.shuffle(deck)
        pub.round += 1
        pub.dealer = dealer
        log = st.log
        log.append(("dealer", dealer, -1, pub.round))
        st.draw_pile = deck[::-1]  # top of the pile is the end of the list
        st.hands = [[] for _ in range(n)]
        st.known = [{} for _ in range(n)]
        pub.drew_on = [[0] * DREW_ON_SIZE for _ in range(n)]
        pub.uno_called = [False] * n
        pub.direction = 1
        pub.pending_card = -1
        pub.pending_player = -1
        st.drawn_card = -1
        st.w4_guilty = False
        pub.w4_prev_color = -1
        pub.catch_index = 0
        self._legal = None
        pub.round_winner = -1
        pub.round_points = [0] * n
        pub.penalty = 0
        pile = st.draw_pile
        for _ in range(HAND_SIZE):
            seat = dealer
            for _ in range(self._live):
                seat = self._succ[seat]
                card = pile.pop()
                st.hands[seat].append(card)
                log.append(("deal", seat, card, -1))
        pub.hand_sizes = list(map(len, st.hands))
        first = pile.pop()
        while first == WILD_DRAW_FOUR:
            log.append(("return_w4", -1, first, -1))
            pile.insert(len(pile) - len(pile) // 2, first)
            first = pile.pop()
        pub.discard_pile = [first]
        log.append(("start", -1, first, -1))
        left = self._succ[dealer]
        if first >= WILD:
            pub.active_color = -1
            self._top_rank = NO_RANK
            pub.phase = CHOOSE_COLOR
            pub.current = left
            return
        pub.active_color = KIND_COLOR[first]
        rank = self._top_rank = KIND_RANK[first]
        if rank == DRAW_TWO:  # not stackable (rule 7.4): the first player draws 2 at once
            self._draw_cards(left, 2, R_START)
            log.append(("skip", left, -1, -1))
            self._begin_turn(self._succ[left])
        elif rank == REVERSE:
            pub.direction = -1
            log.append(("reverse", -1, -1, -1))
            self._begin_turn(dealer)
        elif rank == SKIP:
            log.append(("skip", left, -1, -1))
            self._begin_turn(self._succ[left])
        else:
            self._begin_turn(left)

    def _end_round(self, winner: int) -> None:
        """Rules 6.1-6.4: score the round, then see whether the game is won."""
        st = self.state
        pub = self._pub
        rules = self.rules
        value = self.edition.card_value
        n = self.num_players
        hand_points = [sum(value(k) for k in hand) for hand in st.hands]
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
        scores = pub.scores
        for seat, p in enumerate(points):
            scores[seat] += p
        pub.round_points = points
        pub.round_winner = winner
        self._legal = None
        log = st.log
        log.append(("round_end", winner, -1, points[winner] if standard else 0))
        target = rules.target_score
        if rules.elimination:
            for seat in range(n):
                if pub.alive[seat] and scores[seat] >= target:
                    pub.alive[seat] = False
                    log.append(("eliminated", seat, -1, scores[seat]))
            self._rebuild_ring()
            winners = [s for s in range(n) if pub.alive[s]] if self._live <= 1 else []
        elif standard:
            winners = [s for s in range(n) if scores[s] >= target and (s == winner or rules.teams)]
        elif max(scores) >= target:
            low = min(scores)
            winners = [s for s, total in enumerate(scores) if total == low]
        else:
            winners = []
        if winners:
            pub.winners = winners
            pub.phase = GAME_OVER
            for seat in winners:
                log.append(("game_end", seat, -1, -1))
        else:
            pub.phase = ROUND_OVER

    def next_round(self, deck: Sequence[str] | None = None) -> None:
        """Deal the next round (rule 6.5); the dealer moves one seat left."""
        phase = self._pub.phase
        if phase != ROUND_OVER:
            raise GameFlowError(
                "next_round() is allowed only when a round is over and the game is not"
                + (" (the game is over)" if phase == GAME_OVER else f" (phase is {phase.text})")
            )
        kinds = deck_from_codes(self.edition, deck) if deck is not None else None
        self._deal(self._succ[self._pub.dealer], kinds)
        self._trim_log()

    # ------------------------------------------------------------------ log
    @property
    def log(self) -> list[Event]:
        """The kept raw events: tuples (type, seat, card kind or -1, other or -1), oldest first."""
        return list(self.state.log)

    @property
    def log_length(self) -> int:
        """Events logged since the game began (or was loaded), dropped ones included."""
        return self.state.log_start + len(self.state.log)

    def events(self, seat: int | None = None, since: int | None = None) -> list[EventDict]:
        """The kept event log as dicts; with ``seat``, only what that seat may know.

        Each event has ``type``, ``seat``, ``card`` (a code or None), ``other`` and
        ``seen_by``: the seats that saw the card it names (all seats for public events).
        Hidden cards are blanked (``card`` None) in a seat's own view. ``since``: the events
        from event number ``since`` on (``log_length`` counts them; older dropped events are
        gone).
        """
        if seat is not None:
            seat = checked_seat(seat, self.num_players)
        st = self.state
        log = st.log
        if since is not None:
            since = _checked_int(since, "since must be None or an event number (an int >= 0)")
            log = log[max(0, since - st.log_start):]
        everyone = list(range(self.num_players))
        out = []
        ed = self.edition
        for event in log:
            out.append(event_dict(ed, event, everyone))
        if seat is not None:
            for i, e in enumerate(out):
                if seat not in e["seen_by"] and e["card"] is not None:
                    out[i] = {**e, "card": None}
        return out

    # ------------------------------------------------------------------ copies, views and saves
    def clone(self) -> Game:
        """An independent copy (random generator state included)."""
        other = Game.__new__(Game)
        other.rules = self.rules
        other.edition = self.edition
        other.num_players = self.num_players
        other.log_limit = self.log_limit
        other._log_cap = self._log_cap
        other._actions = self._actions
        other._legal = self._legal
        other._succ = self._succ  # replaced, never changed in place
        other._pred = self._pred
        other._live = self._live
        other._top_rank = self._top_rank
        other.state = state = self.state.copy()
        other._pub = state.public
        return other

    def seat_view(self, seat: int) -> SeatView:
        """What ``seat`` may know, typed and cheap (shares the game's lists; see ``view.py``)."""
        return seat_view(self.state, seat)

    def view(self, seat: int) -> View:
        """What ``seat`` may know, as a structured dict (see ``uno_env.core.view``)."""
        sv = seat_view(self.state, seat)
        pub = self._pub
        return view_dict(sv, self.legal_actions() if pub.current == sv.seat and pub.phase < ROUND_OVER else ())

    def determinize(self, seat: int, rng: random.Random | int | None = None) -> Game:
        """A full game consistent with what ``seat`` knows, every hidden card resampled.

        Built by the one determinizer, ``determinize.InfoSet``, from ``self.view(seat)``. Kept:
        the seat's own hand, the discard pile, hand sizes, the cards the seat has seen in
        others' hands, and everything public; the log is the seat's own view of it. Resampled:
        the other cards in hands, the draw pile order, the game's random generator, and
        whether a pending ``W4`` was a bluff (read again from the resampled hand). Other
        seats' knowledge of each other's hands is not kept. ``rng`` is a ``random.Random`` or
        an int seed.
        """
        seat = checked_seat(seat, self.num_players)
        if not isinstance(rng, random.Random):
            if rng is not None:
                rng = _checked_int(rng, "rng must be a random.Random, an int seed or None")
            rng = random.Random(rng)
        state = InfoSet(self.view(seat)).sample_state(rng)
        state.hands[seat] = list(self.state.hands[seat])  # the same cards, in the game's order
        state.log = seat_log(self.state.log, seat)
        state.log_start = self.state.log_start
        return Game.from_state(state, check=False, log_limit=self.log_limit)

    def to_dict(self, include_log: bool = True) -> dict[str, Any]:
        """The whole state as JSON-serialisable data (laid out as ``saves.SaveDict``; see ``uno_env.core.saves``)."""
        return cast(dict[str, Any], state_to_dict(self.state, include_log))

    @classmethod
    def from_dict(cls, data: object, *, log_limit: int | None = DEFAULT_LOG_LIMIT) -> Game:
        """Rebuild a game saved with ``to_dict``; raises ``StateError`` when malformed. A saved log longer
        than ``log_limit`` is cut to its last ``log_limit`` entries before any entry is read (the dropped
        ones are counted in ``log_length``, never parsed), so loading costs what the kept log costs."""
        dropped = 0
        if isinstance(data, dict) and isinstance(data.get("log"), list) and type(log_limit) is int and log_limit >= 0:
            dropped = max(0, len(data["log"]) - log_limit)
            if dropped:
                data = {**data, "log": data["log"][dropped:]}
        state = state_from_dict(data)
        state.log_start = dropped
        return cls.from_state(state, check=False, log_limit=log_limit)

    def __repr__(self) -> str:
        return (
            f"Game({self.rules.edition}, {self.num_players} players, round {self.round_number}, "
            f"phase {self.phase.text}, seat {self.current_player}, top {self.top_card})"
        )


def _checked_int(value: object, what: str) -> int:
    """``value`` as an int (``integer_scalar``: a Python or numpy integer, not a bool or float); else ``RulesError``."""
    index = integer_scalar(value)
    if index is None:
        raise RulesError(f"{what}, got {type(value).__name__} {short_repr(value)}")
    return index
