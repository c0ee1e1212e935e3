"""The event log: what happened, one small tuple per event, and who saw the card it names.

An event is ``(type, seat, card, other)``: the event type (a key of ``EVENT_VISIBILITY``), a
seat (``-1`` for none), a card kind (``-1`` for none, or for a card hidden from the reader) and
one more int whose meaning depends on the type (``-1`` for none; for ``reverse`` and ``rotate``
it is the direction, +1 or -1). ``EVENT_FIELDS`` says what each field of each type holds, and
``event_problem`` checks an event against it (a loaded save's log is checked entry by entry).
``Game.events()`` turns events into dicts; ``seat_log`` blanks what one seat did not see.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from .cards import NUM_COLORS, NUM_KINDS, Edition

Event = tuple[str, int, int, int]

PUBLIC, OWNER, OWNER_AND_OTHER, OTHER = "all", "seat", "seat+other", "other"
EVENT_VISIBILITY: dict[str, str] = {
    "dealer_draw": PUBLIC,  # seat drew card while choosing the dealer; other = attempt number
    "dealer": PUBLIC,  # seat deals this round; other = round number
    "deal": OWNER,  # seat was dealt card
    "return_w4": PUBLIC,  # card (W4) turned first, put back into the draw pile
    "start": PUBLIC,  # card turned to start the discard pile
    "play": PUBLIC,  # seat played card
    "draw": OWNER,  # seat drew card; other = reason code (DRAW_REASONS)
    "pass": PUBLIC,  # seat had to draw but nothing was left to draw
    "keep": PUBLIC,  # seat kept the card just drawn (whether or not it could be played: rule 3.4)
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

SeatField = Literal["seat", "none", "optional"]
CardField = Literal["card", "hidden", "none"]
OtherField = Literal["none", "seat", "reason", "color", "direction", "count", "round", "points"]

# Per type: what ``seat``, ``card`` and ``other`` hold. ``hidden``: a card, or -1 where the log
# is one seat's view and that seat did not see it; ``count``/``round``/``points``: a bounded
# non-negative number (``event_problem``'s ``limits``).
EVENT_FIELDS: dict[str, tuple[SeatField, CardField, OtherField]] = {
    "dealer_draw": ("seat", "card", "count"),
    "dealer": ("seat", "none", "round"),
    "deal": ("seat", "hidden", "none"),
    "return_w4": ("none", "card", "none"),
    "start": ("none", "card", "none"),
    "play": ("seat", "card", "none"),
    "draw": ("seat", "hidden", "reason"),
    "pass": ("seat", "none", "none"),
    "keep": ("seat", "none", "none"),
    "color": ("seat", "none", "color"),
    "give": ("seat", "hidden", "seat"),
    "king_pig": ("seat", "card", "none"),
    "greyskull": ("seat", "none", "none"),
    "reshuffle": ("none", "none", "count"),
    "uno": ("seat", "none", "none"),
    "no_uno": ("seat", "none", "none"),
    "catch": ("seat", "none", "seat"),
    "no_catch": ("seat", "none", "none"),
    "challenge": ("seat", "none", "seat"),
    "guilty": ("seat", "none", "seat"),
    "innocent": ("seat", "none", "seat"),
    "show": ("seat", "hidden", "seat"),
    "accept": ("seat", "none", "none"),
    "skip": ("seat", "none", "none"),
    "reverse": ("optional", "none", "direction"),
    "swap": ("seat", "none", "seat"),
    "rotate": ("seat", "none", "direction"),
    "eliminated": ("seat", "none", "points"),
    "round_end": ("seat", "none", "points"),
    "game_end": ("seat", "none", "none"),
}
assert EVENT_FIELDS.keys() == EVENT_VISIBILITY.keys()


class EventDict(TypedDict, total=False):
    """One event as ``Game.events()`` returns it (``reason`` only on draws, ``color`` on colors)."""

    type: str
    seat: int | None
    card: str | None
    other: int | None
    seen_by: list[int]
    reason: str
    color: str


def event_problem(event: object, num_players: int, edition: Edition, limits: tuple[int, int, int]) -> str | None:
    """Why ``event`` is not a valid event of this table, or None. ``limits``: the largest
    ``count`` (dealer draw attempts, cards reshuffled), ``round`` and ``points`` allowed."""
    if not isinstance(event, tuple) or len(event) != 4:
        return "must be (type, seat, card, other)"
    kind, seat, card, other = event
    if not isinstance(kind, str) or kind not in EVENT_FIELDS:
        return f"type must be one of {', '.join(EVENT_FIELDS)}"
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (seat, card, other)):
        return "seat, card and other must be ints"
    seat_field, card_field, other_field = EVENT_FIELDS[kind]
    if seat_field == "none" and seat != -1 or seat_field != "none" and not -1 <= seat < num_players \
            or seat_field == "seat" and seat < 0:
        return f"a {kind} event's seat must be {'null' if seat_field == 'none' else 'a seat'}"
    if card_field == "none" and card != -1 or card_field == "card" and card < 0 or card >= NUM_KINDS \
            or card < -1 or card == NUM_KINDS - 1 and edition.special is None:
        return f"a {kind} event's card must be {'null' if card_field == 'none' else 'a card of the edition'}"
    count, rounds, points = limits
    allowed = {
        "none": other == -1,
        "seat": 0 <= other < num_players,
        "reason": 0 <= other < len(DRAW_REASONS),
        "color": 0 <= other < NUM_COLORS,
        "direction": other in (1, -1),
        "count": 0 <= other <= count,
        "round": 1 <= other <= rounds,
        "points": 0 <= other <= points,
    }[other_field]
    if not allowed:
        return f"a {kind} event's other must be {other_field if other_field != 'none' else 'null'}"
    return None


def event_dict(edition: Edition, event: Event, everyone: list[int]) -> EventDict:
    """One event as a dict with ``seen_by`` (see ``Game.events``)."""
    kind, who, card, other = event
    visibility = EVENT_VISIBILITY[kind]
    out = EventDict(
        type=kind,
        seat=None if who < 0 else who,
        card=edition.code(card) if card >= 0 else None,
        other=other if kind in SIGNED_OTHER or other >= 0 else None,
    )
    if kind == "draw":
        out["reason"] = DRAW_REASONS[other]
    if kind == "color":
        out["color"] = edition.colors[other]
    if visibility == PUBLIC:
        out["seen_by"] = everyone
    elif visibility == OWNER:
        out["seen_by"] = [who]
    elif visibility == OWNER_AND_OTHER:
        out["seen_by"] = [who, other]
    else:
        out["seen_by"] = [other]
    return out


def seat_log(log: list[Event], seat: int) -> list[Event]:
    """The log as ``seat`` saw it: cards it did not see are blanked, as in ``Game.events(seat)``."""
    out = []
    for event in log:
        kind, who, card, other = event
        visibility = EVENT_VISIBILITY[kind]
        hidden = (visibility == OWNER and who != seat
                  or visibility == OWNER_AND_OTHER and seat not in (who, other)
                  or visibility == OTHER and other != seat)
        out.append((kind, who, -1, other) if hidden and card >= 0 else event)
    return out
