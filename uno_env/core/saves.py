"""Saving and loading a game state as plain JSON-serialisable data.

``Game.to_dict()`` returns::

    {
      "format": "uno_env.game", "version": 2,
      "rules": {...Rules options...},
      "round": 3,                      # rounds dealt so far, this one included
      "dealer": 2, "direction": 1,     # +1 clockwise, -1 counter-clockwise
      "phase": "play",                 # a Phase name
      "current_player": 0,             # who decides (kept when the round is over)
      "active_color": "red",           # or null while the opening wild's color is pending
      "hands": [["R7", "W4"], ...],    # per seat
      "draw_pile": ["G3", ...],        # top first
      "discard_pile": ["B5", "R5"],    # top last
      "scores": [...], "round_points": [...], "round_winner": null, "winners": [],
      "uno_called": [false, ...],
      "eliminated": [false, ...],      # elimination variant: seats out of the game
      "drew_on": [[0, 3, ...], ...],   # per seat, 17 counts of public draw evidence
      "known": [{"observer": 1, "target": 0, "cards": ["P3"]}, ...],
      "pending": {"card": "W4", "player": 3, "drawn": null, "w4_guilty": false,
                  "w4_prev_color": "red", "catch_index": 0, "penalty": 4},
      "rng_state": [3, [...625 ints...], null],
      "log": [["play", 0, "R7", null], ...]   # (type, seat, card, other); see Game.events()
    }

``known`` lists, per observer and target seat, the cards of the target's hand the observer
has seen (Urrrhhh gifts, King Pig deals, a hand shown in a challenge). ``pending`` holds the
card whose effects are being resolved and who played it, the card just drawn (phase
``play_drawn``), whether a pending ``W4`` was a bluff and the color active before it, how
far the catch window has gone, and the cards owed by whoever faces a Draw Two or ``W4``
(stacked totals under the stacking house rule). ``drew_on`` is ``PublicState.drew_on``: per
seat, 4 counts by color slot then 13 by rank of the cards its last turn draws cover. ``log`` holds the events the game kept (see
``Game``'s ``log_limit``); it is optional.

``Game.from_dict`` reads every field with its type, then checks the whole state with
``checks.check_state`` (the invariants every reachable position satisfies: every card of the
deck once, numbers within what a game can reach, one invariant per phase, scores and winners
as the scoring rules make them, every log entry) and raises ``StateError`` naming the field
when something is wrong. Malformed data of any shape (deep nesting included) is a
``StateError``; nothing in a save is ever executed or imported.

Versions: 2 added ``drew_on``. A version 1 save (written before it) still loads, with no draw
evidence (every count 0): the evidence of the turn draws before the save is not recoverable.
"""

from __future__ import annotations

import random
from typing import Any, NoReturn, TypedDict

from .cards import DREW_ON_SIZE, EDITIONS, SPECIAL_WILD, Edition, short_list, short_repr
from .checks import check_state
from .errors import StateError, UnoError
from .events import EVENT_FIELDS, SIGNED_OTHER, Event
from .rules import Rules, RulesDict
from .state import PHASE_TEXTS, GameState, Phase, PublicState

STATE_FORMAT = "uno_env.game"
STATE_VERSION = 2
READABLE_VERSIONS = (1, 2)

KEYS = (
    "format", "version", "rules", "round", "dealer", "direction", "phase", "current_player",
    "active_color", "hands", "draw_pile", "discard_pile", "scores", "round_points",
    "round_winner", "winners", "uno_called", "eliminated", "drew_on", "known", "pending", "rng_state",
)
_KEYS_V1 = tuple(k for k in KEYS if k != "drew_on")  # a version 1 save: no draw evidence
PENDING_KEYS = ("card", "player", "drawn", "w4_guilty", "w4_prev_color", "catch_index", "penalty")
RNG_STATE_SIZE = 625  # random.Random's state: 624 words and an index

# check_state names state fields; a save names some of them differently.
_SAVE_FIELD = {
    "current": "current_player", "alive": "eliminated", "pending_card": "pending.card",
    "pending_player": "pending.player", "drawn_card": "pending.drawn", "w4_guilty": "pending.w4_guilty",
    "w4_prev_color": "pending.w4_prev_color", "catch_index": "pending.catch_index", "penalty": "pending.penalty",
}
_WHERE = "invalid saved game"


