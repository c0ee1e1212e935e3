"""The observation encoder: one flat ``float32`` vector per seat, plus the action mask.

``observe(game, seat, max_players=10)`` returns what ``seat`` may know as a 1-D ``float32``
vector; ``action_mask(game, seat)`` returns an ``int8`` vector over the fixed action layout
(``uno_env.core.actions``), 1 for each legal action, all zeros for every seat but the one to
decide. Both depend on numpy only (no PettingZoo, Gymnasium or torch).

The vector's size depends on nothing but ``max_players`` (``observation_size(max_players)``),
never on the edition or the table size, so one network can play every edition at every
table up to ``max_players`` seats. Seats are described *relative to the observer*: offset
``k`` is the seat ``k`` places clockwise (``(seat + k) % num_players``); offsets at or past the
table size are padding (all zeros, ``present`` 0).

It is encoded from the seat's ``SeatView`` (``uno_env.core.view.seat_view``, the same one
``game.view(seat)`` is built from): the observer's hand, the public state, and the cards of
other hands the observer has seen (Urrrhhh gifts it gave or got, King Pig deals, a hand shown
to it in a challenge, hands passed on under seven-zero). The encoder never sees the game
itself, so no other hidden card can reach it and ``game.determinize(seat)`` never changes
it. ``encode_view(seat_view)`` encodes a ``SeatView`` directly.

Named slices, in order (``M`` = ``max_players``; ``observation_slices(M)`` gives each
``slice``; ``split_observation(vector, M)`` cuts a vector into them):

==================  ==========  ======================================================
name                size        content
==================  ==========  ======================================================
hand                55          the observer's cards: count of each card kind (0..4)
top_card            55          the discard pile's top card, one-hot by kind
active_color        4           the color to match, one-hot by slot (all 0 while the
                                opening wild's color is still to be named)
phase               11          the pending decision, one-hot in ``Phase`` order (play,
                                play_drawn, choose_color, give_away, challenge, uno,
                                catch, swap, stack, round_over, game_over)
direction           1           +1 clockwise, -1 counter-clockwise
drawn_card          55          the card just drawn, one-hot, only while the observer
                                decides on it (``play_drawn``: play it or keep it; a
                                forced keep when it does not play)
discard             55          count of each kind in the discard pile: every card played
                                since the last reshuffle (public)
draw_pile_size      1           cards left to draw
penalty             1           cards owed by whoever faces the pending Draw Two /
                                ``W4`` (stacked totals under the stacking rule)
w4_prev_color       4           while a ``W4`` is pending: the color active before it
                                (a challenge asks whether the player held it), one-hot
edition             4           one-hot: classic, monster_high, angry_birds,
                                masters_of_the_universe (says what the special wild,
                                kind 54, does)
rules               8           1 when: uno_call is auto, bluffs are allowed, scoring is
                                lowest, teams, elimination, stacking, seven_zero,
                                draw_until_playable
present             M           per offset: 1 for a seat at the table
to_act              M           per offset: one-hot, the seat that decides now (offset 0:
                                the observer; all 0 once the round is over)
pending_player      M           per offset: one-hot, the seat whose card's effects are
                                being resolved (that card is the top card): during the
                                color, give-away, UNO, catch, swap, stack and challenge
                                decisions
dealer              M           per offset: one-hot, this round's dealer
hand_size           M           per offset: cards in that seat's hand
score               M           per offset: game score / target_score, capped at 1
uno_called          M           per offset: called UNO and still holds that one card
teammate            M           per offset: on the observer's team (offset 0 always 1;
                                partners sit at even offsets when teams are on)
eliminated          M           per offset: out of the game (elimination variant)
known               (M-1)*55    for offsets 1..M-1 in turn: count of each kind of that
                                seat's hand that the observer has seen and knows is
                                still there
drew_on             M*17        for offsets 0..M-1 in turn: that seat's public draw
                                evidence (``PublicState.drew_on``) as shares of its
                                hand (0..1): 4 by color slot, then 13 by rank (0-9,
                                Skip, Reverse, Draw Two), of the cards it held when it
                                last made a turn draw while that color was active / a
                                card of that rank was on top, less the cards that have
                                left its hand since, over its hand size
==================  ==========  ======================================================

With ``M = 10`` the vector has 1,009 entries. Every entry lies in the bounds
``observation_bounds(M)`` returns (counts of a kind never exceed its copies in a deck;
sizes never exceed 112, the largest deck). ``OBSERVATION_VERSION`` changes whenever the
layout or the meaning of an entry does.

Version history (``OBSERVATION_VERSION``):

* 1 - first layout.
* 2 - the rule 3.4 ruling: the ``play_drawn`` phase (with the ``drawn_card`` entry) follows
  every turn draw that yields a card, a forced ``keep`` of a card that does not play
  included; in version 1 it followed only a drawn card that plays, so the phase entry said
  the drawn card was playable. Same layout. Policies trained on version 1 read version 2
  vectors as before wherever they have a choice: the new observations (an unplayable drawn
  card in ``play_drawn``) come only at decisions with one legal action, and at every decision
  with two or more each entry means what it meant in version 1 (tested). So checkpoints of
  both versions load (``COMPATIBLE_OBSERVATION_VERSIONS``, checked by ``agents.PPOAgent``).
* 3 - the ``drew_on`` slice appended (who drew on what, from the seat's own record of the
  public play; the other entries unchanged). A version 1 or 2 vector is the first
  ``observation_size(M, version)`` entries of a version 3 one, so a policy trained on them
  reads that prefix (``agents.PPOAgent`` cuts it).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .core import actions as A
from .core.cards import (
    DREW_ON_SIZE,
    EDITIONS,
    MAX_DECK_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_COLORS,
    NUM_KINDS,
    WILD,
    WILD_DRAW_FOUR,
)
from .core.state import Phase
from .core.view import SeatView, seat_view

if TYPE_CHECKING:
    from .core.game import Game
    from .core.rules import Rules

__all__ = [
    "OBSERVATION_VERSION", "COMPATIBLE_OBSERVATION_VERSIONS", "DEFAULT_MAX_PLAYERS", "NUM_ACTIONS", "observe", "action_mask",
    "observation_size", "observation_slices", "observation_bounds", "split_observation",
    "observation_fields", "encode_view", "Encoder", "encoder_for", "MAX_COPIES",
    "ObservationVersionError", "widening", "widening_of_growth",
]

OBSERVATION_VERSION = 3
# Versions whose policies read this encoder's vectors correctly (see the version history);
# a policy of a version before 3 reads the first observation_size(M, version) entries.
COMPATIBLE_OBSERVATION_VERSIONS = (1, 2, 3)
DEFAULT_MAX_PLAYERS = MAX_PLAYERS
NUM_ACTIONS = A.NUM_ACTIONS
MAX_CARDS = MAX_DECK_SIZE  # 112

_NUM_PHASES = len(Phase)
_ROUND_OVER = Phase.ROUND_OVER
_EDITION_INDEX = {name: i for i, name in enumerate(EDITIONS)}

# (rule option, value that sets the flag), in the order of the ``rules`` slice.
RULE_FLAGS: tuple[tuple[str, Any], ...] = (
    ("uno_call", "auto"), ("allow_bluff", True), ("scoring", "lowest"), ("teams", True),
    ("elimination", True), ("stacking", True), ("seven_zero", True), ("draw_until_playable", True),
)

# The most copies of each kind in any edition's deck (a number 0: 1; other colored: 2; wilds: 4).
MAX_COPIES = np.zeros(NUM_KINDS, np.float32)
for _ed in EDITIONS.values():
    np.maximum(MAX_COPIES, np.bincount(np.array(_ed.deck()), minlength=NUM_KINDS).astype(np.float32), out=MAX_COPIES)
del _ed


def observation_fields(max_players: int = DEFAULT_MAX_PLAYERS,
                       version: int = OBSERVATION_VERSION) -> list[tuple[str, int]]:
    """The named slices as ``(name, size)`` pairs, in vector order (of layout ``version``: 1, 2 or 3)."""
    m = _check_max_players(max_players)
    if version not in COMPATIBLE_OBSERVATION_VERSIONS or type(version) is not int:
        raise ValueError(f"observation version must be one of {COMPATIBLE_OBSERVATION_VERSIONS}, got {version!r}")
    fields = [
        ("hand", NUM_KINDS), ("top_card", NUM_KINDS), ("active_color", NUM_COLORS),
        ("phase", _NUM_PHASES), ("direction", 1), ("drawn_card", NUM_KINDS), ("discard", NUM_KINDS),
        ("draw_pile_size", 1), ("penalty", 1), ("w4_prev_color", NUM_COLORS),
        ("edition", len(EDITIONS)), ("rules", len(RULE_FLAGS)),
        ("present", m), ("to_act", m), ("pending_player", m), ("dealer", m), ("hand_size", m),
        ("score", m), ("uno_called", m), ("teammate", m), ("eliminated", m),
        ("known", (m - 1) * NUM_KINDS),
    ]
    if version >= 3:
        fields.append(("drew_on", m * DREW_ON_SIZE))
    return fields


def observation_slices(max_players: int = DEFAULT_MAX_PLAYERS) -> dict[str, slice]:
    """Each named part's ``slice`` of the vector."""
    out = {}
    start = 0
    for name, size in observation_fields(max_players):
        out[name] = slice(start, start + size)
        start += size
    return out


