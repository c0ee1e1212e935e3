"""Small generic helpers for scenario tests: stacked games, action scripts, positions."""

from __future__ import annotations

import importlib.util
import random
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from uno_env.core import EDITIONS, Game, Rules, stacked_deck
from uno_env.core.cards import WILD


def stacked_game(
    edition: str = "classic",
    num_players: int = 4,
    dealer: int = 0,
    hands: dict[int, list[str]] | None = None,
    start: list[str] | None = None,
    then: list[str] | None = None,
    **options: Any,
) -> Game:
    """A game dealt from ``stacked_deck`` (hands, first card(s), next draws); ``options`` go to Rules."""
    rules = Rules(edition=edition, num_players=num_players, **options)
    deck = stacked_deck(edition, num_players, dealer, hands=hands, start=start, then=then)
    return Game(rules, deck=deck, dealer=dealer)


def play(game: Game, actions: Iterable[str | int]) -> Game:
    """Apply actions (texts like ``play R7``, ``color blue``, or ids) in order; returns the game."""
    for action in actions:
        game.step(action)
    return game


def event_types(game: Game, start: int = 0) -> list[str]:
    """The types of the game's events from index ``start`` on."""
    return [e["type"] for e in game.events()[start:]]


def edited(game: Game, **changes: Any) -> Game:
    """A game rebuilt by ``Game.from_dict`` from ``game.to_dict()`` with top-level keys replaced."""
    data = game.to_dict()
    data.update(changes)
    return Game.from_dict(data)


def play_out_round(game: Game, seed: int = 0, max_steps: int = 20_000) -> Game:
    """Take seeded random legal actions until the round (or game) is over; returns the game."""
    rng = random.Random(seed)
    for _ in range(max_steps):
        if game.is_round_over:
            return game
        game.step(rng.choice(game.legal_actions()))
    raise AssertionError(f"round not over after {max_steps} steps")


