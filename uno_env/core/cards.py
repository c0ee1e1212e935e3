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

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import CardCodeError, DeckError

NUM_COLORS = 4
RANKS_PER_COLOR = 13
SKIP, REVERSE, DRAW_TWO = 10, 11, 12
WILD, WILD_DRAW_FOUR, SPECIAL_WILD = 52, 53, 54
NUM_KINDS = 55
HAND_SIZE = 7

RANK_SYMBOLS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "D")

# Per kind: its color slot (-1 for wild-type cards) and its rank (-1 for wild-type cards).
KIND_COLOR: tuple[int, ...] = tuple(k // RANKS_PER_COLOR if k < WILD else -1 for k in range(NUM_KINDS))
KIND_RANK: tuple[int, ...] = tuple(k % RANKS_PER_COLOR if k < WILD else -1 for k in range(NUM_KINDS))


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
    special_code: str | None
    special_name: str | None
    symbol_value: int = 20

    @property
    def deck_size(self) -> int:
        """Number of cards in a full deck."""
        return 108 + (4 if self.special_code else 0)

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
                f"{code!r} is not a card of edition {self.name!r}; cards are a color letter "
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
        try:
            return self.colors.index(name.strip().lower())
        except ValueError:
            return -1


_CODE_TABLES: dict[str, dict[str, int]] = {}

EDITIONS: dict[str, Edition] = {
    ed.name: ed
    for ed in (
        Edition("classic", "UNO", ("red", "yellow", "green", "blue"), "RYGB", None, None),
        Edition(
            "monster_high", "UNO Monster High", ("blue", "green", "pink", "yellow"), "BGPY",
            "WU", 'Creeperific "Urrrhhh"',
        ),
        Edition(
            "angry_birds", "UNO Angry Birds", ("red", "yellow", "green", "blue"), "RYGB",
            "WK", "King Pig", symbol_value=50,
        ),
        Edition(
            "masters_of_the_universe", "UNO Masters of the Universe", ("blue", "red", "green", "purple"),
            "BRGP", "WG", "Wild Powers of Greyskull",
        ),
    )
}


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
    ed = EDITIONS[edition] if isinstance(edition, str) else edition
    pool = ed.deck()

    def take(code: str) -> int:
        kind = ed.kind(code)
        if kind not in pool:
            raise DeckError(f"stacked deck asks for more {code} cards than the deck holds")
        pool.remove(kind)
        return kind

    hands = hands or {}
    wanted = {seat: [take(c) for c in cards] for seat, cards in hands.items()}
    for seat, cards in wanted.items():
        if not 0 <= seat < num_players or len(cards) > HAND_SIZE:
            raise DeckError(f"stacked hand for seat {seat}: seats are 0..{num_players - 1}, at most 7 cards")
    head = [take(c) for c in (start or [])]
    tail = [take(c) for c in (then or [])]
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
