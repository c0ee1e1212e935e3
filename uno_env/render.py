"""Text rendering of a table from one seat's point of view (no hidden cards).

``render_table(game, seat, since=0)`` draws the table as ``seat`` sees it: the top card and
active color, every seat's hand size, score and UNO call, the observer's own hand, the cards
of others it has seen, its legal actions, and the events since log index ``since`` in words,
with each edition's flavour: Monster High's Creeperific *"Urrrhhh!"*, Masters of the
Universe's *"By the power of Greyskull!"* and Angry Birds' King Pig dealing cards face up.
Only ``game.view(seat)`` and ``game.events(seat)`` are read, so nothing hidden from the seat
appears.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.game import Game

MAX_EVENT_LINES = 14

FLAVOUR = {
    "WU": '"Urrrhhh!"',
    "WG": '"By the power of Greyskull!"',
    "WK": "King Pig is dealing!",
}


def render_table(game: Game, seat: int, since: int = 0) -> str:
    """The table as ``seat`` sees it, with the events from log index ``since`` on."""
    view = game.view(seat)
    ed = game.edition
    lines = [_headline(game, view)]
    color = view["active_color"] or "(to be named)"
    direction = "clockwise" if view["direction"] > 0 else "counter-clockwise"
    lines.append(
        f"Top card: {view['top_card']}   color: {color}   direction: {direction}   "
        f"draw pile: {view['draw_pile_size']}" + (f"   penalty: {view['penalty']}" if view.get("penalty") else "")
    )
    lines.append(f"Scores to {view['target_score']}:")
    for other in range(view["num_players"]):
        marks = []
        if other == seat:
            marks.append("you")
        if other == view["dealer"]:
            marks.append("dealer")
        if other == view["current_player"]:
            marks.append("to act")
        if view.get("eliminated") and view["eliminated"][other]:
            marks.append("eliminated")
        uno = "  UNO!" if view["uno_called"][other] else ""
        tag = f" ({', '.join(marks)})" if marks else ""
        lines.append(
            f"  seat {other}{tag}: {view['hand_sizes'][other]} cards, {view['scores'][other]} points{uno}"
        )
    lines.append(f"Your hand (seat {seat}): {' '.join(view['hand']) or '-'}")
    for opp in view["opponents"]:
        if opp["known_cards"]:
            lines.append(f"  you know seat {opp['seat']} holds: {' '.join(opp['known_cards'])}")
    if view["drawn_card"]:
        lines.append(f"You drew {view['drawn_card']}.")
    if view["w4_prev_color"]:
        lines.append(f"The color before the Wild Draw Four was {view['w4_prev_color']}.")
    events = game.events(seat)[since:]
    said = [text for text in (_say(e, ed.special_code) for e in events) if text]
    if said:
        lines.append("What happened:")
        if len(said) > MAX_EVENT_LINES:
            lines.append(f"  ... ({len(said) - MAX_EVENT_LINES} earlier events)")
        lines += ["  " + text for text in said[-MAX_EVENT_LINES:]]
    if view["legal_actions"]:
        lines.append("Your options: " + ", ".join(view["legal_actions"]))
    return "\n".join(lines)


def _headline(game: Game, view: dict[str, Any]) -> str:
    title = game.edition.title
    head = f"{title} - {view['num_players']} players - round {view['round']}"
    if view["winners"]:
        who = " and ".join(f"seat {s}" for s in view["winners"])
        return f"{head} - game over: {who} won"
    if view["current_player"] is None:
        return f"{head} - round over: seat {view['round_winner']} went out"
    return f"{head} - seat {view['current_player']} decides ({view['phase']})"


def _say(event: dict[str, Any], special: str | None) -> str:
    kind = event["type"]
    seat = event["seat"]
    card = event["card"]
    other = event["other"]
    if kind == "play":
        text = f"seat {seat} plays {card}"
        if card in FLAVOUR:
            text += f" - {FLAVOUR[card]}"
        return text
    if kind == "draw":
        return f"seat {seat} draws {card or 'a card'}" + (f" ({event['reason']})" if event["reason"] != "turn" else "")
    if kind == "give":
        return f"seat {seat} gives {card or 'a card'} to seat {other}"
    if kind == "king_pig":
        return f"King Pig deals {card} to seat {seat}"
    if kind == "greyskull":
        return f"seat {seat} must draw 3 by the power of Greyskull"
    if kind == "color":
        return f"seat {seat} names {event['color']}"
    simple = {
        "start": f"the first card is {card}",
        "pass": f"seat {seat} cannot draw: nothing left",
        "keep": f"seat {seat} keeps the drawn card",
        "uno": f"seat {seat} calls UNO!",
        "no_uno": f"seat {seat} does not call UNO",
        "catch": f"seat {seat} catches seat {other}: 2 cards",
        "challenge": f"seat {seat} challenges seat {other}'s Wild Draw Four",
        "guilty": f"seat {seat} was bluffing",
        "innocent": f"seat {seat} was not bluffing",
        "accept": f"seat {seat} accepts the draw",
        "skip": f"seat {seat} is skipped",
        "reverse": "play reverses direction",
        "swap": f"seat {seat} swaps hands with seat {other}",
        "rotate": f"seat {seat} passes every hand along",
        "eliminated": f"seat {seat} is eliminated with {other} points",
        "round_end": f"seat {seat} goes out" + (f" and scores {other}" if other else ""),
        "game_end": f"seat {seat} wins the game",
        "reshuffle": "the discard pile is reshuffled into the draw pile",
        "dealer": f"round {other}: seat {seat} deals",
    }
    return simple.get(kind, "")