class KnownEntry(TypedDict):
    """One ``known`` entry of a save."""

    observer: int
    target: int
    cards: list[str]


class PendingDict(TypedDict):
    """The ``pending`` entry of a save."""

    card: str | None
    player: int | None
    drawn: str | None
    w4_guilty: bool
    w4_prev_color: str | None
    catch_index: int
    penalty: int


class SaveDict(TypedDict, total=False):
    """A save (``Game.to_dict()``); every key but ``log`` is always present."""

    format: str
    version: int
    rules: RulesDict
    round: int
    dealer: int
    direction: int
    phase: str
    current_player: int
    active_color: str | None
    hands: list[list[str]]
    draw_pile: list[str]
    discard_pile: list[str]
    scores: list[int]
    round_points: list[int]
    round_winner: int | None
    winners: list[int]
    uno_called: list[bool]
    eliminated: list[bool]
    drew_on: list[list[int]]
    known: list[KnownEntry]
    pending: PendingDict
    rng_state: list[Any]
    log: list[list[Any]]


def state_to_dict(state: GameState, include_log: bool = True) -> SaveDict:
    """Serialise a state (see the module docstring for the layout)."""
    ed = EDITIONS[state.rules.edition]
    code = ed.code
    colors = ed.colors
    pub = state.public
    version, internal, gauss = state.rng.getstate()
    data = SaveDict(
        format=STATE_FORMAT,
        version=STATE_VERSION,
        rules=state.rules.to_dict(),
        round=pub.round,
        dealer=pub.dealer,
        direction=pub.direction,
        phase=pub.phase.text,
        current_player=pub.current,
        active_color=colors[pub.active_color] if pub.active_color >= 0 else None,
        hands=[[code(k) for k in hand] for hand in state.hands],
        draw_pile=[code(k) for k in reversed(state.draw_pile)],
        discard_pile=[code(k) for k in pub.discard_pile],
        scores=list(pub.scores),
        round_points=list(pub.round_points),
        round_winner=pub.round_winner if pub.round_winner >= 0 else None,
        winners=list(pub.winners),
        uno_called=list(pub.uno_called),
        eliminated=[not a for a in pub.alive],
        drew_on=[list(row) for row in pub.drew_on],
        known=[
            KnownEntry(observer=observer, target=target, cards=[code(k) for k in cards])
            for target, known in enumerate(state.known)
            for observer, cards in sorted(known.items())
        ],
        pending=PendingDict(
            card=code(pub.pending_card) if pub.pending_card >= 0 else None,
            player=pub.pending_player if pub.pending_player >= 0 else None,
            drawn=code(state.drawn_card) if state.drawn_card >= 0 else None,
            w4_guilty=state.w4_guilty,
            w4_prev_color=colors[pub.w4_prev_color] if pub.w4_prev_color >= 0 else None,
            catch_index=pub.catch_index,
            penalty=pub.penalty,
        ),
        rng_state=[version, list(internal), gauss],
    )
    if include_log:
        data["log"] = [
            [kind, None if seat < 0 else seat, code(card) if card >= 0 else None,
             other if other >= 0 or kind in SIGNED_OTHER else None]
            for kind, seat, card, other in state.log
        ]
    return data


