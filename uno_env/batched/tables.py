"""The batched state: one tensor per field of ``uno_env.core.Game``, one row per table.

``Tables`` holds every table's position as tensors on one device. Cards are kinds (``0..54``,
``uno_env.core.cards``) stored as ``int8``; hands and the cards each seat has seen in the others'
hands are counts per kind. ``B`` is the number of tables, ``P`` the ``max_players`` the batch
was built for (tables of fewer seats leave the rest zero).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import torch

from ..core.cards import DREW_ON_SIZE, MAX_DECK_SIZE, NUM_KINDS

MAX_DECK = MAX_DECK_SIZE  # the largest deck (every edition with a special wild: 112), from the core
# Fields fixed when the batch is built (reset(seed=...) alone sets rng_key again, on every row).
RULE_FIELDS = frozenset({"edition", "num_players", "target_score", "uno_auto", "allow_bluff", "lowest", "first_dealer",
                         "teams", "stacking", "seven_zero", "until_playable", "elimination", "rng_key"})


@dataclass
class Tables:
    """Every table's position as tensors (field by field as ``Game``; see the module docstring)."""

    # Per-table rules.
    edition: torch.Tensor
    """(B,) int64: index in ``EDITION_NAMES`` (classic, monster_high, angry_birds, masters_of_the_universe)."""
    num_players: torch.Tensor
    """(B,) int64: seats at the table, 2..P."""
    target_score: torch.Tensor
    """(B,) int64: ``Rules.target_score``."""
    uno_auto: torch.Tensor
    """(B,) bool: ``Rules.uno_call == "auto"``."""
    allow_bluff: torch.Tensor
    """(B,) bool: ``Rules.allow_bluff``."""
    lowest: torch.Tensor
    """(B,) bool: ``Rules.scoring == "lowest"``."""
    first_dealer: torch.Tensor
    """(B,) int64: ``Rules.first_dealer``, -1 when the first dealer is drawn."""
    teams: torch.Tensor
    """(B,) bool: ``Rules.teams`` (7.1)."""
    stacking: torch.Tensor
    """(B,) bool: ``Rules.stacking`` (7.4)."""
    seven_zero: torch.Tensor
    """(B,) bool: ``Rules.seven_zero`` (7.4)."""
    until_playable: torch.Tensor
    """(B,) bool: ``Rules.draw_until_playable`` (7.4)."""
    elimination: torch.Tensor
    """(B,) bool: ``Rules.elimination`` (7.2)."""
    # The game.
    round_number: torch.Tensor
    """(B,) int64: rounds dealt in this game, the current one included."""
    scores: torch.Tensor
    """(B, P) int64: game scores."""
    round_points: torch.Tensor
    """(B, P) int64: what each seat scored in the round just ended (zeros while one is in play)."""
    round_winner: torch.Tensor
    """(B,) int64: the seat that went out, -1 while the round is in play."""
    winners: torch.Tensor
    """(B, P) bool: the game's winners, once it is over."""
    alive: torch.Tensor
    """(B, P) bool: seats still in the game (all the table's seats but those eliminated, 7.2)."""
    # The round.
    dealer: torch.Tensor
    """(B,) int64: this round's dealer."""
    direction: torch.Tensor
    """(B,) int64: +1 clockwise, -1 counter-clockwise."""
    phase: torch.Tensor
    """(B,) int64: the pending decision, an index in ``uno_env.core.Phase`` order."""
    current: torch.Tensor
    """(B,) int64: the seat that decides (kept when the round is over, like ``Game``)."""
    active: torch.Tensor
    """(B,) int64: the active color slot, -1 while the opening wild's color is pending."""
    top: torch.Tensor
    """(B,) int64: the discard pile's top card."""
    played: torch.Tensor
    """(B,) int64: the card whose effects are being resolved, -1 if none."""
    player: torch.Tensor
    """(B,) int64: the seat that played it, -1 if none."""
    drawn: torch.Tensor
    """(B,) int64: the card just drawn (phase play_drawn), -1 otherwise."""
    w4_guilty: torch.Tensor
    """(B,) bool: the pending Wild Draw Four was played holding the previous color."""
    w4_prev: torch.Tensor
    """(B,) int64: the color active before the pending Wild Draw Four, -1 if none."""
    catch_index: torch.Tensor
    """(B,) int64: how far the catch window has gone (0 when none is open)."""
    penalty: torch.Tensor
    """(B,) int64: cards owed by whoever faces the pending Draw Two / Wild Draw Four."""
    hands: torch.Tensor
    """(B, P, 55) int8: each seat's hand, count per kind."""
    known: torch.Tensor
    """(B, P, P, 55) int8: ``known[b, observer, target]``, cards of ``target``'s hand ``observer`` has seen."""
    uno: torch.Tensor
    """(B, P) bool: called UNO and still holds that one card."""
    drew_on: torch.Tensor
    """(B, P, 17) int8: ``PublicState.drew_on``, each seat's public draw evidence (4 counts by color
    slot, then 13 by rank)."""
    draw: torch.Tensor
    """(B, 112) int8: the draw pile, bottom first (entry ``draw_len - 1`` is the top; the rest is unused)."""
    draw_len: torch.Tensor
    """(B,) int64: cards in the draw pile."""
    discard: torch.Tensor
    """(B, 112) int8: the discard pile, bottom first (entry ``discard_len - 1`` is the top card)."""
    discard_len: torch.Tensor
    """(B,) int64: cards in the discard pile."""
    discard_count: torch.Tensor
    """(B, 55) int8: the discard pile, count per kind."""
    # Episode bookkeeping and randomness.
    turns: torch.Tensor
    """(B,) int64: decisions taken in the current episode (truncation at ``max_turns``)."""
    rng_key: torch.Tensor
    """(B,) int64: the table's 32-bit random key (``uno_env.batched.rng``)."""
    rng_counter: torch.Tensor
    """(B,) int64: random events the table has used so far."""

    def select(self, index: torch.Tensor) -> Tables:
        """The rows ``index`` (an int64 tensor) as a new ``Tables`` (copies)."""
        return Tables(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def assign(self, index: torch.Tensor, rows: Tables) -> None:
        """Write ``rows`` (from ``select(index)``) back into rows ``index``, in place (the rules excepted)."""
        for f in fields(self):
            if f.name not in RULE_FIELDS:
                getattr(self, f.name)[index] = getattr(rows, f.name)

    def clone(self) -> Tables:
        """An independent copy."""
        return Tables(**{f.name: getattr(self, f.name).clone() for f in fields(self)})

    def nbytes_per_table(self) -> int:
        """Bytes of state per table (every field's row)."""
        total = 0
        for f in fields(self):
            value: torch.Tensor = getattr(self, f.name)
            total += value[0].numel() * value.element_size() if value.dim() > 1 else value.element_size()
        return total

    @staticmethod
    def empty(num_tables: int, max_players: int, device: torch.device) -> Tables:
        """Zeroed tables (every field allocated; callers deal or load positions into them)."""
        b, p = num_tables, max_players

        def i64(*shape: int) -> torch.Tensor:
            return torch.zeros(shape, dtype=torch.int64, device=device)

        def flag(*shape: int) -> torch.Tensor:
            return torch.zeros(shape, dtype=torch.bool, device=device)

        def i8(*shape: int) -> torch.Tensor:
            return torch.zeros(shape, dtype=torch.int8, device=device)

        values: dict[str, Any] = {}
        for f in fields(Tables):
            name = f.name
            if name in ("uno_auto", "allow_bluff", "lowest", "w4_guilty", "teams", "stacking", "seven_zero",
                        "until_playable", "elimination"):
                values[name] = flag(b)
            elif name in ("uno", "winners", "alive"):
                values[name] = flag(b, p)
            elif name in ("scores", "round_points"):
                values[name] = i64(b, p)
            elif name == "hands":
                values[name] = i8(b, p, NUM_KINDS)
            elif name == "known":
                values[name] = i8(b, p, p, NUM_KINDS)
            elif name == "drew_on":
                values[name] = i8(b, p, DREW_ON_SIZE)
            elif name in ("draw", "discard"):
                values[name] = i8(b, MAX_DECK)
            elif name == "discard_count":
                values[name] = i8(b, NUM_KINDS)
            else:
                values[name] = i64(b)
        return Tables(**values)
