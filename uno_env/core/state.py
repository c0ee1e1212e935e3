"""The state of a game: everything a position is, as one dataclass with documented fields.

``GameState`` is plain data: the rules in force, every card's place, whose decision it is and
what is pending, the scores, the random generator and the event log. ``Game`` (``game.py``) is
the rules applied to it: ``game.state`` is the live state, ``Game.from_state(state)`` plays on
from one. ``state.public`` (a ``PublicState``) is what every seat sees; the other fields of
``GameState`` are hidden from some seat (the hands, the draw pile's order, the card just
drawn, whether a Wild Draw Four was a bluff) or are the game's own (its generator and log).
Everything else reads the state in one direction: the save format (``saves.py``), the
invariants (``checks.py``), a seat's view (``view.py``), the determinizer
(``determinize.py``), the observation encoder and the search agents.

Cards are *kinds* (``cards.py``: ``color * 13 + rank``, 52 ``W``, 53 ``W4``, 54 the special
wild). An absent seat, card or color is ``-1``. Piles are lists whose *last* element is the
top. ``check_state`` (``checks.py``) states every invariant that ties the fields together.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import IntEnum

from .events import Event
from .rules import Rules


class Phase(IntEnum):
    """Which decision the game waits for: an ``int`` 0..10 whose ``str()`` is its name.

    ``Phase.PLAY_DRAWN.text == str(Phase.PLAY_DRAWN) == "play_drawn"`` (the name used in views
    and saves); ``Phase.from_text("play_drawn")`` reads it back. The int is the slot of the
    observation's one-hot ``phase`` part.
    """

    PLAY = 0  # play a card or draw
    PLAY_DRAWN = 1  # play the card just drawn (if it plays), or keep it
    CHOOSE_COLOR = 2  # name the color after a wild
    GIVE_AWAY = 3  # Urrrhhh: choose the color to give away
    CHALLENGE = 4  # challenge or accept a Wild Draw Four
    UNO = 5  # call UNO or not
    CATCH = 6  # catch a missed UNO call or not
    SWAP = 7  # seven-zero: choose whose hand to swap with
    STACK = 8  # stacking: answer a Draw Two with a Draw Two, or accept the draws
    ROUND_OVER = 9  # no decision: call next_round()
    GAME_OVER = 10  # no decision: the game has ended

    @property
    def text(self) -> str:
        """The phase's name as views and saves spell it (``play_drawn``)."""
        return self.name.lower()

    def __str__(self) -> str:
        return self.name.lower()

    def __format__(self, spec: str) -> str:
        return format(self.name.lower(), spec)

    @classmethod
    def from_text(cls, text: object) -> Phase:
        """The phase named ``text`` (``"play"``, ``"play_drawn"``...); ``ValueError`` if none."""
        if isinstance(text, str) and text.upper() in cls.__members__ and text == text.lower():
            return cls[text.upper()]
        raise ValueError(f"phases are {', '.join(PHASE_TEXTS)}")


PHASE_TEXTS: tuple[str, ...] = tuple(p.text for p in Phase)


