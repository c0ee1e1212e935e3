"""Rule options: which edition, how many players, and the variants in force."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal, TypedDict, get_args

from .cards import EDITIONS, MAX_PLAYERS, MIN_PLAYERS, is_table_size, short_repr
from .errors import RulesError, UnknownOptionError

EditionName = Literal["classic", "monster_high", "angry_birds", "masters_of_the_universe"]
UnoCallMode = Literal["explicit", "auto"]
ScoringMode = Literal["standard", "lowest"]

EDITION_NAMES: tuple[EditionName, ...] = get_args(EditionName)
UNO_CALL_MODES: tuple[UnoCallMode, ...] = get_args(UnoCallMode)
SCORING_MODES: tuple[ScoringMode, ...] = get_args(ScoringMode)

# The largest target score: far beyond any real game, small enough that every score, total and
# observation entry stays an exact small number.
MAX_TARGET_SCORE = 1_000_000


class RulesDict(TypedDict):
    """``Rules.to_dict()``: every option by name (the ``rules`` entry of a save and of a view)."""

    edition: EditionName
    num_players: int
    target_score: int
    uno_call: UnoCallMode
    allow_bluff: bool
    scoring: ScoringMode
    first_dealer: int | None
    teams: bool
    elimination: bool
    stacking: bool
    seven_zero: bool
    draw_until_playable: bool


@dataclass(frozen=True, init=False)
class Rules:
    """Validated, immutable rule options; every field is documented below.

    ``edition``: ``classic``, ``monster_high``, ``angry_birds`` or ``masters_of_the_universe``.
    ``num_players``: 2 to 10 (``MIN_PLAYERS`` to ``MAX_PLAYERS``).
    ``target_score``: points that end the game (rule 6.3; default 500, at most ``MAX_TARGET_SCORE``).
    ``uno_call``: ``explicit`` (calling and catching are decisions, rules 5.1-5.2) or ``auto``
    (rule 5.3: every call is made, nobody is caught).
    ``allow_bluff``: whether a Wild Draw Four may be played holding the active color (3.3).
    ``scoring``: ``standard`` (6.3) or ``lowest`` (6.4).
    ``first_dealer``: fix the first round's dealer instead of drawing for it (2.1).

    Variants and house rules (section 7, all off by default):
    ``teams``: partners by alternating seats, even tables of 4-10, shared team scores (7.1).
    ``elimination``: Challenge UNO; each seat totals the points left in its own hand, seats at
    or over the target leave the game, the last one standing wins (7.2).
    ``stacking``: a Draw Two may answer a Draw Two and a ``W4`` a ``W4``; the first player who
    does not stack draws the total (7.4).
    ``seven_zero``: a 7 swaps hands with a chosen seat, a 0 passes every hand one seat in the
    direction of play (7.4).
    ``draw_until_playable``: a draw goes on until a playable card comes, which must be played (7.4).
    """

    edition: EditionName
    num_players: int
    target_score: int
    uno_call: UnoCallMode
    allow_bluff: bool
    scoring: ScoringMode
    first_dealer: int | None
    teams: bool
    elimination: bool
    stacking: bool
    seven_zero: bool
    draw_until_playable: bool

    def __init__(
        self,
        edition: EditionName = "classic",
        num_players: int = 4,
        target_score: int = 500,
        uno_call: UnoCallMode = "explicit",
        allow_bluff: bool = True,
        scoring: ScoringMode = "standard",
        first_dealer: int | None = None,
        teams: bool = False,
        elimination: bool = False,
        stacking: bool = False,
        seven_zero: bool = False,
        draw_until_playable: bool = False,
        **unknown: Any,
    ) -> None:
        if unknown:
            names = sorted(name[:40] for name in unknown)
            # Python's own wording for the first name: libraries that probe optional keywords match it
            # (TorchRL's GymEnv drops ``frameskip`` on "unexpected keyword argument 'frameskip'").
            raise UnknownOptionError(
                f"unknown rule option(s) {', '.join(names)}; options are {', '.join(option_names())} "
                f"(Rules() got an unexpected keyword argument {names[0]!r})"
            )
        edition = edition_name(edition)
        if not is_table_size(num_players):
            raise RulesError(
                f"num_players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, got {short_repr(num_players)}")
        if not _is_int(target_score) or not 1 <= target_score <= MAX_TARGET_SCORE:
            raise RulesError(f"target_score must be an int from 1 to {MAX_TARGET_SCORE:,}, got {short_repr(target_score)}")
        if not isinstance(uno_call, str) or uno_call not in UNO_CALL_MODES:
            raise RulesError(f"uno_call must be one of {', '.join(UNO_CALL_MODES)}, got {short_repr(uno_call)}")
        if not isinstance(allow_bluff, bool):
            raise RulesError(f"allow_bluff must be True or False, got {short_repr(allow_bluff)}")
        if not isinstance(scoring, str) or scoring not in SCORING_MODES:
            raise RulesError(f"scoring must be one of {', '.join(SCORING_MODES)}, got {short_repr(scoring)}")
        if first_dealer is not None and (not _is_int(first_dealer) or not 0 <= first_dealer < num_players):
            raise RulesError(f"first_dealer must be None or a seat 0..{num_players - 1}, got {short_repr(first_dealer)}")
        flags = {"teams": teams, "elimination": elimination, "stacking": stacking,
                 "seven_zero": seven_zero, "draw_until_playable": draw_until_playable}
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise RulesError(f"{name} must be True or False, got {short_repr(value)}")
        if teams and (num_players % 2 or num_players < 4):
            raise RulesError(f"teams needs an even number of players from 4 to {MAX_PLAYERS}, got {num_players}")
        if teams and elimination:
            raise RulesError("teams and elimination cannot be combined; choose one")
        if elimination and scoring != "standard":
            raise RulesError("elimination keeps its own totals (points left in each hand); leave scoring 'standard'")
        options: tuple[tuple[str, object], ...] = (
            ("edition", edition), ("num_players", num_players), ("target_score", target_score),
            ("uno_call", uno_call), ("allow_bluff", allow_bluff), ("scoring", scoring),
            ("first_dealer", first_dealer), *flags.items(),
        )
        for name, option in options:
            object.__setattr__(self, name, option)

    def to_dict(self) -> RulesDict:
        """The options as plain data."""
        return RulesDict(
            edition=self.edition, num_players=self.num_players, target_score=self.target_score,
            uno_call=self.uno_call, allow_bluff=self.allow_bluff, scoring=self.scoring,
            first_dealer=self.first_dealer, teams=self.teams, elimination=self.elimination,
            stacking=self.stacking, seven_zero=self.seven_zero, draw_until_playable=self.draw_until_playable,
        )

    @classmethod
    def from_dict(cls, data: Any) -> Rules:
        """Options from plain data; unknown keys raise ``RulesError``."""
        if not isinstance(data, dict):
            raise RulesError(f"rules must be a mapping of options, got {type(data).__name__}")
        if not all(isinstance(key, str) for key in data):
            raise RulesError(f"rule options are named by strings; options are {', '.join(option_names())}")
        return cls(**data)

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed (validated again)."""
        return Rules.from_dict({**self.to_dict(), **changes})


def edition_name(value: object) -> EditionName:
    """``value`` as an edition name (for text read from data: configs, saves, command lines);
    ``RulesError`` naming the editions when it is not one."""
    for name in EDITION_NAMES:
        if isinstance(value, str) and value == name:
            return name
    raise RulesError(f"unknown edition {short_repr(value)}; editions are {', '.join(EDITIONS)}")


def option_names() -> list[str]:
    """Names of every rule option."""
    return [f.name for f in fields(Rules)]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
