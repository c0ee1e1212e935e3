"""Saving and loading a game as plain JSON-serialisable data.

``Game.to_dict()`` returns::

    {
      "format": "uno_env.game", "version": 1,
      "rules": {...Rules options...},
      "round": 3,                      # rounds dealt so far, this one included
      "dealer": 2, "direction": 1,     # +1 clockwise, -1 counter-clockwise
      "phase": "play",                 # a Phase value
      "current_player": 0,             # who decides (kept when the round is over)
      "active_color": "red",           # or null while the opening wild's color is pending
      "hands": [["R7", "W4"], ...],    # per seat
      "draw_pile": ["G3", ...],        # top first
      "discard_pile": ["B5", "R5"],    # top last
      "scores": [...], "round_points": [...], "round_winner": null, "winners": [],
      "uno_called": [false, ...],
      "eliminated": [false, ...],      # elimination variant: seats out of the game
      "known": [{"observer": 1, "target": 0, "cards": ["P3"]}, ...],
      "pending": {"card": "W4", "player": 3, "drawn": null, "w4_guilty": false,
                  "w4_prev_color": "red", "catch_index": 0, "penalty": 4},
      "rng_state": [3, [...625 ints...], null],
      "log": [["play", 0, "R7", null], ...]   # (type, seat, card, other); see Game.events()
    }

``known`` lists, per observer and target seat, the cards of the target's hand the observer
has seen (Urrrhhh gifts, King Pig deals, a hand shown in a challenge). ``pending`` holds the
card whose effects are being resolved and who played it, the card just drawn (phase
``play_drawn``), whether a pending ``W4`` was a bluff and the color active before it, and how
far the catch window has gone, and the cards owed by whoever faces a Draw Two or ``W4``
(stacked totals under the stacking house rule).
``Game.from_dict`` checks every field and the consistency between them (every card of the
deck exactly once, the pending card fits the phase, ...) and raises ``StateError`` naming
the field when something is wrong.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, NoReturn

from .actions import action_table
from .cards import EDITIONS, KIND_COLOR, KIND_RANK, SPECIAL_WILD, WILD, WILD_DRAW_FOUR, Edition
from .errors import StateError, UnoError
from .rules import Rules

if TYPE_CHECKING:
    from .game import Game

_KEYS = (
    "format", "version", "rules", "round", "dealer", "direction", "phase", "current_player",
    "active_color", "hands", "draw_pile", "discard_pile", "scores", "round_points",
    "round_winner", "winners", "uno_called", "eliminated", "known", "pending", "rng_state",
)
_PENDING_KEYS = ("card", "player", "drawn", "w4_guilty", "w4_prev_color", "catch_index", "penalty")


def game_to_dict(game: Game, include_log: bool = True) -> dict[str, Any]:
    """Serialise a game (see the module docstring for the layout)."""
    from .game import SIGNED_OTHER, STATE_FORMAT, STATE_VERSION

    ed = game.edition
    code = ed.code
    version, internal, gauss = game._rng.getstate()
    data: dict[str, Any] = {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "rules": game.rules.to_dict(),
        "round": game.round_number,
        "dealer": game._dealer,
        "direction": game._direction,
        "phase": game.phase.value,
        "current_player": game._current,
        "active_color": game.active_color,
        "hands": game.hands,
        "draw_pile": game.draw_pile,
        "discard_pile": game.discard_pile,
        "scores": list(game.scores),
        "round_points": list(game.round_points),
        "round_winner": game.round_winner,
        "winners": list(game.winners),
        "uno_called": list(game._uno),
        "eliminated": game.eliminated,
        "known": [
            {"observer": observer, "target": target, "cards": [code(k) for k in cards]}
            for target, known in enumerate(game._known)
            for observer, cards in sorted(known.items())
        ],
        "pending": {
            "card": game.pending_card,
            "player": game.pending_player,
            "drawn": code(game._drawn) if game._drawn >= 0 else None,
            "w4_guilty": game._w4_guilty,
            "w4_prev_color": ed.colors[game._w4_prev_color] if game._w4_prev_color >= 0 else None,
            "catch_index": game._catch_index,
            "penalty": game._penalty,
        },
        "rng_state": [version, list(internal), gauss],
    }
    if include_log:
        data["log"] = [
            [kind, None if seat < 0 else seat, code(card) if card >= 0 else None,
             other if other >= 0 or kind in SIGNED_OTHER else None]
            for kind, seat, card, other in game._log
        ]
    return data


def game_from_dict(data: Any) -> Game:
    """Rebuild a game from ``game_to_dict`` data, validating everything."""
    try:
        return _load(data)
    except StateError:
        raise
    except UnoError as err:
        raise StateError(f"invalid saved game: {err}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
        raise StateError(f"invalid saved game: {type(err).__name__}: {err}") from None


def _fail(field: str, what: str) -> NoReturn:
    raise StateError(f"invalid saved game: {field}: {what}")


def _seat(value: Any, n: int, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        _fail(field, f"must be a seat 0..{n - 1}, got {value!r}")
    return value


def _optional_seat(value: Any, n: int, field: str) -> int | None:
    return None if value is None else _seat(value, n, field + " (or null)")


def _nonneg_ints(value: Any, n: int, field: str) -> list[int]:
    if (not isinstance(value, list) or len(value) != n
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value)):
        _fail(field, f"must be a list of {n} non-negative ints")
    return list(value)


def _cards(ed: Edition, value: Any, field: str) -> list[int]:
    if not isinstance(value, list):
        _fail(field, "must be a list of card codes")
    try:
        return [ed.kind(c) for c in value]
    except ValueError as err:
        _fail(field, str(err))


def _load(data: Any) -> Game:
    from .game import (
        _NO_RANK,
        CATCH_PHASE,
        CHALLENGE,
        CHOOSE_COLOR,
        EVENT_VISIBILITY,
        GAME_OVER,
        GIVE_AWAY,
        PLAY,
        PLAY_DRAWN,
        ROUND_OVER,
        STACK_PHASE,
        STATE_FORMAT,
        STATE_VERSION,
        SWAP_PHASE,
        UNO_PHASE,
        Game,
        Phase,
    )

    if not isinstance(data, dict):
        _fail("top level", f"must be a mapping, got {type(data).__name__}")
    missing = [k for k in _KEYS if k not in data]
    unknown = [k for k in data if k not in _KEYS and k != "log"]
    if missing or unknown:
        _fail("keys", f"missing {missing}, unknown {unknown}; expected {list(_KEYS)} and optional 'log'")
    if data["format"] != STATE_FORMAT or data["version"] != STATE_VERSION:
        _fail("format/version", f"expected {STATE_FORMAT!r} version {STATE_VERSION}, got "
              f"{data['format']!r} version {data['version']!r}")
    try:
        rules = Rules.from_dict(data["rules"])
    except ValueError as err:
        _fail("rules", str(err))
    ed = EDITIONS[rules.edition]
    n = rules.num_players

    phases = [p.value for p in Phase]
    if data["phase"] not in phases:
        _fail("phase", f"must be one of {phases}, got {data['phase']!r}")
    phase = phases.index(data["phase"])
    current = _seat(data["current_player"], n, "current_player")
    dealer = _seat(data["dealer"], n, "dealer")
    if data["direction"] not in (1, -1) or isinstance(data["direction"], bool):
        _fail("direction", f"must be 1 or -1, got {data['direction']!r}")
    rnd = data["round"]
    if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 1:
        _fail("round", f"must be an int >= 1, got {rnd!r}")

    hands_raw = data["hands"]
    if not isinstance(hands_raw, list) or len(hands_raw) != n:
        _fail("hands", f"must be a list of {n} hands")
    hands = [_cards(ed, h, f"hands[{i}]") for i, h in enumerate(hands_raw)]
    draw = _cards(ed, data["draw_pile"], "draw_pile")
    discard = _cards(ed, data["discard_pile"], "discard_pile")
    if not discard:
        _fail("discard_pile", "must hold at least the top card")
    every = sorted([k for h in hands for k in h] + draw + discard)
    if every != ed.deck():
        _fail("cards", f"hands and piles must hold exactly the {ed.deck_size} cards of the deck, once each")

    active_name = data["active_color"]
    if active_name is None:
        active = -1
    elif isinstance(active_name, str) and ed.color_index(active_name) >= 0:
        active = ed.color_index(active_name)
    else:
        _fail("active_color", f"must be one of {list(ed.colors)} or null, got {active_name!r}")

    scores = _nonneg_ints(data["scores"], n, "scores")
    round_points = _nonneg_ints(data["round_points"], n, "round_points")
    round_winner = _optional_seat(data["round_winner"], n, "round_winner")
    winners = data["winners"]
    if not isinstance(winners, list):
        _fail("winners", "must be a list of seats")
    for w in winners:
        _seat(w, n, "winners")
    uno = data["uno_called"]
    if not isinstance(uno, list) or len(uno) != n or any(not isinstance(u, bool) for u in uno):
        _fail("uno_called", f"must be a list of {n} booleans")
    if any(u and len(hands[s]) != 1 for s, u in enumerate(uno)):
        _fail("uno_called", "only a seat holding exactly one card can have called UNO")

    eliminated = data["eliminated"]
    if not isinstance(eliminated, list) or len(eliminated) != n or any(not isinstance(e, bool) for e in eliminated):
        _fail("eliminated", f"must be a list of {n} booleans")
    if any(eliminated) and not rules.elimination or sum(not e for e in eliminated) < 1:
        _fail("eliminated", "seats leave only under the elimination rule, and one must remain")
    if phase < ROUND_OVER and any(e and hands[s] for s, e in enumerate(eliminated)):
        _fail("eliminated", "an eliminated seat holds no cards while a round is in play")
    alive = [not e for e in eliminated]
    ring = [next((s + i * data["direction"]) % n for i in range(1, n + 1) if alive[(s + i * data["direction"]) % n])
            for s in range(n)]

    known: list[dict[int, list[int]]] = [{} for _ in range(n)]
    if not isinstance(data["known"], list):
        _fail("known", "must be a list of {observer, target, cards}")
    for i, entry in enumerate(data["known"]):
        if not isinstance(entry, dict) or set(entry) != {"observer", "target", "cards"}:
            _fail(f"known[{i}]", "must be a mapping with observer, target and cards")
        obs = _seat(entry["observer"], n, f"known[{i}].observer")
        tgt = _seat(entry["target"], n, f"known[{i}].target")
        cards = _cards(ed, entry["cards"], f"known[{i}].cards")
        if obs == tgt or not cards or obs in known[tgt]:
            _fail(f"known[{i}]", "observer and target must differ, cards be non-empty, pairs unique")
        remaining = list(hands[tgt])
        for k in cards:
            if k not in remaining:
                _fail(f"known[{i}]", f"{ed.code(k)} is not (often enough) in seat {tgt}'s hand")
            remaining.remove(k)
        known[tgt][obs] = cards

    pending = data["pending"]
    if not isinstance(pending, dict) or set(pending) != set(_PENDING_KEYS):
        _fail("pending", f"must be a mapping with keys {list(_PENDING_KEYS)}")
    played = -1 if pending["card"] is None else _cards(ed, [pending["card"]], "pending.card")[0]
    player = _optional_seat(pending["player"], n, "pending.player")
    drawn = -1 if pending["drawn"] is None else _cards(ed, [pending["drawn"]], "pending.drawn")[0]
    guilty = pending["w4_guilty"]
    prev_name = pending["w4_prev_color"]
    if prev_name is not None and (not isinstance(prev_name, str) or ed.color_index(prev_name) < 0):
        _fail("pending.w4_prev_color", f"must be one of {list(ed.colors)} or null")
    prev_color = -1 if prev_name is None else ed.color_index(prev_name)
    catch_index = pending["catch_index"]
    if not isinstance(guilty, bool):
        _fail("pending.w4_guilty", "must be a boolean")
    if isinstance(catch_index, bool) or not isinstance(catch_index, int) or not 0 <= catch_index < n:
        _fail("pending.catch_index", f"must be an int 0..{n - 1}")
    penalty = pending["penalty"]
    if isinstance(penalty, bool) or not isinstance(penalty, int) or penalty < 0 or penalty % 2:
        _fail("pending.penalty", "must be an even int >= 0")
    if (played < 0) != (player is None):
        _fail("pending", "card and player must both be set or both be null")
    if played >= 0 and played != discard[-1]:
        _fail("pending.card", "must be the top card of the discard pile")

    def need(ok: bool, what: str) -> None:
        if not ok:
            _fail("phase " + data["phase"], what)

    need(drawn < 0 or phase == PLAY_DRAWN, "only the play_drawn phase has a drawn card")
    def after(seat: int, steps: int = 1) -> int:
        for _ in range(steps):
            seat = ring[seat]
        return seat

    if phase < ROUND_OVER:
        need(not winners and round_winner is None, "a round in play has no winners yet")
        # The one empty hand in play: King Pig played as the last card, its color still pending (5.5).
        king_pig_out = phase == CHOOSE_COLOR and played == SPECIAL_WILD and ed.special_code == "WK"
        need(all(hands[s] or (king_pig_out and s == player) for s in range(n) if alive[s]),
             "every seat in the game holds cards while the round is in play")
        need(alive[current] and alive[dealer], "the current player and the dealer are in the game")
    if phase == PLAY:
        need(active >= 0, "needs an active color")
    elif phase == PLAY_DRAWN:
        need(drawn >= 0 and drawn in hands[current] and active >= 0, "needs the drawn card in the player's hand")
        top = discard[-1]
        plays = (drawn >= WILD or KIND_COLOR[drawn] == active or top < WILD and KIND_RANK[drawn] == KIND_RANK[top])
        honest = (drawn != WILD_DRAW_FOUR or rules.allow_bluff
                  or all(KIND_COLOR[k] != active for k in hands[current]))
        need(not rules.draw_until_playable or plays and honest,
             "under draw_until_playable the drawn card plays (rule 7.4)")
    elif phase == CHOOSE_COLOR:
        need(played < 0 and active < 0 and discard[-1] >= WILD and len(discard) == 1
             or played >= WILD and player == current, "needs a wild whose player chooses")
    elif phase == GIVE_AWAY:
        need(played == SPECIAL_WILD and ed.special_code == "WU" and player == current
             and any(k < WILD for k in hands[current]), "needs an Urrrhhh just played by a holder of colors")
    elif phase == UNO_PHASE:
        need(played >= 0 and player == current and len(hands[current]) == 1 and not uno[current],
             "needs the player who just played down to one card")
    elif phase == CATCH_PHASE:
        need(played >= 0 and player is not None and catch_index >= 1
             and len(hands[player]) == 1 and not uno[player]
             and current == after(player, catch_index),
             "needs an uncalled one-card player and the seat offered the catch")
    elif phase == CHALLENGE:
        need(played == WILD_DRAW_FOUR and player is not None and penalty >= 4
             and current == after(player), "needs a W4 played by the previous seat")
    elif phase == SWAP_PHASE:
        need(rules.seven_zero and played >= 0 and KIND_RANK[played] == 7 and player == current,
             "needs a 7 just played under the seven-zero rule by the current player")
    elif phase == STACK_PHASE:
        need(rules.stacking and played >= 0 and KIND_RANK[played] == 12 and player is not None
             and current == after(player) and penalty >= 2,
             "needs a Draw Two just played at the next player, under the stacking rule")
    else:
        need(round_winner is not None and not hands[round_winner], "needs the round winner, with no cards")
        need((phase == GAME_OVER) == bool(winners), "game over exactly when there are winners")

    rng_state = data["rng_state"]
    rng = random.Random()
    try:
        if not isinstance(rng_state, list) or len(rng_state) != 3 or not isinstance(rng_state[1], list):
            raise TypeError("must be [version, [625 ints], gauss]")
        rng.setstate((rng_state[0], tuple(rng_state[1]), rng_state[2]))
    except (TypeError, ValueError, OverflowError) as err:
        _fail("rng_state", f"not a random.Random state ({err})")

    log: list[tuple[str, int, int, int]] = []
    raw_log = data.get("log", [])
    if not isinstance(raw_log, list):
        _fail("log", "must be a list of [type, seat, card, other]")
    for i, entry in enumerate(raw_log):
        if not isinstance(entry, list) or len(entry) != 4 or entry[0] not in EVENT_VISIBILITY:
            _fail(f"log[{i}]", f"must be [type, seat, card, other] with a type among {list(EVENT_VISIBILITY)}")
        kind, seat, card, other = entry
        for name, v in (("seat", seat), ("other", other)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                _fail(f"log[{i}].{name}", "must be an int or null")
        log.append((kind, -1 if seat is None else seat,
                    -1 if card is None else _cards(ed, [card], f"log[{i}].card")[0],
                    -1 if other is None else other))

    game = Game.__new__(Game)
    game.rules = rules
    game.edition = ed
    game._actions = action_table(ed)
    game.num_players = n
    game._rng = rng
    game._log = log
    game.scores = scores
    game.round_points = round_points
    game.winners = list(winners)
    game.round_number = rnd
    game.round_winner = round_winner
    game._dealer = dealer
    game._direction = data["direction"]
    game._phase = phase
    game._current = current
    game._active = active
    top = discard[-1]
    game._top_rank = KIND_RANK[top] if top < WILD else _NO_RANK
    game._hands = hands
    game._draw = draw[::-1]
    game._discard = discard
    game._known = known
    game._uno = list(uno)
    game._played = played
    game._player = -1 if player is None else player
    game._drawn = drawn
    game._alive = alive
    game._rebuild_ring()
    game._penalty = penalty
    game._w4_guilty = guilty
    game._w4_prev_color = prev_color
    game._catch_index = catch_index
    game._legal = None
    assert KIND_COLOR  # kinds table imported for validation helpers
    return game