@dataclass(slots=True, eq=False)
class PublicState:
    """The part of a position every seat sees (the table, the turn, the scores)."""

    round: int
    """Rounds dealt so far, this one included (1 in the first round)."""
    dealer: int
    """This round's dealer."""
    direction: int
    """+1 clockwise, -1 counter-clockwise."""
    phase: Phase
    """The pending decision."""
    current: int
    """The seat that decides now; kept when the round is over (then it has no meaning)."""
    active_color: int
    """The color slot to match (rule 3.1), -1 while the opening wild's color is pending."""
    discard_pile: list[int]
    """The discard pile; its top is the last element."""
    pending_card: int
    """The card whose effects are being resolved (the top card), -1 if none."""
    pending_player: int
    """Who played ``pending_card``, -1 if none."""
    w4_prev_color: int
    """The color active before the last Wild Draw Four (the one a challenge asks about), -1 if none."""
    catch_index: int
    """In the catch phase: the offered seat is this many seats past the offender; 0 otherwise."""
    penalty: int
    """Cards owed by whoever faces the pending Draw Two / Wild Draw Four (stacked totals)."""
    scores: list[int]
    """Game scores per seat (team scores are held by every member)."""
    round_points: list[int]
    """Points each seat scored in the round just ended (zeros while a round is in play)."""
    round_winner: int
    """The seat that went out, once the round is over; -1 before."""
    winners: list[int]
    """The game's winners, in seat order, once it is over."""
    uno_called: list[bool]
    """Per seat: called UNO and still holds that one card."""
    alive: list[bool]
    """Per seat: still in the game (False only under elimination)."""
    hand_sizes: list[int]
    """Per seat: how many cards its hand holds (kept by the engine, so views need not count)."""
    drew_on: list[list[int]]
    """Per seat, ``DREW_ON_SIZE`` (17) counts of public draw evidence: entry ``j < 4`` for color
    slot ``j``, entry ``4 + r`` for rank ``r``. Each counts the seat's cards that were already in
    its hand when it last made a turn draw (rule 3.4) while that color was active, or while a card
    of that rank was on top, less the cards that have left the hand since (a card played straight
    after being drawn is not one of them). A turn draw is evidence, not proof: a seat may draw
    holding a playable card. All 0 at each deal; under seven-zero a row moves with its hand."""

    def copy(self) -> PublicState:
        """An independent copy."""
        return PublicState(
            round=self.round, dealer=self.dealer, direction=self.direction, phase=self.phase,
            current=self.current, active_color=self.active_color, discard_pile=list(self.discard_pile),
            pending_card=self.pending_card, pending_player=self.pending_player, w4_prev_color=self.w4_prev_color,
            catch_index=self.catch_index, penalty=self.penalty, scores=list(self.scores),
            round_points=list(self.round_points), round_winner=self.round_winner, winners=list(self.winners),
            uno_called=list(self.uno_called), alive=list(self.alive), hand_sizes=list(self.hand_sizes),
            drew_on=[list(row) for row in self.drew_on],
        )


@dataclass(slots=True, eq=False)
class GameState:
    """Everything a position is: the rules, the public table and what is hidden.

    Read the fields freely. Change a state only through ``Game.step`` / ``Game.next_round``,
    or build one by hand and hand it to ``Game.from_state`` (which checks it). Per-seat lists
    are indexed by seat ``0..n-1``.
    """

    rules: Rules
    """The rule options (edition, table size, variants)."""
    public: PublicState
    """What every seat sees."""
    hands: list[list[int]]
    """Each seat's cards (kinds), in the order they came; each seat sees only its own."""
    draw_pile: list[int]
    """The draw pile, face down; its top is the *last* element (its size is public)."""
    known: list[dict[int, list[int]]]
    """``known[target][observer]``: cards of ``target``'s hand that ``observer`` has seen there
    (Urrrhhh gifts, King Pig deals, a hand shown in a challenge, hands passed under seven-zero)."""
    drawn_card: int
    """The card just drawn, in the ``play_drawn`` phase (seen by its drawer only); -1 otherwise."""
    w4_guilty: bool
    """Whether the last Wild Draw Four's player held the active color (a bluff, rule 5.4),
    known to that player only until a challenge shows it."""
    rng: random.Random
    """The game's own generator: reshuffles and later deals."""
    log: list[Event]
    """The kept events, oldest first (see ``events.py``; each names who saw its card)."""
    log_start: int = 0
    """How many earlier events were dropped from ``log`` (event ``i`` of the game is
    ``log[i - log_start]``)."""

    @property
    def num_players(self) -> int:
        """The table size."""
        return self.rules.num_players

    def copy(self) -> GameState:
        """An independent deep copy (random generator state included)."""
        rng = random.Random()
        rng.setstate(self.rng.getstate())
        return GameState(
            rules=self.rules, public=self.public.copy(), hands=[list(h) for h in self.hands],
            draw_pile=list(self.draw_pile), known=[{o: list(c) for o, c in k.items()} for k in self.known],
            drawn_card=self.drawn_card, w4_guilty=self.w4_guilty, rng=rng, log=list(self.log),
            log_start=self.log_start,
        )
