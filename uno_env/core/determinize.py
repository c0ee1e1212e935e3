"""Sampling a full game consistent with one seat's knowledge (for search agents)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from .cards import KIND_COLOR, WILD, WILD_DRAW_FOUR

if TYPE_CHECKING:
    from .game import Game


def determinize(game: Game, seat: int, rng: random.Random | int | None = None) -> Game:
    """Return a copy of ``game`` with every card hidden from ``seat`` resampled.

    Hidden cards are the draw pile and, in every other hand, the cards ``seat`` has not
    seen; they are shuffled together and dealt back into the same places, so hand sizes,
    the draw pile's size and the seat's known cards are unchanged. The copy's random
    generator is reseeded from ``rng``, since future reshuffles are hidden too, and the copy's
    event log is the seat's own view of it (cards it did not see are blanked).
    """
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.num_players:
        raise ValueError(f"seat must be 0..{game.num_players - 1}, got {seat!r}")
    from .game import GIVE_AWAY, PLAY_DRAWN

    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    copy = game.clone()
    pool: list[int] = list(copy._draw)
    # A card just drawn by another seat is hidden; under draw until playable the seat knows it
    # plays (rule 7.4), otherwise nothing about it (rule 3.4: a keep looks the same either way).
    drawer = copy._current if copy._phase == PLAY_DRAWN and copy._current != seat else -1
    must_play = drawer >= 0 and copy.rules.draw_until_playable
    if must_play:
        copy._hands[drawer].remove(copy._drawn)
        pool.append(copy._drawn)
    fixed: list[list[int]] = []
    for target, hand in enumerate(copy._hands):
        if target == seat:
            fixed.append(hand)
            continue
        seen = list(copy._known[target].get(seat, ()))
        keep = []
        for kind in hand:
            if kind in seen:
                seen.remove(kind)
                keep.append(kind)
            else:
                pool.append(kind)
        fixed.append(keep)
    rng.shuffle(pool)
    if must_play:  # any hidden card that would have been playable
        drawn = playable_hidden_card(copy, pool)
        if drawn < 0:
            drawn = copy._drawn
        pool.remove(drawn)
    for target, hand in enumerate(copy._hands):
        if target == seat:
            continue
        keep = fixed[target]
        need = len(hand) - len(keep)
        new_hand = keep + pool[:need]
        del pool[:need]
        _relabel_knowledge(copy, target, hand, new_hand, seat)
        copy._hands[target] = new_hand
    if must_play:
        copy._hands[drawer].append(drawn)
        copy._drawn = drawn
    elif drawer >= 0:  # the drawn card is one of the drawer's resampled cards
        copy._drawn = copy._hands[drawer][-1]
    giver = copy._hands[copy._current]
    if copy._phase == GIVE_AWAY and copy._current != seat and all(k >= WILD for k in giver):
        give_the_giver_a_color(giver, len(fixed[copy._current]), pool)
    copy._draw = pool
    copy._log = _seat_log(copy, seat)
    copy._rng = random.Random(rng.getrandbits(64))
    copy._legal = None
    if copy._played == WILD_DRAW_FOUR and copy._player != seat and copy._w4_prev_color >= 0:
        prev = copy._w4_prev_color
        copy._w4_guilty = any(KIND_COLOR[k] == prev for k in copy._hands[copy._player])
    return copy


def playable_hidden_card(game: Game, pool: list[int]) -> int:
    """The first card of ``pool`` that could be the playable card another seat just drew, or -1."""
    from .game import _PLAYABLE

    playable = _PLAYABLE[game._active][game._top_rank]
    bluff = game.rules.allow_bluff
    return next((k for k in pool if playable[k] and (bluff or k != WILD_DRAW_FOUR)), -1)


def give_the_giver_a_color(hand: list[int], first_resampled: int, pool: list[int], start: int = 0) -> bool:
    """The give_away phase is public, so the Urrrhhh player holds a colored card: swap the first
    colored card of ``pool[start:]`` into the hand's first resampled slot. False if impossible."""
    colored = next((i for i in range(start, len(pool)) if pool[i] < WILD), -1)
    if colored < 0 or first_resampled >= len(hand):
        return False
    hand[first_resampled], pool[colored] = pool[colored], hand[first_resampled]
    return True


def _seat_log(copy: Game, seat: int) -> list[tuple[str, int, int, int]]:
    """The log as ``seat`` saw it: cards it did not see are blanked, as in ``events(seat)``."""
    from .game import EVENT_VISIBILITY, OTHER, OWNER, OWNER_AND_OTHER

    log = []
    for event in copy._log:
        kind, who, card, other = event
        visibility = EVENT_VISIBILITY[kind]
        hidden = (visibility == OWNER and who != seat
                  or visibility == OWNER_AND_OTHER and seat not in (who, other)
                  or visibility == OTHER and other != seat)
        log.append((kind, who, -1, other) if hidden and card >= 0 else event)
    return log


def _relabel_knowledge(copy: Game, target: int, old: list[int], new: list[int], seat: int) -> None:
    """Other observers' knowledge of a resampled hand must stay a sub-multiset of it."""
    known = copy._known[target]
    for observer in list(known):
        if observer == seat:
            continue
        remaining = list(new)
        kept = []
        for kind in known[observer]:
            if kind in remaining:
                remaining.remove(kind)
                kept.append(kind)
        if kept:
            known[observer] = kept
        else:
            del known[observer]
