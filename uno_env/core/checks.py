"""The invariants of a game state: what every position a real game can reach satisfies.

``check_state(state)`` raises ``StateError`` naming the field and what it must be; it is the
one check behind ``Game.from_dict`` (every save is checked), ``Game.from_state`` and
``Game.check()``. It checks types and ranges (every number bounded by what a game can reach),
the cards (every card of the deck exactly once), the knowledge (what a seat has seen is in
the hand it saw it in), then one invariant per phase (who decides, what is pending, what the
rules in force allow), then the scores and winners against the scoring rules, and, unless
``log=False``, every event of the log.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import NoReturn

from .cards import (
    DRAW_TWO,
    DREW_ON_SIZE,
    EDITIONS,
    KIND_COLOR,
    KIND_RANK,
    MAX_DECK_SIZE,
    NUM_COLORS,
    NUM_KINDS,
    SPECIAL_WILD,
    WILD,
    WILD_DRAW_FOUR,
    Edition,
    playable_kinds,
)
from .errors import StateError
from .events import event_problem
from .rules import Rules
from .state import GameState, Phase, PublicState

MAX_ROUNDS = 1_000_000_000  # far beyond any game; keeps round numbers small exact ints
MAX_DEALER_DRAWS = 100_000  # dealer-draw attempts a log may name (ties are redrawn; rule 2.1)
MAX_PENALTY = 16  # four W4 or eight Draw Two stacked (rule 7.4); 4 or 2 without stacking

# Phases in which a pending Draw Two / W4 still owes its cards.
_OWING = frozenset({Phase.CHOOSE_COLOR, Phase.UNO, Phase.CATCH, Phase.CHALLENGE, Phase.STACK})


def fail(field: str, what: str, where: str = "invalid game state") -> NoReturn:
    """Raise the ``StateError`` for one field (its ``field`` and ``what`` attributes say which)."""
    err = StateError(f"{where}: {field}: {what}")
    err.field = field  # type: ignore[attr-defined]
    err.what = what  # type: ignore[attr-defined]
    raise err


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ints(value: object, field: str, n: int | None, low: int, high: int) -> list[int]:
    if (not isinstance(value, list) or (n is not None and len(value) != n)
            or not all(_is_int(v) and low <= v <= high for v in value)):
        size = f"{n} " if n is not None else ""
        fail(field, f"must be a list of {size}ints from {low} to {high:,}")
    return value


def _bools(value: object, field: str, n: int) -> list[bool]:
    if not isinstance(value, list) or len(value) != n or not all(isinstance(v, bool) for v in value):
        fail(field, f"must be a list of {n} booleans")
    return value


def _int(value: object, field: str, low: int, high: int) -> int:
    if not _is_int(value) or not low <= value <= high:  # type: ignore[operator]
        fail(field, f"must be an int from {low} to {high:,}, got {value!r}"[:200])
    return value  # type: ignore[return-value]


def _kinds(value: object, field: str, edition: Edition) -> list[int]:
    top = SPECIAL_WILD if edition.special else SPECIAL_WILD - 1
    return _ints(value, field, None, 0, top)


def _card(value: object, field: str, edition: Edition) -> int:
    return _int(value, field, -1, SPECIAL_WILD if edition.special else SPECIAL_WILD - 1)


def check_state(state: GameState, *, log: bool = True) -> None:
    """Raise ``StateError`` unless ``state`` is a position a real game can reach (see the module)."""
    if not isinstance(state, GameState):
        raise StateError(f"a game state is a uno_env.core.GameState, got {type(state).__name__}")
    rules = state.rules
    if not isinstance(rules, Rules):
        fail("rules", f"must be a uno_env.core.Rules, got {type(rules).__name__}")
    ed = EDITIONS[rules.edition]
    n = rules.num_players
    target = rules.target_score
    top_score = target + ed.deck_points - 1  # a score passes the target by at most one round's points

    pub = state.public
    if not isinstance(pub, PublicState):
        fail("public", f"must be a uno_env.core.PublicState, got {type(pub).__name__}")

    # ---------------------------------------------------------------- types and ranges
    if not isinstance(pub.phase, Phase):
        fail("phase", f"must be a Phase, got {pub.phase!r}"[:200])
    phase = pub.phase
    _int(pub.round, "round", 1, MAX_ROUNDS)
    dealer = _int(pub.dealer, "dealer", 0, n - 1)
    current = _int(pub.current, "current", 0, n - 1)
    if pub.direction not in (1, -1) or not _is_int(pub.direction):
        fail("direction", f"must be 1 or -1, got {pub.direction!r}"[:200])
    active = _int(pub.active_color, "active_color", -1, NUM_COLORS - 1)
    if not isinstance(state.hands, list) or len(state.hands) != n:
        fail("hands", f"must be a list of {n} hands")
    hands = [_kinds(h, f"hands[{s}]", ed) for s, h in enumerate(state.hands)]
    draw = _kinds(state.draw_pile, "draw_pile", ed)
    discard = _kinds(pub.discard_pile, "discard_pile", ed)
    if not discard:
        fail("discard_pile", "must hold at least the top card")
    if pub.hand_sizes != [len(h) for h in hands]:
        fail("hand_sizes", "must be the number of cards in each hand")
    drew_on = pub.drew_on
    if (not isinstance(drew_on, list) or len(drew_on) != n
            or any(not isinstance(row, list) or len(row) != DREW_ON_SIZE for row in drew_on)):
        fail("drew_on", f"must be a list of {n} lists of {DREW_ON_SIZE} ints")
    for s, row in enumerate(drew_on):
        _ints(row, f"drew_on[{s}]", DREW_ON_SIZE, 0, len(hands[s]))
    if sorted([k for h in hands for k in h] + draw + discard) != ed.deck():
        fail("cards", f"hands and piles must hold exactly the {ed.deck_size} cards of the deck, once each")
    uno = _bools(pub.uno_called, "uno_called", n)
    if any(called and len(hands[s]) != 1 for s, called in enumerate(uno)):
        fail("uno_called", "only a seat holding exactly one card can have called UNO")
    alive = _bools(pub.alive, "alive", n)
    live = sum(alive)
    if any(not a for a in alive) and not rules.elimination or live < 1:
        fail("alive", "seats leave only under the elimination rule, and one must remain")
    scores = _ints(pub.scores, "scores", n, 0, top_score)
    round_points = _ints(pub.round_points, "round_points", n, 0, ed.deck_points)
    round_winner = _int(pub.round_winner, "round_winner", -1, n - 1)
    winners = _ints(pub.winners, "winners", None, 0, n - 1)
    if any(a >= b for a, b in zip(winners, winners[1:], strict=False)):
        fail("winners", "must list distinct seats in seat order")
    played = _card(pub.pending_card, "pending_card", ed)
    player = _int(pub.pending_player, "pending_player", -1, n - 1)
    drawn = _card(state.drawn_card, "drawn_card", ed)
    if not isinstance(state.w4_guilty, bool):
        fail("w4_guilty", "must be a boolean")
    prev_color = _int(pub.w4_prev_color, "w4_prev_color", -1, NUM_COLORS - 1)
    catch_index = _int(pub.catch_index, "catch_index", 0, n - 1)
    penalty = _int(pub.penalty, "penalty", 0, MAX_PENALTY if rules.stacking else 4)
    if penalty % 2:
        fail("penalty", "must be even (Draw Twos owe 2, Wild Draw Fours 4)")
    if not isinstance(state.rng, random.Random):
        fail("rng", f"must be a random.Random, got {type(state.rng).__name__}")
    if not isinstance(state.log, list):
        fail("log", "must be a list of events")
    _int(state.log_start, "log_start", 0, 2**62)

    # ---------------------------------------------------------------- knowledge
    if not isinstance(state.known, list) or len(state.known) != n or not all(isinstance(k, dict) for k in state.known):
        fail("known", f"must be a list of {n} mappings observer -> cards")
    for seen_seat, seen_by in enumerate(state.known):
        for observer, cards in seen_by.items():
            where = f"seat {observer!r}'s knowledge of seat {seen_seat}"[:120]
            if not _is_int(observer) or not 0 <= observer < n or observer == seen_seat:
                fail("known", f"{where}: the observer must be another seat 0..{n - 1}")
            seen = _kinds(cards, "known", ed)
            if not seen:
                fail("known", f"{where}: cards must be non-empty")
            missing = Counter(seen) - Counter(hands[seen_seat])
            if missing:
                fail("known", f"{where}: {ed.code(next(iter(missing)))} is not (often enough) "
                              f"in seat {seen_seat}'s hand")

    # ---------------------------------------------------------------- pending card and phase
    if (played < 0) != (player < 0):
        fail("pending", "card and player must both be set or both be null")
    if played >= 0 and played != discard[-1]:
        fail("pending_card", "must be the top card of the discard pile")

    def need(ok: bool, what: str) -> None:
        if not ok:
            fail(f"phase {phase.text}", what)

    def after(seat: int, steps: int = 1) -> int:
        for _ in range(steps):
            seat = next((seat + i * pub.direction) % n for i in range(1, n + 1)
                        if alive[(seat + i * pub.direction) % n])
        return seat

    need(drawn < 0 or phase == Phase.PLAY_DRAWN, "only the play_drawn phase has a drawn card")
    need(catch_index == 0 or phase == Phase.CATCH, "only the catch phase counts seats offered the catch")
    owing = phase in _OWING and (played == WILD_DRAW_FOUR or played >= 0 and KIND_RANK[played] == DRAW_TWO)
    need((penalty > 0) == owing, "cards are owed exactly while a Draw Two or Wild Draw Four awaits its victim")
    need(played != WILD_DRAW_FOUR or not owing or penalty % 4 == 0, "a Wild Draw Four owes a multiple of 4")
    special = ed.special
    in_play = phase < Phase.ROUND_OVER
    if in_play:
        need(not winners and round_winner < 0, "a round in play has no winners yet")
        need(not any(round_points), "round points are zero while a round is in play")
        # The one empty hand in play: King Pig played as the last card, its color still pending (5.5).
        king_pig_out = (phase == Phase.CHOOSE_COLOR and played == SPECIAL_WILD
                        and special is not None and special.color_when_last)
        need(all(hands[s] or (king_pig_out and s == player) for s in range(n) if alive[s]),
             "every seat in the game holds cards while the round is in play")
        need(not any(hands[s] or uno[s] for s in range(n) if not alive[s]),
             "an eliminated seat holds no cards while a round is in play")
        need(alive[current] and alive[dealer], "the current player and the dealer are in the game")
        need(live >= 2, "a round is played by two seats or more")
    if phase in (Phase.PLAY, Phase.PLAY_DRAWN):
        need(active >= 0 and played < 0, "needs an active color and no card pending")
    if phase == Phase.PLAY_DRAWN:
        need(drawn >= 0 and drawn in hands[current], "needs the drawn card in the player's hand")
        plays = active >= 0 and playable_kinds(active, discard[-1])[drawn]
        honest = (drawn != WILD_DRAW_FOUR or rules.allow_bluff
                  or all(KIND_COLOR[k] != active for k in hands[current]))
        need(not rules.draw_until_playable or plays and honest,
             "under draw_until_playable the drawn card plays (rule 7.4)")
    elif phase == Phase.CHOOSE_COLOR:
        opening = played < 0 and active < 0 and discard[-1] >= WILD and len(discard) == 1
        need(opening or played >= WILD and player == current, "needs a wild whose player chooses")
    elif phase == Phase.GIVE_AWAY:
        need(played == SPECIAL_WILD and special is not None and special.gives_away and player == current
             and any(k < WILD for k in hands[current]), "needs an Urrrhhh just played by a holder of colors")
    elif phase == Phase.UNO:
        need(rules.uno_call == "explicit" and played >= 0 and player == current and len(hands[current]) == 1
             and not uno[current], "needs the player who just played down to one card (explicit UNO calls)")
    elif phase == Phase.CATCH:
        need(rules.uno_call == "explicit" and player >= 0 and 1 <= catch_index < live
             and len(hands[player]) == 1 and not uno[player] and current == after(player, catch_index),
             "needs an uncalled one-card player and the seat offered the catch")
    elif phase == Phase.CHALLENGE:
        need(played == WILD_DRAW_FOUR and player >= 0 and prev_color >= 0 and current == after(player),
             "needs a W4 played by the previous seat")
    elif phase == Phase.SWAP:
        need(rules.seven_zero and played >= 0 and KIND_RANK[played] == 7 and player == current,
             "needs a 7 just played under the seven-zero rule by the current player")
    elif phase == Phase.STACK:
        need(rules.stacking and played >= 0 and KIND_RANK[played] == DRAW_TWO and player >= 0
             and current == after(player), "needs a Draw Two just played at the next player, under the stacking rule")
    if active < 0:
        need(phase == Phase.CHOOSE_COLOR and played < 0, "only the opening wild leaves the color unnamed")

    # ---------------------------------------------------------------- scores and winners
    if rules.teams and any(scores[s] != scores[s % 2] or round_points[s] != round_points[s % 2] for s in range(n)):
        fail("scores", "partners share their team's score and round points (rule 7.1)")
    if rules.elimination and any(alive[s] != (scores[s] < target) for s in range(n)):
        fail("alive", "exactly the seats at or over the target are out (rule 7.2)")
    if phase != Phase.GAME_OVER and any(alive[s] and scores[s] >= target for s in range(n)):
        fail("scores", f"a seat at or over the target {target} has ended the game (rule 6.3)")
    if not in_play:
        need(round_winner >= 0 and not hands[round_winner], "needs the round winner, with no cards")
        need((phase == Phase.GAME_OVER) == bool(winners), "game over exactly when there are winners")
        need(phase == Phase.GAME_OVER or live >= 2, "the round is over and more than one seat is still in")
    if phase == Phase.GAME_OVER:
        if rules.elimination:
            expected = [s for s in range(n) if alive[s]]
        elif rules.scoring == "lowest":
            low = min(scores)
            expected = [s for s in range(n) if scores[s] == low] if max(scores) >= target else []
        else:
            expected = [s for s in range(n) if s % 2 == round_winner % 2] if rules.teams else [round_winner]
            if scores[round_winner] < target:
                expected = []
        need(winners == expected, "the winners are the ones the scoring rules name (rules 6.3, 6.4, 7.1, 7.2)")
        need(not rules.elimination or live == 1, "the last seat standing wins (rule 7.2)")

    # ---------------------------------------------------------------- the log
    if log:
        limits = (max(MAX_DEALER_DRAWS, MAX_DECK_SIZE), pub.round, top_score)
        for i, event in enumerate(state.log):
            problem = event_problem(event, n, ed, limits)
            if problem:
                fail(f"log[{i}]", problem)


assert NUM_KINDS == SPECIAL_WILD + 1