def state_from_dict(data: Any) -> GameState:
    """Rebuild a state from ``state_to_dict`` data, validating everything; raises ``StateError``."""
    try:
        state = _read(data)
        check_state(state)
    except StateError as err:
        field = getattr(err, "field", None)
        if field is None:
            raise
        saved = _SAVE_FIELD.get(field, field)
        raise StateError(f"{_WHERE}: {saved}: {err.what}") from None  # type: ignore[attr-defined]
    except UnoError as err:
        raise StateError(f"{_WHERE}: {err}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as err:
        raise StateError(f"{_WHERE}: {type(err).__name__}: {short_repr(str(err))}") from None
    return state


def _fail(field: str, what: str) -> NoReturn:
    raise StateError(f"{_WHERE}: {field}: {what}")


def _int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(field, f"must be an int, got {short_repr(value)}")
    return value


def _optional(value: Any, field: str) -> int:
    return -1 if value is None else _int(value, field + " (or null)")


def _cards(ed: Edition, value: Any, field: str) -> list[int]:
    if not isinstance(value, list):
        _fail(field, "must be a list of card codes")
    try:
        return [ed.kind(c) for c in value]
    except ValueError as err:
        _fail(field, str(err))


def _card(ed: Edition, value: Any, field: str) -> int:
    return -1 if value is None else _cards(ed, [value], field)[0]


def _color(ed: Edition, value: Any, field: str) -> int:
    if value is None:
        return -1
    slot = ed.color_index(value)
    if slot < 0:
        _fail(field, f"must be one of {list(ed.colors)} or null, got {short_repr(value)}")
    return slot


def _read(data: Any) -> GameState:
    """Each field with its type (codes and names to ints); the invariants are check_state's."""
    if not isinstance(data, dict):
        _fail("top level", f"must be a mapping, got {type(data).__name__}")
    version = data.get("version")
    keys = _KEYS_V1 if type(version) is int and version == 1 else KEYS
    missing = [k for k in keys if k not in data]
    unknown = [k for k in data if k not in keys and k != "log"]
    if missing or unknown:
        _fail("keys", f"missing {missing}, unknown [{short_list(list(map(short_repr, unknown)))}]; expected {list(keys)} and optional 'log'")
    fmt = data["format"]
    if fmt != STATE_FORMAT or type(version) is not int or version not in READABLE_VERSIONS:
        _fail("format/version", f"expected {STATE_FORMAT!r} version {' or '.join(map(str, READABLE_VERSIONS))}, got "
              f"{short_repr(fmt)} version {short_repr(version)}")
    try:
        rules = Rules.from_dict(data["rules"])
    except ValueError as err:
        _fail("rules", str(err))
    ed = EDITIONS[rules.edition]
    n = rules.num_players

    phase_text = data["phase"]
    if not isinstance(phase_text, str) or phase_text not in PHASE_TEXTS:
        _fail("phase", f"must be one of {list(PHASE_TEXTS)}, got {short_repr(phase_text)}")
    for key in ("current_player", "dealer"):
        seat = data[key]
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            _fail(key, f"must be a seat 0..{n - 1}, got {short_repr(seat)}")
    direction = data["direction"]
    if direction not in (1, -1) or not isinstance(direction, int) or isinstance(direction, bool):
        _fail("direction", f"must be 1 or -1, got {short_repr(direction)}")
    rnd = data["round"]
    if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 1:
        _fail("round", f"must be an int >= 1, got {short_repr(rnd)}")

    hands_raw = data["hands"]
    if not isinstance(hands_raw, list) or len(hands_raw) != n:
        _fail("hands", f"must be a list of {n} hands")
    hands = [_cards(ed, h, f"hands[{i}]") for i, h in enumerate(hands_raw)]
    draw = _cards(ed, data["draw_pile"], "draw_pile")
    discard = _cards(ed, data["discard_pile"], "discard_pile")
    for key in ("scores", "round_points"):
        values = data[key]
        if (not isinstance(values, list) or len(values) != n
                or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values)):
            _fail(key, f"must be a list of {n} non-negative ints")
    winners = data["winners"]
    if not isinstance(winners, list):
        _fail("winners", "must be a list of seats")
    eliminated = data["eliminated"]
    if not isinstance(eliminated, list) or len(eliminated) != n or any(not isinstance(e, bool) for e in eliminated):
        _fail("eliminated", f"must be a list of {n} booleans")

    drew_on = data.get("drew_on", [[0] * DREW_ON_SIZE for _ in range(n)])
    if (not isinstance(drew_on, list) or len(drew_on) != n
            or any(not isinstance(row, list) or len(row) != DREW_ON_SIZE for row in drew_on)
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for row in drew_on for v in row)):
        _fail("drew_on", f"must be a list of {n} lists of {DREW_ON_SIZE} non-negative ints")

    known: list[dict[int, list[int]]] = [{} for _ in range(n)]
    if not isinstance(data["known"], list):
        _fail("known", "must be a list of {observer, target, cards}")
    for i, entry in enumerate(data["known"]):
        if not isinstance(entry, dict) or set(entry) != {"observer", "target", "cards"}:
            _fail(f"known[{i}]", "must be a mapping with observer, target and cards")
        obs, tgt = entry["observer"], entry["target"]
        if (isinstance(obs, bool) or not isinstance(obs, int) or isinstance(tgt, bool) or not isinstance(tgt, int)
                or not 0 <= obs < n or not 0 <= tgt < n or obs == tgt or obs in known[tgt]):
            _fail(f"known[{i}]", f"observer and target must differ and be seats 0..{n - 1}, pairs unique")
        known[tgt][obs] = _cards(ed, entry["cards"], f"known[{i}].cards")

    pending = data["pending"]
    if not isinstance(pending, dict) or set(pending) != set(PENDING_KEYS):
        _fail("pending", f"must be a mapping with keys {list(PENDING_KEYS)}")

    rng_state = data["rng_state"]
    rng = random.Random()
    try:
        if (not isinstance(rng_state, list) or len(rng_state) != 3 or not isinstance(rng_state[1], list)
                or len(rng_state[1]) != RNG_STATE_SIZE or not all(type(v) is int for v in rng_state[1])
                or rng_state[2] is not None and type(rng_state[2]) is not float):
            raise TypeError(f"must be [version, [{RNG_STATE_SIZE} ints], gauss]")
        rng.setstate((rng_state[0], tuple(rng_state[1]), rng_state[2]))
    except (TypeError, ValueError, OverflowError) as err:
        _fail("rng_state", f"not a random.Random state ({short_repr(str(err))})")

    raw_log = data.get("log", [])
    if not isinstance(raw_log, list):
        _fail("log", "must be a list of [type, seat, card, other]")
    log = [_event(ed, entry, i) for i, entry in enumerate(raw_log)]

    public = PublicState(
        round=rnd, dealer=data["dealer"], direction=direction, phase=Phase[phase_text.upper()],
        current=data["current_player"], active_color=_color(ed, data["active_color"], "active_color"),
        discard_pile=discard, pending_card=_card(ed, pending["card"], "pending.card"),
        pending_player=_optional(pending["player"], "pending.player"),
        w4_prev_color=_color(ed, pending["w4_prev_color"], "pending.w4_prev_color"),
        catch_index=_int(pending["catch_index"], "pending.catch_index"),
        penalty=_int(pending["penalty"], "pending.penalty"),
        scores=list(data["scores"]), round_points=list(data["round_points"]),
        round_winner=_optional(data["round_winner"], "round_winner"),
        winners=[_int(w, "winners") for w in winners],
        uno_called=_bools(data["uno_called"], "uno_called", n), alive=[not e for e in eliminated],
        hand_sizes=[len(h) for h in hands], drew_on=[list(row) for row in drew_on],
    )
    return GameState(
        rules=rules, public=public, hands=hands, draw_pile=draw[::-1], known=known,
        drawn_card=_card(ed, pending["drawn"], "pending.drawn"), w4_guilty=pending["w4_guilty"], rng=rng, log=log,
    )