def observation_size(max_players: int = DEFAULT_MAX_PLAYERS, version: int = OBSERVATION_VERSION) -> int:
    """Length of the observation vector for tables of up to ``max_players`` seats (of layout ``version``)."""
    return sum(size for _, size in observation_fields(max_players, version))


class ObservationVersionError(ValueError):
    """A layout version, or a widening between two, that this code cannot read or make."""


def widening(max_players: int, from_version: int, to_version: int = OBSERVATION_VERSION) -> tuple[int, int]:
    """Where a network trained on the layout of observation ``from_version`` takes the inputs
    ``to_version`` added: ``(at, extra)``, ``extra`` entries inserted before input ``at``. Every
    version so far appended to the public vector, so ``at`` is the older vector's length (``extra``
    is 0 when the versions are the same). The one rule ``agents.ppo_agent.widened_to_current``
    (checkpoints, the privileged critic) and ``training.run.resume`` (resume states) widen by."""
    for name, version in (("from_version", from_version), ("to_version", to_version)):
        if isinstance(version, bool) or version not in COMPATIBLE_OBSERVATION_VERSIONS:
            raise ObservationVersionError(
                f"{name}: observation version must be one of {COMPATIBLE_OBSERVATION_VERSIONS}, got {version!r}")
    if from_version > to_version:
        raise ObservationVersionError(f"cannot widen observation version {from_version} to the older "
                                      f"{to_version}: to_version must be at least from_version")
    old = observation_size(max_players, from_version)
    return old, observation_size(max_players, to_version) - old


