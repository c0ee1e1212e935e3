"""Cards and editions (RULES.md sections 1 and 6.2).

A card is identified inside the engine by its *kind*, an int in ``0..54``:

* ``color * 13 + rank`` for colored cards, color slot ``0..3``, rank ``0..9`` for numbers,
  ``10`` Skip, ``11`` Reverse, ``12`` Draw Two;
* ``52`` Wild (``W``), ``53`` Wild Draw Four (``W4``), ``54`` the edition's special wild
  (``WU``, ``WK`` or ``WG``).

Copies of a kind are interchangeable, so hands and piles are lists of kinds. Outside the
engine cards are spelled as codes (``R7``, ``GS``, ``W4``) in the edition's color letters.
An edition is data: its color names and letters, its special wild, and its card values.
"""

from __future__ import annotations

import operator
import reprlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, SupportsIndex, cast

from .errors import CardCodeError, DeckError

NUM_COLORS = 4
RANKS_PER_COLOR = 13
SKIP, REVERSE, DRAW_TWO = 10, 11, 12
WILD, WILD_DRAW_FOUR, SPECIAL_WILD = 52, 53, 54
NUM_KINDS = 55
HAND_SIZE = 7

# Table sizes (rule 1.1): the one place the 2..10 bound is written.
MIN_PLAYERS = 2
MAX_PLAYERS = 10

RANK_SYMBOLS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "D")

