"""HumanAgent: a person at the terminal types an action's text or its id.

It prints the seat's view (hand, top card, active color, opponents' hand sizes and the
legal actions with their ids), then reads a line: an action id (``55``) or an action's
text (``play R7``, ``draw``, ``color blue``; case and extra spaces ignored; a bare card
code like ``R7`` means ``play R7``). Anything not legal now gets a clear message and the
prompt again. ``input_fn`` and ``output_fn`` are injectable (tests pass scripted ones).
When the input ends (stdin closed, Ctrl-D) at a decision, ``act`` raises ``InputEnded``: the seat
cannot act, and ``uno-env`` ends the game with a message instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from uno_env.core.actions import parse_action
from uno_env.core.cards import EDITIONS
from uno_env.core.errors import UnoError

from .base import Agent, legal_action_ids


class InputEnded(EOFError):
    """The person's input ended (stdin closed) when it was their decision: the seat cannot act."""


class HumanAgent(Agent):
    """Asks a person for each decision."""

    name = "human"

    def __init__(self, input_fn: Callable[[str], str] = input, output_fn: Callable[[str], None] = print,
                 show_state: bool = True) -> None:
        self.input_fn = input_fn
        self.output_fn = output_fn
        self.show_state = show_state

    def describe(self, info: Mapping[str, Any]) -> str:
        """The seat's view as a few lines of text."""
        ids = legal_action_ids(None, info)
        others = ", ".join(
            f"seat {o['seat']}: {o['hand_size']} card{'s' if o['hand_size'] != 1 else ''}"
            + (" (UNO)" if o["uno_called"] else "")
            + (f", you know {' '.join(o['known_cards'])}" if o["known_cards"] else "")
            for o in info["opponents"]
        )
        lines = [
            f"--- seat {info['seat']}, round {info['round']}, phase {info['phase']} ---",
            f"top card {info['top_card']}, active color {info['active_color']}, "
            f"direction {'clockwise' if info['direction'] == 1 else 'counter-clockwise'}, "
            f"draw pile {info['draw_pile_size']}",
            f"opponents: {others}",
            f"your hand: {' '.join(info['hand'])}",
        ]
        if info.get("drawn_card"):
            lines.append(f"you drew {info['drawn_card']}")
        if info.get("w4_prev_color"):
            lines.append(f"seat {info['pending_player']} played W4 on {info['w4_prev_color']}")
        lines.append("legal: " + ", ".join(f"[{i}] {t}" for i, t in zip(ids, info["legal_actions"], strict=True)))
        return "\n".join(lines)

    def parse(self, text: str, info: Mapping[str, Any]) -> int:
        """The legal action id a line of input names; raises ValueError with a clear message."""
        ids = legal_action_ids(None, info)
        words = text.strip()
        if not words:
            raise ValueError("empty input")
        if words.isdigit():
            action = int(words)
        else:
            edition = EDITIONS[info["edition"]]
            if len(words.split()) == 1 and words.lower() not in (
                "draw", "keep", "challenge", "accept", "uno", "no-uno", "catch", "no-catch", "no_uno", "no_catch"
            ):
                words = "play " + words
            try:
                action = int(parse_action(edition, words))
            except UnoError as err:
                raise ValueError(str(err)) from None
        if action not in ids:
            raise ValueError(f"{text.strip()!r} is not legal now")
        return action

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """Prompt until the person names a legal action."""
        if self.show_state:
            self.output_fn(self.describe(info))
        legal = ", ".join(f"{i} ({t})" for i, t in zip(info["legal_action_ids"], info["legal_actions"], strict=True))
        while True:
            try:
                line = self.input_fn("your action> ")
            except EOFError:
                raise InputEnded(f"the input of the human at seat {info['seat']} ended (stdin closed) "
                                 "at their decision") from None
            try:
                return self.parse(line, info)
            except ValueError as err:
                self.output_fn(f"{err}; type an action id or its text, one of: {legal}")

    def __repr__(self) -> str:
        return "HumanAgent()"