def position(
    edition: str = "classic",
    num_players: int = 4,
    hands: dict[int, list[str]] | None = None,
    discard: list[str] | tuple[str, ...] = ("R7",),
    draw: list[str] | tuple[str, ...] = (),
    current: int = 0,
    dealer: int = 0,
    direction: int = 1,
    active_color: str | None = None,
    rest_to: int | None = None,
    **options: Any,
) -> Game:
    """A game in the play phase at a chosen position, built with ``Game.from_dict``.

    ``hands`` fixes some seats' hands; every other seat gets 7 filler cards (non-wild cards
    in kind order, i.e. the edition's first color first). ``discard`` is the discard pile (top
    last), ``draw`` the top of the draw pile; the cards left over go under the draw pile, or
    into seat ``rest_to``'s hand. The active color defaults to the top card's color. The
    saved log is emptied, so ``game.events()`` lists only what happens from here on.
    """
    rules = Rules(edition=edition, num_players=num_players, **options)
    ed = EDITIONS[edition]
    pool = [ed.code(k) for k in ed.deck()]

    def take(code: str) -> str:
        code = ed.code(ed.kind(code))
        pool.remove(code)  # ValueError: asked for more copies than the deck holds
        return code

    fixed = {seat: [take(c) for c in cards] for seat, cards in (hands or {}).items()}
    discard_codes = [take(c) for c in discard]
    draw_codes = [take(c) for c in draw]
    filler = [c for c in pool if ed.kind(c) < WILD]
    all_hands: list[list[str]] = []
    for seat in range(num_players):
        if seat in fixed:
            all_hands.append(fixed[seat])
        else:
            cards, filler = filler[:7], filler[7:]
            for c in cards:
                pool.remove(c)
            all_hands.append(cards)
    if rest_to is None:
        draw_codes += pool
    else:
        all_hands[rest_to] += pool
    top = ed.kind(discard_codes[-1])
    if active_color is None and top < WILD:
        active_color = ed.colors[top // 13]
    data = Game(rules, deck=[ed.code(k) for k in ed.deck()], dealer=dealer).to_dict(include_log=False)
    data.update(
        dealer=dealer, direction=direction, phase="play", current_player=current,
        active_color=active_color, hands=all_hands, draw_pile=draw_codes, discard_pile=discard_codes,
        uno_called=[False] * num_players, known=[],
        # A fresh deal's pending state is neutral; keep its keys (new ones included).
        pending={**data["pending"], "card": None, "player": None, "drawn": None, "w4_guilty": False,
                 "w4_prev_color": None, "catch_index": 0},
    )
    return Game.from_dict(data)


def table_position(
    edition: str = "classic",
    num_players: int = 4,
    *,
    hands: list[list[str]],
    top: str,
    below: tuple[str, ...] | list[str] = (),
    draw: tuple[str, ...] | list[str] = (),
    leftover: int | None = None,
    current: int = 0,
    active: str | None = None,
    direction: int = 1,
    dealer: int = 0,
    scores: list[int] | None = None,
    eliminated: list[bool] | None = None,
    known: tuple[tuple[int, int, list[str]], ...] = (),
    **rule_options: Any,
) -> Game:
    """A game in the play phase of ``current`` with exactly these hands, piles and totals.

    ``top`` is the discard pile's top card (``below`` the cards under it, bottom first),
    ``draw`` the top of the draw pile; the deck's other cards follow ``draw`` in canonical
    order, or go to the end of seat ``leftover``'s hand (then the draw pile is exactly
    ``draw``). ``known`` lists (observer, target, cards) the observer has seen in the
    target's hand. ``eliminated`` seats must be given empty hands.
    """
    rules = Rules(edition=edition, num_players=num_players, **rule_options)
    ed = EDITIONS[edition]
    data = Game(rules, seed=0, dealer=dealer).to_dict(include_log=False)
    pool = Counter(ed.code(k) for k in ed.deck())
    for code in [c for hand in hands for c in hand] + list(below) + [top] + list(draw):
        assert pool[code] > 0, f"position asks for more {code} than the deck holds"
        pool[code] -= 1
    rest = []
    for code in (ed.code(k) for k in ed.deck()):
        if pool[code] > 0:
            pool[code] -= 1
            rest.append(code)
    hands = [list(h) for h in hands]
    if leftover is None:
        draw_pile = list(draw) + rest
    else:
        hands[leftover] += rest
        draw_pile = list(draw)
    if active is None:
        active = ed.colors[ed.letters.index(top[0])]
    pending = dict(data["pending"])
    pending.update(card=None, player=None, drawn=None, w4_guilty=False, w4_prev_color=None,
                   catch_index=0, penalty=0)
    data.update(
        dealer=dealer,
        direction=direction,
        phase="play",
        current_player=current,
        active_color=active,
        hands=hands,
        draw_pile=draw_pile,
        discard_pile=[*below, top],
        scores=list(scores) if scores is not None else [0] * num_players,
        round_points=[0] * num_players,
        round_winner=None,
        winners=[],
        uno_called=[False] * num_players,
        eliminated=list(eliminated) if eliminated is not None else [False] * num_players,
        known=[{"observer": o, "target": t, "cards": list(c)} for o, t, c in known],
        pending=pending,
    )
    return Game.from_dict(data)


def brief(game: Game, seat: int | None = None, start: int = 0) -> list[tuple[Any, ...]]:
    """Events (as ``seat`` sees them) from ``start`` on as (type, seat, card, other); draws carry their reason."""
    out = []
    for e in game.events(seat)[start:]:
        other = e["reason"] if e["type"] == "draw" else e["other"]
        out.append((e["type"], e["seat"], e["card"], other))
    return out


def legal(game: Game) -> list[str]:
    """The legal actions' texts."""
    return [str(a) for a in game.legal_actions()]


def draws(seat: int, cards: list[str], reason: str) -> list[tuple[Any, ...]]:
    """The draw events of ``seat`` drawing ``cards`` for ``reason``."""
    return [("draw", seat, c, reason) for c in cards]


def load_example(name: str, monkeypatch: Any) -> ModuleType:
    """``examples/ecosystem/<name>.py`` imported as a module for one test (``monkeypatch`` undoes it):
    its folder on ``sys.path`` (the examples import their sibling ``against_random.py``) and the module
    in ``sys.modules`` (dataclasses look their module up there)."""
    path = Path(__file__).resolve().parent.parent / "examples" / "ecosystem" / f"{name}.py"
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location(f"{name}_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module
