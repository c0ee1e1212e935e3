"""The action layout: one fixed table of action ids shared by every edition and table size.

======  ==================  =====================================================
id      text                meaning
======  ==================  =====================================================
0-51    ``play <code>``     play a colored card, id ``color * 13 + rank``
52      ``play W``          play a Wild
53      ``play W4``         play a Wild Draw Four (legal or, where allowed, a bluff)
54      ``play WU|WK|WG``   play the edition's special wild
55      ``draw``            draw one card instead of playing
56      ``keep``            keep the card just drawn (forced when it does not play)
57-60   ``color <name>``    name the active color after a wild (slot 0..3)
61-64   ``give <name>``     Urrrhhh: give away every card of that color (slot 0..3)
65      ``challenge``       challenge the Wild Draw Four just played on you
66      ``accept``          accept it: draw 4 and lose the turn
67      ``uno``             call UNO with one card left
68      ``no-uno``          do not call
69      ``catch``           catch the player who did not call UNO
70      ``no-catch``        let it pass
71-79   ``swap +k``         seven-zero house rule: swap hands with the seat k places
                            clockwise (k = 1..9)
======  ==================  =====================================================

An :class:`Action` is an ``int`` (its id) whose ``str()`` is its text form in the edition's
card letters and color names; ``parse_action`` reads the text back.
"""

from __future__ import annotations

from .cards import NUM_COLORS, SPECIAL_WILD, WILD, Edition
from .errors import ActionTextError

ACTION_LAYOUT_VERSION = 1

NUM_PLAY_ACTIONS = 55
DRAW = 55
KEEP = 56
COLOR_BASE = 57
GIVE_BASE = 61
CHALLENGE = 65
ACCEPT = 66
UNO = 67
NO_UNO = 68
CATCH = 69
NO_CATCH = 70
SWAP_BASE = 70  # swap +k is id SWAP_BASE + k, k = 1..9
NUM_ACTIONS = 80

_SIMPLE = {"draw": DRAW, "keep": KEEP, "challenge": CHALLENGE, "accept": ACCEPT, "uno": UNO,
           "no-uno": NO_UNO, "catch": CATCH, "no-catch": NO_CATCH}
_SIMPLE_TEXT = {v: k for k, v in _SIMPLE.items()}


class Action(int):
    """An action id whose text form (``str(action)``) is ``play R7``, ``draw``, ``color blue``..."""

    text: str

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Action({int(self)}, {self.text!r})"


def _text(edition: Edition, action_id: int) -> str:
    if action_id < NUM_PLAY_ACTIONS:
        if action_id == SPECIAL_WILD and not edition.special_code:
            return "play -"  # no special wild in this edition; never legal
        return "play " + edition.code(action_id)
    if COLOR_BASE <= action_id < COLOR_BASE + NUM_COLORS:
        return "color " + edition.colors[action_id - COLOR_BASE]
    if GIVE_BASE <= action_id < GIVE_BASE + NUM_COLORS:
        return "give " + edition.colors[action_id - GIVE_BASE]
    if action_id > SWAP_BASE:
        return f"swap +{action_id - SWAP_BASE}"
    return _SIMPLE_TEXT[action_id]


_TABLES: dict[str, tuple[Action, ...]] = {}


def action_table(edition: Edition) -> tuple[Action, ...]:
    """The edition's ``NUM_ACTIONS`` Action objects, indexed by id."""
    table = _TABLES.get(edition.name)
    if table is None:
        actions = []
        for i in range(NUM_ACTIONS):
            a = Action(i)
            a.text = _text(edition, i)
            actions.append(a)
        table = tuple(actions)
        _TABLES[edition.name] = table
    return table


def action_texts(edition: Edition) -> list[str]:
    """The text of every action id, in id order (the documented id <-> text table)."""
    return [a.text for a in action_table(edition)]


def parse_action(edition: Edition, text: str) -> Action:
    """Read an action's text form (case and extra spaces ignored); raises ``ActionTextError``."""
    if not isinstance(text, str):
        raise ActionTextError(f"action text must be a string, got {type(text).__name__}")
    if len(text) > 100:
        raise ActionTextError(f"cannot read an action text of {len(text)} characters; actions are short, e.g. 'draw'")
    words = text.strip().lower().replace("_", "-").split()
    table = action_table(edition)
    if len(words) == 1 and words[0] in _SIMPLE:
        return table[_SIMPLE[words[0]]]
    if len(words) == 2:
        verb, arg = words
        if verb == "play":
            try:
                kind = edition.kind(arg)
            except ValueError as err:
                raise ActionTextError(f"cannot read {text!r}: {err}") from None
            return table[kind]
        if verb in ("color", "give"):
            slot = edition.color_index(arg)
            if slot < 0:
                raise ActionTextError(
                    f"cannot read {text!r}: {edition.name} colors are {', '.join(edition.colors)}"
                )
            return table[(COLOR_BASE if verb == "color" else GIVE_BASE) + slot]
        if verb == "swap":
            offset = arg.lstrip("+")
            if offset in ("1", "2", "3", "4", "5", "6", "7", "8", "9"):
                return table[SWAP_BASE + int(offset)]
            raise ActionTextError(f"cannot read {text!r}: swap takes a seat offset +1..+9 (seats clockwise)")
    raise ActionTextError(
        f"cannot read {text!r}; actions are: play <card> (e.g. play {edition.letters[0]}7, play W4), "
        f"draw, keep, color <{'|'.join(edition.colors)}>, give <color>, challenge, accept, "
        "uno, no-uno, catch, no-catch, swap +<1-9>"
    )


assert WILD < NUM_PLAY_ACTIONS