def widening_of_growth(extra: int, from_version: int,
                       to_version: int = OBSERVATION_VERSION) -> tuple[int, int]:
    """``(max_players, at)`` of the table size whose ``widening(max_players, from_version, to_version)``
    adds ``extra`` inputs (how a tensor that is ``extra`` inputs narrower than its counterpart in the
    newer layout is widened; ``at`` as ``widening`` says). ObservationVersionError when none does,
    naming the growths that exist."""
    growths = {widening(m, from_version, to_version)[1]: m for m in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
    if isinstance(extra, bool) or extra not in growths or extra == 0:
        raise ObservationVersionError(
            f"no table of {MIN_PLAYERS}-{MAX_PLAYERS} players widens observation version {from_version} to "
            f"{to_version} by {extra!r} inputs; the growths are {sorted(g for g in growths if g)}")
    max_players = growths[extra]
    return max_players, widening(max_players, from_version, to_version)[0]


def observation_bounds(max_players: int = DEFAULT_MAX_PLAYERS) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` float32 arrays bounding every entry (for a ``gymnasium.spaces.Box``)."""
    sl = observation_slices(max_players)
    low = np.zeros(observation_size(max_players), np.float32)
    high = np.ones_like(low)
    for name in ("hand", "discard"):
        high[sl[name]] = MAX_COPIES
    high[sl["known"]] = np.tile(MAX_COPIES, max_players - 1)
    for name in ("draw_pile_size", "penalty", "hand_size"):
        high[sl[name]] = MAX_CARDS
    low[sl["direction"]] = -1
    return low, high


def split_observation(vector: np.ndarray, max_players: int = DEFAULT_MAX_PLAYERS) -> dict[str, np.ndarray]:
    """Cut a vector into its named parts (views, not copies); ``known`` is reshaped to (M-1, 55)
    and ``drew_on`` to (M, 17)."""
    vector = np.asarray(vector)
    if vector.shape != (observation_size(max_players),):
        raise ValueError(
            f"an observation for max_players={max_players} has shape ({observation_size(max_players)},), "
            f"got {vector.shape}"
        )
    parts = {name: vector[s] for name, s in observation_slices(max_players).items()}
    parts["known"] = parts["known"].reshape(max_players - 1, NUM_KINDS)
    parts["drew_on"] = parts["drew_on"].reshape(max_players, DREW_ON_SIZE)
    return parts


def _check_max_players(max_players: int) -> int:
    if (isinstance(max_players, bool) or not isinstance(max_players, (int, np.integer))
            or not MIN_PLAYERS <= max_players <= MAX_PLAYERS):
        raise ValueError(f"max_players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, got {max_players!r}")
    return int(max_players)


class Encoder:
    """Encodes the ``SeatView``s of one kind of table (``rules``, ``max_players``) into observations.

    ``encoder.encode(view)`` is ``encode_view(view, max_players)`` for views of games under
    ``rules``; an env that encodes every decision keeps one (``observe`` and ``encode_view``
    share one per (rules, max_players)). It holds the vector's offsets and constant part
    (edition, rule flags, seats present, teammates) and, per discard pile, that constant part
    plus the pile's counts and top card: the engine only appends to a discard pile until a
    reshuffle or a new deal replaces the list, so a grown pile extends the kept vector. Only a
    view's fields are read (see ``encode_view``).
    """

    def __init__(self, rules: Rules, max_players: int = DEFAULT_MAX_PLAYERS) -> None:
        max_players = _check_max_players(max_players)
        n = rules.num_players
        if n > max_players:
            raise ValueError(
                f"a {n}-player table does not fit an observation for max_players={max_players}; "
                f"raise max_players to at least {n}"
            )
        self.rules = rules
        self.max_players = max_players
        self.size = observation_size(max_players)
        sl = observation_slices(max_players)
        self._offsets = {name: part.start for name, part in sl.items()}
        template = np.zeros(self.size, np.float32)
        template[sl["edition"].start + _EDITION_INDEX[rules.edition]] = 1
        template[sl["rules"]] = [getattr(rules, name, None) == value for name, value in RULE_FLAGS]
        template[sl["present"].start:sl["present"].start + n] = 1
        teams = bool(getattr(rules, "teams", False))
        for offset in range(n):
            template[sl["teammate"].start + offset] = offset == 0 or (teams and offset % 2 == 0)
        self._template = template
        # discard pile id -> (that list, cards counted, template + its counts + top card); each entry
        # holds the list itself, so its id cannot be reused while kept.
        self._bases: dict[int, tuple[list[int], int, np.ndarray]] = {}
        # The pile last encoded, its size then and its vector (one tuple: replaced in one store).
        self._last: tuple[list[int] | None, int, np.ndarray] = (None, 0, template)
        o = self._offsets
        self._inv_target = 1.0 / rules.target_score
        self._sizes = o["hand_size"]
        self._pack_sizes = struct.Struct(f"{n}f").pack_into  # hand sizes: n float32 written at once
        self._n = n
        self._fast = (n, o["active_color"], o["phase"], o["direction"], o["drawn_card"], o["draw_pile_size"],
                      o["penalty"], o["to_act"], o["pending_player"], o["w4_prev_color"], o["dealer"])

    def _base(self, pile: list[int]) -> np.ndarray:
        """The template plus ``pile``'s counts and top card (kept, extended as the pile grows)."""
        bases = self._bases
        entry = bases.get(id(pile))
        size = len(pile)
        top, discard = self._offsets["top_card"], self._offsets["discard"]
        if entry is not None and entry[0] is pile and entry[1] <= size:
            done, base = entry[1], entry[2]  # private to the cache (observations are copies): extend in place
            if done < size:
                mv = memoryview(base)  # type: ignore[arg-type]
                mv[top + pile[done - 1]] = 0
                for k in pile[done:]:
                    mv[discard + k] += 1
                mv[top + pile[-1]] = 1
        else:
            if len(bases) >= _BASES_SIZE:
                bases.clear()
            base = self._template.copy()
            base[discard:discard + NUM_KINDS] = np.bincount(pile, minlength=NUM_KINDS)
            base[top + pile[-1]] = 1
        bases[id(pile)] = self._last = (pile, size, base)
        return base

    def encode(self, view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of ``view`` (a new array, or written into ``out``)."""
        seat, rules, pub, hand, drawn, draw_size, known, _bluff = view
        discard = pub.discard_pile
        last = self._last
        if discard is last[0] and len(discard) == last[1]:
            base = last[2]  # the pile has not changed since it was last encoded
        else:
            base = self._base(discard)
        obs: np.ndarray
        if out is None:
            obs = base.copy()
        else:
            out[:] = base
            obs = out
        mv: Any = memoryview(obs)  # type: ignore[arg-type]  # Any: typeshed types the items as int
        if len(hand) < 28:  # a Python loop beats np.bincount's fixed cost on small hands
            for k in hand:
                mv[k] += 1
        else:
            obs[:NUM_KINDS] = np.bincount(hand, minlength=NUM_KINDS)
        n, o_active, o_phase, o_direction, o_drawn, o_draw_pile, o_penalty, o_to_act, o_pending, o_w4_prev, \
            o_dealer = self._fast
        active = pub.active_color
        if active >= 0:
            mv[o_active + active] = 1
        phase = pub.phase
        mv[o_phase + phase] = 1
        mv[o_direction] = pub.direction
        if drawn >= 0:
            mv[o_drawn + drawn] = 1
        mv[o_draw_pile] = draw_size
        penalty = pub.penalty
        if penalty:
            mv[o_penalty] = penalty
        if phase < _ROUND_OVER:
            mv[o_to_act + (pub.current - seat) % n] = 1
            player = pub.pending_player
            if player >= 0:
                mv[o_pending + (player - seat) % n] = 1
                if pub.pending_card == WILD_DRAW_FOUR and pub.w4_prev_color >= 0:
                    mv[o_w4_prev + pub.w4_prev_color] = 1
        mv[o_dealer + (pub.dealer - seat) % n] = 1
        sizes = pub.hand_sizes
        if n == 2:
            mv[self._sizes + 1 - seat] = sizes[1]
            mv[self._sizes + seat] = sizes[0]
        elif seat:
            self._pack_sizes(mv, self._sizes * 4, *sizes[seat:], *sizes[:seat])
        else:
            self._pack_sizes(mv, self._sizes * 4, *sizes)
        scores = pub.scores
        if any(scores):
            self._rotated(mv, self._offsets["score"], scores, seat, self._inv_target)
        uno = pub.uno_called
        if True in uno:
            self._rotated(mv, self._offsets["uno_called"], uno, seat, 1.0)
        alive = pub.alive
        if False in alive:
            self._rotated(mv, self._offsets["eliminated"], [not a for a in alive], seat, 1.0)
        if known:
            at = self._offsets["known"]
            for target, seen in known:
                start = at + ((target - seat) % n - 1) * NUM_KINDS
                for k in seen:
                    mv[start + k] += 1
        at = self._offsets["drew_on"]
        for other, row in enumerate(pub.drew_on):
            if any(row):  # then the hand holds a card (the counts never exceed its size)
                size = sizes[other]
                start = at + (other - seat) % n * DREW_ON_SIZE
                for j, count in enumerate(row):  # a row has few non-zero counts: write only those
                    if count:
                        mv[start + j] = count / size
        return obs

    def _rotated(self, mv: Any, at: int, values: Sequence[int | bool], seat: int, scale: float) -> None:
        """Write ``values`` per seat offset from ``seat`` (times ``scale``, capped at 1) into ``mv``, a
        float32 memoryview (``Any``: typeshed types a memoryview's items as int)."""
        n = self._n
        for offset in range(n):
            value = values[(seat + offset) % n]
            if value:
                mv[at + offset] = min(value * scale, 1.0)


# Encoders by (id(rules), max_players); each entry keeps its Rules so the id stays unique.
_ENCODERS: dict[tuple[int, int], Encoder] = {}
_BASES_SIZE = 64  # discard piles an encoder keeps vectors for (a few games' worth)
_LAST: list[Any] = [None, 0, None]  # the last (rules, max_players, encoder) used


def encoder_for(rules: Rules, max_players: int = DEFAULT_MAX_PLAYERS) -> Encoder:
    """The shared ``Encoder`` of (``rules``, ``max_players``), made on first use."""
    last = _LAST
    if last[0] is rules and last[1] == max_players:
        enc: Encoder = last[2]
        return enc
    key = (id(rules), max_players)
    found = _ENCODERS.get(key)
    if found is None or found.rules is not rules:
        if len(_ENCODERS) >= 1024:
            _ENCODERS.clear()
        found = _ENCODERS[key] = Encoder(rules, max_players)
    last[:] = rules, max_players, found
    return found


def observe(game: Game, seat: int, max_players: int = DEFAULT_MAX_PLAYERS,
            out: np.ndarray | None = None) -> np.ndarray:
    """The flat ``float32`` observation of ``game`` from ``seat`` (layout in the module docstring).

    Encoded from ``game``'s ``SeatView`` for ``seat`` (``encode_view``), never from the full state.
    A new array each call unless ``out`` (a float32 array of the right size) is given.
    """
    return encoder_for(game.rules, max_players).encode(seat_view(game.state, seat), out)


def encode_view(view: SeatView, max_players: int = DEFAULT_MAX_PLAYERS, out: np.ndarray | None = None) -> np.ndarray:
    """The flat observation of a ``SeatView`` (what one seat may know; see ``observe``)."""
    return encoder_for(view.rules, max_players).encode(view, out)


def action_mask(game: Game, seat: int) -> np.ndarray:
    """``int8`` vector of ``NUM_ACTIONS``: 1 for each action ``seat`` may take now, else 0."""
    mask = np.zeros(NUM_ACTIONS, np.int8)
    if game.current_player == seat:
        mv = memoryview(mask)  # type: ignore[arg-type]
        for a in game.legal_actions():
            mv[a] = 1
    return mask


assert WILD < NUM_KINDS
