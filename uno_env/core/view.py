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
discard_pile      every card played since the last reshuffle, top last (public)
draw_pile_size    cards left to draw
scores            game scores per seat; ``target_score`` the target
hand_sizes        cards per seat; ``uno_called`` who has called UNO and holds one card
opponents         per other seat, clockwise from the left: seat, offset, hand_size,
                  score, uno_called, known_cards (cards of theirs the observer has seen)
round_winner      the seat that went out, once the round is over; ``winners`` of the game
================  ==============================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .cards import WILD_DRAW_FOUR

if TYPE_CHECKING:
    from .game import Game


def seat_view(game: "Game", seat: int) -> dict[str, Any]:
    """The structured view of ``game`` from ``seat`` (see the module docstring)."""
    ed = game.edition
    code = ed.code
    n = game.num_players
    my_turn = game.current_player == seat
    legal = game.legal_actions() if my_turn else []
    sizes = game.hand_sizes
    uno = game._uno
    pending_w4 = game._played == WILD_DRAW_FOUR and not game.is_round_over
    return {
        "seat": seat,
        "num_players": n,
        "rules": game.rules.to_dict(),
        "edition": ed.name,
        "colors": list(ed.colors),
        "round": game.round_number,
        "dealer": game.dealer,
        "phase": game.phase.value,
        "current_player": game.current_player,
        "my_turn": my_turn,
        "legal_actions": [str(a) for a in legal],
        "legal_action_ids": [int(a) for a in legal],
        "hand": [code(k) for k in sorted(game._hands[seat])],
        "drawn_card": game.drawn_card if my_turn else None,
        "top_card": game.top_card,
        "active_color": game.active_color,
        "direction": game.direction,
        "pending_card": game.pending_card,
        "pending_player": game.pending_player,
        "w4_prev_color": ed.colors[game._w4_prev_color] if pending_w4 and game._w4_prev_color >= 0 else None,
        "discard_pile": game.discard_pile,
        "draw_pile_size": len(game._draw),
        "scores": list(game.scores),
        "target_score": game.rules.target_score,
        "hand_sizes": sizes,
        "uno_called": list(uno),
        "opponents": [
            {
                "seat": other,
                "offset": offset,
                "hand_size": sizes[other],
                "score": game.scores[other],
                "uno_called": uno[other],
                "known_cards": game.known_cards(seat, other),
            }
            for offset in range(1, n)
            for other in [(seat + offset) % n]
        ],
        "round_winner": game.round_winner,
        "winners": list(game.winners),
    }