# Per kind: its color slot (-1 for wild-type cards) and its rank (-1 for wild-type cards).
KIND_COLOR: tuple[int, ...] = tuple(k // RANKS_PER_COLOR if k < WILD else -1 for k in range(NUM_KINDS))
KIND_RANK: tuple[int, ...] = tuple(k % RANKS_PER_COLOR if k < WILD else -1 for k in range(NUM_KINDS))


# The public draw evidence kept per seat (``PublicState.drew_on``): one count per color slot, then
# one per rank.
DREW_ON_SIZE = NUM_COLORS + RANKS_PER_COLOR

NO_RANK = 13  # the "rank" of a wild on top of the discard pile: only its color matches

# PLAYABLE[active_color][top_rank][kind]: whether a card may be played on that top card (rule
# 3.2; the Wild Draw Four's bluff rule 3.3 is applied by the game). top_rank is NO_RANK for a wild.
PLAYABLE: tuple[tuple[tuple[bool, ...], ...], ...] = tuple(
    tuple(
        tuple(k >= WILD or KIND_COLOR[k] == color or KIND_RANK[k] == top_rank for k in range(NUM_KINDS))
        for top_rank in range(NO_RANK + 1)
    )
    for color in range(NUM_COLORS)
)


def top_rank(top_card: int) -> int:
    """The rank a card on top of the discard pile offers to match (``NO_RANK`` for a wild)."""
    return KIND_RANK[top_card] if top_card < WILD else NO_RANK


def playable_kinds(active_color: int, top_card: int) -> tuple[bool, ...]:
    """Per kind: whether it may be played on ``top_card`` with ``active_color`` active (rule 3.2;
    the Wild Draw Four's bluff rule 3.3 is not applied here)."""
    return PLAYABLE[active_color][top_rank(top_card)]


def is_table_size(value: object) -> bool:
    """Whether ``value`` is a table size the rules allow: an int from ``MIN_PLAYERS`` to ``MAX_PLAYERS``."""
    return isinstance(value, int) and not isinstance(value, bool) and MIN_PLAYERS <= value <= MAX_PLAYERS


def integer_scalar(value: object) -> int | None:
    """``value`` as an int when it is one integer: a Python int or an integer scalar of another library
    (numpy's ``int64``, a 0-d integer array or tensor). None for a bool (of any library), a float, an
    array of any other shape (``np.array([55])``, ``torch.tensor([55])``) and anything else: one rule for
    every library's numbers, wherever an id, a seat or a count is read."""
    if isinstance(value, int):
        return None if isinstance(value, bool) else int(value)
    if (isinstance(value, float) or not hasattr(value, "__index__") or getattr(value, "ndim", 0) != 0
            or str(getattr(value, "dtype", "")) in ("bool", "torch.bool")):
        return None
    try:
        return operator.index(cast(SupportsIndex, value))
    except TypeError:  # numpy and torch raise it for float arrays
        return None


def short_repr(value: object) -> str:
    """``repr`` cut short (depth and length), safe on huge or deeply nested input; for error messages."""
    return _SHORT.repr(value)


def short_list(values: Sequence[object], most: int = 5) -> str:
    """The first ``most`` values (strings as they are, each cut short), then how many more: for error
    messages naming the unknown keys of untrusted data, which may number millions."""
    shown = [v[:40] if isinstance(v, str) else short_repr(v) for v in values[:most]]
    more = len(values) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


_SHORT = reprlib.Repr()
_SHORT.maxlevel = 3
_SHORT.maxstring = 40
_SHORT.maxother = 40
_SHORT.maxlong = 40

SpecialEffect = Literal["give_away", "king_pig_deal", "greyskull_draws"]


@dataclass(frozen=True)
class SpecialWild:
    """One edition's special wild (RULES.md section 4): its code, what it does, how it is said.

    ``effect`` names what it does: ``give_away`` (Urrrhhh, 4.5: before naming the color the
    player gives away every card of one color, a decision of its own), ``king_pig_deal`` (4.6:
    after the color is named, cards are dealt face up from the left until one of that color
    comes) or ``greyskull_draws`` (4.7: after the color, every other seat draws 3).
    ``color_when_last``: the player names a color even when it was their last card (King Pig,
    rule 5.5, since its deal may give them cards back); the other special wilds go out at once.
    ``flavour``: what the player says when playing it, in the printed sheets' words (the
    narrator prints it).
    """

    code: str
    name: str
    rule: str
    effect: SpecialEffect
    color_when_last: bool
    summary: str
    flavour: str

    @property
    def gives_away(self) -> bool:
        """Whether playing it asks which color to give away first (Urrrhhh)."""
        return self.effect == "give_away"


URRRHHH = SpecialWild(
    code="WU", name='Creeperific "Urrrhhh"', rule="4.5", effect="give_away", color_when_last=False,
    summary="give away every card of one color, one to each other seat clockwise, then name the color",
    flavour='"Urrrhhh!"',
)
KING_PIG = SpecialWild(
    code="WK", name="King Pig", rule="4.6", effect="king_pig_deal", color_when_last=True,
    summary="name the color; cards are dealt face up from the left until one of that color comes",
    flavour="King Pig deals!",
)
GREYSKULL = SpecialWild(
    code="WG", name="Wild Powers of Greyskull", rule="4.7", effect="greyskull_draws", color_when_last=False,
    summary="name the color; every other seat draws 3",
    flavour='"By the power of Greyskull... I have the power!"',
)


def is_wild(kind: int) -> bool:
    """Whether a kind is wild-type (``W``, ``W4`` or the special wild)."""
    return kind >= WILD


@dataclass(frozen=True)
class Edition:
    """One edition's data: colors, letters, special wild and card values."""

    name: str
    title: str
    colors: tuple[str, str, str, str]
    letters: str
    special: SpecialWild | None
    symbol_value: int = 20

    @property
    def special_code(self) -> str | None:
        """The special wild's code (``WU``, ``WK``, ``WG``), or None (classic)."""
        return self.special.code if self.special else None

    @property
    def special_name(self) -> str | None:
        """The special wild's name, or None (classic)."""
        return self.special.name if self.special else None

    @property
    def deck_size(self) -> int:
        """Number of cards in a full deck."""
        return 108 + (4 if self.special else 0)

    @property
    def deck_points(self) -> int:
        """Points of every card of the deck together: no round can score more (rule 6.2)."""
        return sum(self.card_value(k) for k in self.deck())

    def card_value(self, kind: int) -> int:
        """Points a card scores when left in a hand (rule 6.2)."""
        if kind >= WILD:
            return 50
        rank = kind % RANKS_PER_COLOR
        return rank if rank <= 9 else self.symbol_value

    def code(self, kind: int) -> str:
        """The card code of a kind, in this edition's letters."""
        if kind < WILD:
            return self.letters[kind // RANKS_PER_COLOR] + RANK_SYMBOLS[kind % RANKS_PER_COLOR]
        if kind == WILD:
            return "W"
        if kind == WILD_DRAW_FOUR:
            return "W4"
        if kind == SPECIAL_WILD and self.special_code:
            return self.special_code
        raise CardCodeError(f"kind {kind} is not a card of edition {self.name!r}")

    def all_codes(self) -> list[str]:
        """Every card code of the edition, one per kind, in kind order."""
        return [self.code(k) for k in range(NUM_KINDS) if k != SPECIAL_WILD or self.special_code]

    def kind(self, code: str) -> int:
        """The kind of a card code (case-insensitive); raises ``CardCodeError``."""
        kind = self._kinds.get(code.strip().upper()) if isinstance(code, str) else None
        if kind is None:
            raise CardCodeError(
                f"{short_repr(code)} is not a card of edition {self.name!r}; cards are a color letter "
                f"({', '.join(self.letters)}) then 0-9, S, R or D, or "
                + ", ".join(c for c in ("W", "W4", self.special_code) if c)
            )
        return kind

    @property
    def _kinds(self) -> dict[str, int]:
        table = _CODE_TABLES.get(self.name)
        if table is None:
            table = {self.code(k): k for k in range(NUM_KINDS) if k != SPECIAL_WILD or self.special_code}
            _CODE_TABLES[self.name] = table
        return table

    def deck(self) -> list[int]:
        """A full deck as kinds, in canonical (kind) order (rule 1.3)."""
        cards: list[int] = []
        for color in range(NUM_COLORS):
            base = color * RANKS_PER_COLOR
            cards.append(base)
            for rank in range(1, RANKS_PER_COLOR):
                cards += [base + rank, base + rank]
        cards += [WILD] * 4 + [WILD_DRAW_FOUR] * 4
        if self.special_code:
            cards += [SPECIAL_WILD] * 4
        return cards

    def color_index(self, name: str) -> int:
        """The slot of a color name (case-insensitive), or -1."""
        if not isinstance(name, str):
            return -1
        try:
            return self.colors.index(name.strip().lower())
        except ValueError:
            return -1


_CODE_TABLES: dict[str, dict[str, int]] = {}

EDITIONS: dict[str, Edition] = {
    ed.name: ed
    for ed in (
        Edition("classic", "UNO", ("red", "yellow", "green", "blue"), "RYGB", None),
        Edition("monster_high", "UNO Monster High", ("blue", "green", "pink", "yellow"), "BGPY", URRRHHH),
        Edition("angry_birds", "UNO Angry Birds", ("red", "yellow", "green", "blue"), "RYGB", KING_PIG,
                symbol_value=50),
        Edition("masters_of_the_universe", "UNO Masters of the Universe", ("blue", "red", "green", "purple"),
                "BRGP", GREYSKULL),
    )
}
MAX_DECK_SIZE = max(ed.deck_size for ed in EDITIONS.values())  # 112


def deck_from_codes(edition: Edition, codes: Sequence[str]) -> list[int]:
    """Parse a stacked deck (codes, top first); it must be exactly one full deck."""
    if not isinstance(codes, (list, tuple)):
        raise DeckError(f"a deck is a list of card codes, top first; got {type(codes).__name__}")
    kinds = [edition.kind(c) for c in codes]
    if sorted(kinds) != edition.deck():
        have: dict[int, int] = {}
        for k in kinds:
            have[k] = have.get(k, 0) + 1
        want: dict[int, int] = {}
        for k in edition.deck():
            want[k] = want.get(k, 0) + 1
        diffs = [
            f"{edition.code(k)} x{have.get(k, 0)} (want {want.get(k, 0)})"
            for k in sorted(set(have) | set(want))
            if have.get(k, 0) != want.get(k, 0)
        ]
        raise DeckError(
            f"a deck must hold exactly the {edition.deck_size} cards of {edition.name!r} "
            f"(got {len(kinds)}); wrong counts: {', '.join(diffs[:12])}"
        )
    return kinds


def stacked_deck(
    edition: Edition | str,
    num_players: int,
    dealer: int,
    hands: dict[int, list[str]] | None = None,
    start: list[str] | None = None,
    then: list[str] | None = None,
) -> list[str]:
    """Build a full deck (codes, top first) that deals the given cards.

    ``hands`` maps seats to up to 7 codes each (missing cards are filled from the rest of the
    deck), ``start`` is the card(s) turned for the discard pile (several when ``W4`` cards are
    turned back first), and ``then`` the next cards of the draw pile, top first. The rest of
    the deck follows in canonical order. Meant for tests and bug reports.
    """
    if isinstance(edition, Edition):
        ed = edition
    elif isinstance(edition, str) and edition in EDITIONS:
        ed = EDITIONS[edition]
    else:
        raise DeckError(f"unknown edition {short_repr(edition)}; editions are {', '.join(EDITIONS)}")
    if not is_table_size(num_players):
        raise DeckError(f"num_players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, got {short_repr(num_players)}")
    if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < num_players:
        raise DeckError(f"dealer must be a seat 0..{num_players - 1}, got {short_repr(dealer)}")
    for name, value in (("start", start), ("then", then)):
        if value is not None and not isinstance(value, (list, tuple)):
            raise DeckError(f"{name} must be a list of card codes, got {type(value).__name__}")
    if hands is not None and not isinstance(hands, dict):
        raise DeckError(f"hands must map seats to lists of card codes, got {type(hands).__name__}")
    for seat, seat_codes in (hands or {}).items():
        if (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < num_players
                or not isinstance(seat_codes, (list, tuple)) or len(seat_codes) > HAND_SIZE):
            raise DeckError(f"stacked hand for seat {short_repr(seat)}: seats are 0..{num_players - 1}, "
                            f"each a list of at most {HAND_SIZE} card codes")
    pool = ed.deck()

    def take(code: str) -> int:
        kind = ed.kind(code)
        if kind not in pool:
            raise DeckError(f"stacked deck asks for more {code} cards than the deck holds")
        pool.remove(kind)
        return kind

    wanted = {seat: [take(c) for c in cards] for seat, cards in (hands or {}).items()}
    head = [take(c) for c in (start or [])]
    tail = [take(c) for c in (then or [])]
    if HAND_SIZE * num_players - sum(len(c) for c in wanted.values()) > len(pool):
        raise DeckError("stacked deck: the start and next cards leave too few cards to deal the hands")
    # Fill hands from the non-wild leftovers first so filler cards do not surprise tests.
    filler = sorted(pool, key=lambda k: (k >= WILD, k))
    dealt: list[int] = []
    for i in range(HAND_SIZE):
        for off in range(1, num_players + 1):
            seat = (dealer + off) % num_players
            cards = wanted.get(seat, [])
            if i < len(cards):
                dealt.append(cards[i])
            else:
                card = filler.pop(0)
                pool.remove(card)
                dealt.append(card)
    rest = sorted(pool)
    return [ed.code(k) for k in dealt + head + tail + rest]
