"""What one seat may know: the typed ``SeatView``, and the ``View`` dict built from it.

``seat_view(state, seat)`` is the one place that reads a ``GameState`` on behalf of a seat: it
takes the public state (``state.public``), the seat's own hand and drawn card, the sizes of
the hidden hands and pile, the cards of other hands the seat has seen, and whether the seat's
own pending Wild Draw Four was a bluff, and nothing else. ``Game.view(seat)`` (the env's ``infos[agent]``) and the observation
encoder (``uno_env.observation``) are both built from a ``SeatView``, so two games that differ
only in cards hidden from the seat give the same view and the same observation by
construction. A ``SeatView`` is cheap: it shares the game's lists (hand, discard pile,
scores...) instead of copying them, so it is valid until the game next changes; read it, do
not change it.

``View`` keys (``offset`` is seats clockwise from the observer):

================  ==============================================================
seat              the observer's seat
num_players       table size; ``rules`` every rule option (``Rules.to_dict()``)
edition           edition id; ``colors`` its four color names, slot order
round, dealer     round number (from 1) and this round's dealer
phase             the pending decision (a ``Phase`` name: ``play``, ``play_drawn``...)
current_player    the seat that decides now (None when the round is over)
my_turn           whether the observer decides now
legal_actions     action texts the observer may take now (empty off-turn)
legal_action_ids  the same as action ids
hand              the observer's cards, sorted by color then rank
drawn_card        the card just drawn, when deciding to play or keep it
top_card          the discard pile's top card
active_color      the color to match (None while the opening wild's is pending)
direction         +1 clockwise, -1 counter-clockwise
pending_card      the card whose effects are being resolved, and ``pending_player``
w4_prev_color     the color active before a pending Wild Draw Four (for a challenge)
my_w4_bluff       whether the pending Wild Draw Four the observer played was a bluff
                  (it held the previous color); None unless the observer played it
discard_pile      every card played since the last reshuffle, top last (public)
draw_pile_size    cards left to draw
scores            game scores per seat; ``target_score`` the target
round_points      points each seat scored in the round just ended (zeros while in play)
hand_sizes        cards per seat; ``uno_called`` who has called UNO and holds one card
drew_on           per seat, the public draw evidence (``PublicState.drew_on``): 4 counts by
                  color slot, then 13 by rank, of the cards its last turn draws cover
penalty           cards owed by whoever faces the pending Draw Two / Wild Draw Four
                  (stacked totals under the stacking rule; 0 when none)
eliminated        per seat: out of the game (elimination variant)
team, teams       the observer's team and every seat's (0 or 1 when playing partners,
                  else None)
opponents         per other seat, clockwise from the left: seat, offset, hand_size,
                  score, uno_called, known_cards (cards of theirs the observer has seen),
                  eliminated, teammate (on the observer's team)
round_winner      the seat that went out, once the round is over; ``winners`` of the game
================  ==============================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, TypedDict

from .actions import Action
from .cards import EDITIONS, NUM_KINDS, WILD_DRAW_FOUR, Edition, integer_scalar, short_repr
from .errors import SeatError
from .rules import Rules, RulesDict
from .state import GameState, Phase, PublicState


class SeatView(NamedTuple):
    """What ``seat`` may know of a position (see the module docstring): an immutable record.

    ``public`` is the game's ``PublicState`` (what every seat sees), shared, not copied;
    ``hand`` the observer's own cards (kinds, in the order they came, shared too); ``drawn_card``
    the card the observer just drew while it decides on it (``play_drawn``), else -1;
    ``draw_pile_size`` the size of the face-down pile (hand sizes are ``public.hand_sizes``);
    ``known`` ``(seat, cards)`` for each other seat whose cards the observer has seen there, in
    seat order; ``my_w4_bluff`` whether the observer's own pending Wild Draw Four was a bluff
    (None unless one of theirs is pending). Read the lists, do not change them.
    """

    seat: int
    rules: Rules
    public: PublicState
    hand: list[int]
    drawn_card: int
    draw_pile_size: int
    known: list[tuple[int, list[int]]] | tuple[()]
    my_w4_bluff: bool | None


_new_view = tuple.__new__
_ROUND_OVER = Phase.ROUND_OVER


def checked_seat(seat: object, num_players: int) -> int:
    """``seat`` as an int if it is a seat of the table (an int or numpy integer, not a bool); else ``SeatError``."""
    index = integer_scalar(seat)
    if index is None or not 0 <= index < num_players:
        raise SeatError(f"seat must be 0..{num_players - 1}, got {short_repr(seat)}")
    return index


def seat_view(state: GameState, seat: int) -> SeatView:
    """The ``SeatView`` of ``state`` from ``seat`` (raises ``SeatError`` for a bad seat)."""
    rules = state.rules
    if seat.__class__ is not int:
        seat = checked_seat(seat, rules.num_players)
    elif not 0 <= seat < rules.num_players:
        raise SeatError(f"seat must be 0..{rules.num_players - 1}, got {seat!r}")
    pub = state.public
    mine = pub.current == seat and pub.phase < _ROUND_OVER
    return _new_view(SeatView, (
        seat, rules, pub, state.hands[seat], state.drawn_card if mine else -1, len(state.draw_pile),
        _seen_by(state.known, seat) if any(state.known) else (),
        state.w4_guilty if pub.pending_player == seat and pub.pending_card == WILD_DRAW_FOUR
        and pub.phase < _ROUND_OVER else None,
    ))


def _seen_by(known: list[dict[int, list[int]]], seat: int) -> list[tuple[int, list[int]]]:
    return [(target, seen[seat]) for target, seen in enumerate(known) if seat in seen]


class OpponentView(TypedDict):
    """One entry of ``View["opponents"]``."""

    seat: int
    offset: int
    hand_size: int
    score: int
    uno_called: bool
    known_cards: list[str]
    eliminated: bool
    teammate: bool


class View(TypedDict):
    """``Game.view(seat)``: what a seat may know, as plain data (see the module docstring)."""

    seat: int
    num_players: int
    rules: RulesDict
    edition: str
    colors: list[str]
    round: int
    dealer: int
    phase: str
    current_player: int | None
    my_turn: bool
    legal_actions: list[str]
    legal_action_ids: list[int]
    hand: list[str]
    drawn_card: str | None
    top_card: str
    active_color: str | None
    direction: int
    pending_card: str | None
    pending_player: int | None
    w4_prev_color: str | None
    my_w4_bluff: bool | None
    discard_pile: list[str]
    draw_pile_size: int
    scores: list[int]
    target_score: int
    round_points: list[int]
    hand_sizes: list[int]
    drew_on: list[list[int]]
    uno_called: list[bool]
    penalty: int
    eliminated: list[bool]
    team: int | None
    teams: list[int | None]
    opponents: list[OpponentView]
    round_winner: int | None
    winners: list[int]


# Per edition: the code of every kind (None for a kind the edition lacks).
_CODES: dict[str, tuple[str | None, ...]] = {
    ed.name: tuple(ed.code(k) if k < NUM_KINDS - 1 or ed.special else None for k in range(NUM_KINDS))
    for ed in EDITIONS.values()
}


def view_dict(view: SeatView, legal: Sequence[Action]) -> View:
    """The ``View`` dict of a seat view; ``legal``: the observer's legal actions (empty off-turn)."""
    seat, rules, pub, hand, drawn, draw_size, known_pairs, my_bluff = view
    sizes = pub.hand_sizes
    ed: Edition = EDITIONS[rules.edition]
    codes = _CODES[ed.name]
    colors = ed.colors
    n = rules.num_players
    in_play = pub.phase < _ROUND_OVER
    current = pub.current if in_play else -1
    pending_w4 = in_play and pub.pending_card == WILD_DRAW_FOUR
    scores = pub.scores
    uno = pub.uno_called
    eliminated = [not a for a in pub.alive]
    teams: list[int | None] = [s % 2 for s in range(n)] if rules.teams else [None] * n
    my_team = teams[seat]
    known = dict(known_pairs)
    return View(
        seat=seat,
        num_players=n,
        rules=rules.to_dict(),
        edition=ed.name,
        colors=list(colors),
        round=pub.round,
        dealer=pub.dealer,
        phase=pub.phase.text,
        current_player=current if current >= 0 else None,
        my_turn=current == seat,
        legal_actions=[a.text for a in legal],
        legal_action_ids=[int(a) for a in legal],
        hand=[codes[k] for k in sorted(hand)],  # type: ignore[misc]
        drawn_card=codes[drawn] if drawn >= 0 else None,
        top_card=codes[pub.discard_pile[-1]],  # type: ignore[typeddict-item]
        active_color=colors[pub.active_color] if pub.active_color >= 0 else None,
        direction=pub.direction,
        pending_card=codes[pub.pending_card] if pub.pending_card >= 0 else None,
        pending_player=pub.pending_player if pub.pending_player >= 0 else None,
        w4_prev_color=colors[pub.w4_prev_color] if pending_w4 and pub.w4_prev_color >= 0 else None,
        my_w4_bluff=my_bluff,
        discard_pile=[codes[k] for k in pub.discard_pile],  # type: ignore[misc]
        draw_pile_size=draw_size,
        scores=list(scores),
        target_score=rules.target_score,
        round_points=list(pub.round_points),
        hand_sizes=list(sizes),
        drew_on=[list(row) for row in pub.drew_on],
        uno_called=list(uno),
        penalty=pub.penalty,
        eliminated=eliminated,
        team=my_team,
        teams=teams,
        opponents=[
            OpponentView(
                seat=other,
                offset=offset,
                hand_size=sizes[other],
                score=scores[other],
                uno_called=uno[other],
                known_cards=[codes[k] for k in known.get(other, ())],  # type: ignore[misc]
                eliminated=eliminated[other],
                teammate=my_team is not None and teams[other] == my_team,
            )
            for offset in range(1, n)
            for other in [(seat + offset) % n]
        ],
        round_winner=pub.round_winner if pub.round_winner >= 0 else None,
        winners=list(pub.winners),
    )
