"""Text rendering of a table from one seat's point of view (no hidden cards), and the narrator.

``render_table(game, seat, since=0)`` draws the table as ``seat`` sees it: the top card and
active color, every seat's hand size, score and UNO call, the observer's own hand, the cards
of others it has seen, its legal actions, and the events from event number ``since`` on in
words, with each edition's flavour line: what is said when its special wild is played, read
from the edition's record (``EDITIONS[name].special.flavour``, the one wording the terminal
game and the web app show too), and King Pig dealing cards face up. Only ``game.view(seat)``
and ``game.events(seat)`` are read, so nothing hidden from the seat appears.

``Narrator`` tells events in words from one seat's point of view (``"You draw R1 G2 (Draw
Two)"``, ``"Player 2 draws 2 cards (Draw Two)"``, ``"Player 1 shows you their hand: B2"``);
``render_table`` and the terminal game (``uno_app.terminal``) both use it, so an event reads
the same everywhere. ``narrator.tell_game(game, since)`` tells a game's events from event
number ``since`` on (a cursor: pass ``game.log_length`` next time), reading only the events
it tells and up to ``CONTEXT_EVENTS`` before them, so it costs what is new and follows the
game's bounded log (events dropped from it are not told). A line is a list of parts: plain text, or ``(text, kind)`` where kind is
``"card"`` (a card code), ``"color"`` (a color name), ``"flavour"`` (an edition's line) or
``"strong"`` (a headline), so a terminal can style them; ``plain(line)`` joins the text.

>>> from uno_env.core import Game, Rules
>>> game = Game(Rules(num_players=3), seed=1)
>>> narrator = Narrator(game.edition, seat=0)
>>> [plain(line) for line in narrator.lines(game.events(0))]
['-- Round 1: you deal seven cards each --', 'The first card is B8']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .core.cards import KIND_COLOR, WILD

if TYPE_CHECKING:
    from .core.cards import Edition
    from .core.game import Game

__all__ = ["CONTEXT_EVENTS", "DRAW_REASON_TEXT", "MAX_EVENT_LINES", "Line", "Narrator", "Part", "plain", "render_table"]

MAX_EVENT_LINES = 14
# Events before the first one told that tell_game reads for context: the color a King Pig deal
# stops on and the card an "accept" accepts. Fewer events than this ever separate them from what
# they explain (a deal is at most a deck of 112 cards, an accept follows its card's UNO calls,
# catches and color), so the lines are those the whole log gives.
CONTEXT_EVENTS = 256

DRAW_REASON_TEXT = {
    "turn": "", "draw_two": " (Draw Two)", "draw_four": " (Wild Draw Four)",
    "challenge_guilty": " (caught bluffing)", "challenge_innocent": " (lost the challenge)",
    "uno_penalty": " (UNO penalty)", "greyskull": " (by the power of Greyskull)",
    "start_draw_two": " (first card Draw Two)",
}

Part = str | tuple[str, str]  # plain text, or (text, kind): kind is "card", "color", "flavour" or "strong"
Line = list[Part]


def plain(line: Sequence[Part]) -> str:
    """A narrated line as plain text."""
    return "".join(part if isinstance(part, str) else part[0] for part in line)


def _cards(codes: Sequence[str]) -> Line:
    parts: Line = []
    for i, code in enumerate(codes):
        if i:
            parts.append(" ")
        parts.append((code, "card"))
    return parts


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass
class Narrator:
    """Tells a seat's events in words, from that seat's point of view.

    ``seat`` is "you"; ``None`` is an onlooker (every seat by name, every card the events
    carry shown). Others are ``"<noun> N"`` (``player 2``). Cards the seat did not see
    (``card`` None in ``game.events(seat)``) are counted, never listed.
    """

    edition: Edition
    seat: int | None
    noun: str = "player"

    def who(self, seat: int | None) -> str:
        """``you``, ``player N`` or ``nobody``."""
        if seat is None:
            return "nobody"
        return "you" if seat == self.seat else f"{self.noun} {seat}"

    def subject(self, seat: int | None, base: str, third: str | None = None) -> str:
        """The start of a sentence: ``You play`` or ``Player 1 plays``."""
        verb = base if seat == self.seat and seat is not None else (third or base + "s")
        return _capital(f"{self.who(seat)} {verb}")

    def lines(self, events: Sequence[Mapping[str, Any]], start: int = 0) -> list[Line]:
        """The lines telling ``events[start:]`` (earlier events only set the context)."""
        return [line for _, line in self.tell(events, start)]

    def tell_game(self, game: Game, since: int = 0) -> list[tuple[str, Line]]:
        """``tell`` what this seat may see of ``game``'s events from event number ``since`` on.

        ``since`` counts events as ``game.log_length`` does (pass that value on the next call
        to tell only what is new); events before it are read for context only, at most
        ``CONTEXT_EVENTS`` of them.
        """
        events = game.events(self.seat, since=max(0, since - CONTEXT_EVENTS))
        first = game.log_length - len(events)  # the event number of events[0]
        return self.tell(events, max(0, since - first))

    def tell(self, events: Sequence[Mapping[str, Any]], start: int = 0) -> list[tuple[str, Line]]:
        """``(event type, line)`` for each line telling ``events[start:]``; a run of draws (or of
        shown cards) by one seat is one line."""
        last_color = ""  # the color last named (King Pig's deal stops on it)
        last_played = ""  # the card last played (what an "accept" accepts)
        out: list[tuple[str, Line]] = []
        i = 0
        while i < len(events):
            e = events[i]
            kind = e["type"]
            if kind == "draw" and not (e["reason"] == "greyskull" and e["seat"] != self.seat):
                j = i + 1
                while (j < len(events) and events[j]["type"] == "draw" and events[j]["seat"] == e["seat"]
                       and events[j]["reason"] == e["reason"]):
                    j += 1
                if j > start:
                    out.append((kind, self._draws(events[max(i, start):j])))
                i = j
                continue
            if kind == "show":
                j = i + 1
                while j < len(events) and events[j]["type"] == "show" and events[j]["seat"] == e["seat"]:
                    j += 1
                if j > start:
                    out.append((kind, self._show(events[max(i, start):j])))
                i = j
                continue
            if i >= start:
                line = self._event(e, last_color, last_played)
                if line:
                    out.append((kind, line))
            if kind == "color":
                last_color = e["color"]
            elif kind == "play":
                last_played = e["card"] or ""
            i += 1
        return out

    def _draws(self, draws: Sequence[Mapping[str, Any]]) -> Line:
        seat = draws[0]["seat"]
        reason = DRAW_REASON_TEXT.get(draws[0]["reason"], "")
        codes = [d["card"] for d in draws]
        if all(code is not None for code in codes):
            return [self.subject(seat, "draw") + " ", *_cards(codes), reason]
        n = len(draws)
        return [f"{self.subject(seat, 'draw')} {'a card' if n == 1 else f'{n} cards'}{reason}"]

    def _show(self, shows: Sequence[Mapping[str, Any]]) -> Line:
        """A challenged seat showing its hand to the challenger (rule 5.4); only the challenger sees it."""
        seat, to = shows[0]["seat"], shows[0]["other"]
        codes = [s["card"] for s in shows]
        seen: Line = [": ", *_cards(codes)] if all(code is not None for code in codes) else []
        if to == self.seat:
            return [f"{self.subject(seat, 'show')} you their hand", *seen]
        if seat == self.seat:
            return [f"{self.subject(seat, 'show')} {self.who(to)} your hand", *seen]
        return [f"{self.subject(seat, 'show')} {self.who(to)} their hand", *seen]

    def _event(self, e: Mapping[str, Any], last_color: str, last_played: str) -> Line:
        kind, seat, card, other = e["type"], e["seat"], e["card"], e["other"]
        if kind == "play":
            line: Line = [self.subject(seat, "play") + " ", (card, "card")]
            special = self.edition.special
            if special is not None and card == special.code:
                line += [" - ", (special.flavour, "flavour")]
            return line
        if kind == "give":  # only Urrrhhh gives cards away: its flavour heads each gift
            gift: Line = ["a card"] if card is None else [(card, "card")]
            said: Line = [(self.edition.special.flavour, "flavour"), " "] if self.edition.special else []
            return ["  ", *said, f"{self.subject(seat, 'give')} ", *gift, f" to {self.who(other)}"]
        if kind == "king_pig":
            line = ["  King Pig deals ", (card, "card"), f" to {self.who(seat)}"]
            dealt = self.edition.kind(card)
            if dealt < WILD and self.edition.colors[KIND_COLOR[dealt]] == last_color:
                line.append(f" - {last_color}: the deal stops")
            return line
        if kind == "greyskull":
            return [f"  By the power of Greyskull, {self.who(seat)} {'draw' if seat == self.seat else 'draws'} 3 cards"]
        if kind == "color":
            return [self.subject(seat, "name") + " ", (e["color"], "color")]
        if kind == "dealer":
            deals = "deal" if seat == self.seat else "deals"
            return [(f"-- Round {other}: {self.who(seat)} {deals} seven cards each --", "strong")]
        if kind == "start":
            return ["The first card is ", (card, "card")]
        if kind == "round_end":
            scored = f" and {'score' if seat == self.seat else 'scores'} {other} points" if other else ""
            return [(f"{self.subject(seat, 'go', 'goes')} out{scored}!", "strong")]
        if kind == "game_end":
            return [(f"{self.subject(seat, 'win')} the game!", "strong")]
        direction = "clockwise" if (other or 0) > 0 else "counter-clockwise"
        text = {
            "return_w4": "A Wild Draw Four turned first goes back into the deck",
            "reverse": f"Play reverses: now {direction}",
            "rotate": f"Every hand passes one seat {direction}",
            "reshuffle": "The discard pile is reshuffled into the draw pile",
            "pass": f"{self.subject(seat, 'have', 'has')} to draw but no card is left",
            "keep": f"{self.subject(seat, 'keep')} the drawn card",
            "uno": f"{self.subject(seat, 'call')} UNO!",
            "no_uno": f"{self.subject(seat, 'do', 'does')} not call UNO!",
            "catch": f"{self.subject(seat, 'catch', 'catches')} {self.who(other)} not calling UNO: 2 cards",
            "no_catch": f"{self.subject(seat, 'let')} it pass",
            "challenge": f"{self.subject(seat, 'challenge')} the Wild Draw Four of {self.who(other)}",
            "guilty": f"{self.subject(seat, 'were', 'was')} bluffing!",
            "innocent": f"{self.subject(seat, 'were', 'was')} not bluffing",
            "accept": f"{self.subject(seat, 'accept')} "
                      + ("the Wild Draw Four" if last_played == "W4" else "the draws"),
            "skip": f"{self.subject(seat, 'are', 'is')} skipped",
            "swap": f"{self.subject(seat, 'swap')} hands with {self.who(other)}",
            "eliminated": f"{self.subject(seat, 'are', 'is')} eliminated with {other} points",
        }.get(kind)
        return [text] if text else []  # deal and dealer_draw events are not told


def render_table(game: Game, seat: int, since: int = 0) -> str:
    """The table as ``seat`` sees it, with the events from event number ``since`` on (see ``Game.log_length``)."""
    view = game.view(seat)
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
    said = [plain(line).strip() for _, line in Narrator(game.edition, seat, noun="seat").tell_game(game, since)]
    if said:
        lines.append("What happened:")
        if len(said) > MAX_EVENT_LINES:
            lines.append(f"  ... ({len(said) - MAX_EVENT_LINES} earlier events)")
        lines += ["  " + text for text in said[-MAX_EVENT_LINES:]]
    if view["legal_actions"]:
        lines.append("Your options: " + ", ".join(view["legal_actions"]))
    return "\n".join(lines)


def _headline(game: Game, view: Mapping[str, Any]) -> str:
    title = game.edition.title
    head = f"{title} - {view['num_players']} players - round {view['round']}"
    if view["winners"]:
        who = " and ".join(f"seat {s}" for s in view["winners"])
        return f"{head} - game over: {who} won"
    if view["current_player"] is None:
        return f"{head} - round over: seat {view['round_winner']} went out"
    return f"{head} - seat {view['current_player']} decides ({view['phase']})"