def _bools(value: Any, field: str, n: int) -> list[bool]:
    if not isinstance(value, list) or len(value) != n or any(not isinstance(v, bool) for v in value):
        _fail(field, f"must be a list of {n} booleans")
    return list(value)


def _event(ed: Edition, entry: Any, i: int) -> Event:
    """One saved log entry as an event (its fields' meaning is checked by check_state)."""
    if (not isinstance(entry, list) or len(entry) != 4 or not isinstance(entry[0], str)
            or entry[0] not in EVENT_FIELDS):
        _fail(f"log[{i}]", f"must be [type, seat, card, other] with a type among {list(EVENT_FIELDS)}")
    kind, seat, card, other = entry
    for name, v in (("seat", seat), ("other", other)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            _fail(f"log[{i}].{name}", "must be an int or null")
    if (other is not None and other < 0) != (kind in SIGNED_OTHER and other == -1):
        _fail(f"log[{i}].other", "must be null or non-negative (a direction is 1 or -1)")
    if seat is not None and seat < 0:
        _fail(f"log[{i}].seat", "must be a seat or null")
    kind_of_card = _card(ed, card, f"log[{i}].card")
    assert kind_of_card <= SPECIAL_WILD
    return (kind, -1 if seat is None else seat, kind_of_card, -1 if other is None else other)
