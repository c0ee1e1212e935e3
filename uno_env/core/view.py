"""What one seat may know, as a structured dict (the env's ``infos[agent]``).

Built from the game's public state plus that seat's own hand and the cards it has seen;
nothing else is read, so two games that differ only in cards hidden from the seat give the
same view. Keys (``offset`` is seats clockwise from the observer):

================  ==============================================================
seat              the observer's seat
num_players       table size; ``rules`` every rule option (``Rules.to_dict()``)
edition           edition id; ``colors`` its four color names, slot order
round, dealer     round number (from 1) and this round's dealer
phase             the pending decision (a ``Phase`` value)
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

from typing import TYPE_CHECKING, Any

from .cards import NUM_KINDS, WILD_DRAW_FOUR

if TYPE_CHECKING:
    from .game import Game


# Per edition: the code of every kind (None for a kind the edition lacks); per Rules: its dict.
_CODES: dict[str, tuple[str | None, ...]] = {}
_RULES: dict[int, tuple[Any, dict[str, Any]]] = {}


def _codes(game: Game) -> tuple[str | None, ...]:
    ed = game.edition
    table = _CODES.get(ed.name)
    if table is None:
        valid = set(ed.all_codes())
        table = _CODES[ed.name] = tuple(
            code if (code := _safe_code(ed, k)) in valid else None for k in range(NUM_KINDS)
        )
    return table


def _safe_code(ed: Any, kind: int) -> str | None:
    try:
        return str(ed.code(kind))
    except ValueError:
        return None


def _rules_dict(game: Game) -> dict[str, Any]:
    rules = game.rules
    entry = _RULES.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_RULES) >= 1024:
            _RULES.clear()
        entry = _RULES[id(rules)] = (rules, rules.to_dict())
    return dict(entry[1])


def seat_view(game: Game, seat: int) -> dict[str, Any]:
    """The structured view of ``game`` from ``seat`` (see the module docstring)."""
    ed = game.edition
    codes = _codes(game)
    n = game.num_players
    current = game.current_player
    my_turn = current == seat
    legal = game.legal_actions() if my_turn else []
    sizes = game.hand_sizes
    uno = game._uno
    scores = game.scores
    known = game._known
    pending_w4 = game._played == WILD_DRAW_FOUR and not game.is_round_over
    eliminated = game.eliminated
    teams = [game.team_of(s) for s in range(n)] if game.rules.teams else [None] * n
    my_team = teams[seat]
    return {
        "seat": seat,
        "num_players": n,
        "rules": _rules_dict(game),
        "edition": ed.name,
        "colors": list(ed.colors),
        "round": game.round_number,
        "dealer": game.dealer,
        "phase": game.phase.value,
        "current_player": current,
        "my_turn": my_turn,
        "legal_actions": [a.text for a in legal],
        "legal_action_ids": [int(a) for a in legal],
        "hand": [codes[k] for k in sorted(game._hands[seat])],
        "drawn_card": game.drawn_card if my_turn else None,
        "top_card": codes[game._discard[-1]],
        "active_color": game.active_color,
        "direction": game.direction,
        "pending_card": game.pending_card,
        "pending_player": game.pending_player,
        "w4_prev_color": ed.colors[game._w4_prev_color] if pending_w4 and game._w4_prev_color >= 0 else None,
        "my_w4_bluff": game._w4_guilty if pending_w4 and game._player == seat else None,
        "discard_pile": [codes[k] for k in game._discard],
        "draw_pile_size": len(game._draw),
        "scores": list(scores),
        "target_score": game.rules.target_score,
        "round_points": list(game.round_points),
        "hand_sizes": sizes,
        "uno_called": list(uno),
        "penalty": game.penalty,
        "eliminated": eliminated,
        "team": my_team,
        "teams": teams,
        "opponents": [
            {
                "seat": other,
                "offset": offset,
                "hand_size": sizes[other],
                "score": scores[other],
                "uno_called": uno[other],
                "known_cards": [codes[k] for k in known[other].get(seat, ())],
                "eliminated": eliminated[other],
                "teammate": my_team is not None and teams[other] == my_team,
            }
            for offset in range(1, n)
            for other in [(seat + offset) % n]
        ],
        "round_winner": game.round_winner,
        "winners": list(game.winners),
    }
