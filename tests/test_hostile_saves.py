"""Loaders that refuse, never crash later (ISSUE 13 item 4) and typed refusals at the core's doors.

A save is untrusted input. ``Game.from_dict`` must either refuse it with a ``StateError`` that
names the field, or accept a state a real game can reach, which then plays on to the end
without any error (views, events, observations within their bounds, saves that load again).
The property test mutates real saves at random (a few thousand here; many more with the soak
run below) and holds every mutant to that.

Soak run (from the repository root)::

    .venv/bin/python -m tests.test_hostile_saves --count 200000 --seed 1

prints how many mutants were refused and how many played on, and stops at the first failure
with the mutation that caused it.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from collections import Counter
from typing import Any

import numpy as np
import pytest

from uno_env.core import (
    EDITIONS,
    ActionTextError,
    DeckError,
    Game,
    IllegalActionError,
    Rules,
    RulesError,
    SeatError,
    StateError,
    stacked_deck,
)
from uno_env.core.cards import short_repr
from uno_env.observation import observation_bounds, observe

# ---------------------------------------------------------------------------- real saves

SAVE_OPTIONS: list[dict[str, Any]] = [
    {}, {"stacking": True, "seven_zero": True}, {"elimination": True}, {"teams": True},
    {"draw_until_playable": True, "uno_call": "auto"}, {"scoring": "lowest", "allow_bluff": False},
]


def real_saves(count: int = 48, seed: int = 0) -> list[dict[str, Any]]:
    """Saves taken from seeded games of every edition, table size 2-6 and several rule sets (a
    third of them with their event log)."""
    rng = random.Random(seed)
    saves = []
    for i in range(count):
        edition = list(EDITIONS)[i % 4]
        options = SAVE_OPTIONS[i % len(SAVE_OPTIONS)]
        players = (4, 6)[i % 2] if options.get("teams") else 2 + i % 5
        game = Game(Rules(edition=edition, num_players=players, target_score=60, **options), seed=seed * 1000 + i)
        for _ in range(rng.randrange(0, 200)):
            if game.is_game_over:
                break
            if game.is_round_over:
                game.next_round()
            else:
                game.step(rng.choice(game.legal_actions()))
        saves.append(json.loads(json.dumps(game.to_dict(include_log=i % 3 == 0))))
    return saves


# ---------------------------------------------------------------------------- mutations

def deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


ODD_VALUES: list[Any] = [
    -1, 0, 1, 2, 3, 4, 7, 9, 10, 11, 16, 18, 99, 500, 10**9, 10**400, -10**400, 2**31, 2**63,
    0.5, 1.0, 55.0, 1e9, float("nan"), float("inf"), True, False, None, "", "R7", "W4", "WU", "WK", "WG",
    "red", "pink", "play", "play_drawn", "catch", "game_over", "draw", "x" * 1000, [], {}, [0], [None],
    {"observer": 0, "target": 1, "cards": ["R7"]}, ["draw", 0, "R7", 99], ["play", 0, "R7", None],
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, prefix + (key,))
    elif isinstance(value, list) and not (value and all(isinstance(v, int) for v in value) and len(value) > 100):
        for i, item in enumerate(value):
            out += _paths(item, prefix + (i,))
    return out


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def mutate(save: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], str]:
    """One random change to a copy of ``save``; returns it and a description."""
    data = copy.deepcopy(save)
    paths = [p for p in _paths(data) if p]
    path = rng.choice(paths)
    parent, key = _get(data, path[:-1]), path[-1]
    old = parent[key]
    kind = rng.randrange(9)
    if kind <= 2:
        new = rng.choice(ODD_VALUES) if kind else deep(rng.choice((50, 5000)))
        parent[key] = new
        what = f"set {path} = {short_repr(new)}"
    elif kind == 3 and isinstance(old, int) and not isinstance(old, bool):
        parent[key] = old + rng.choice((-2, -1, 1, 2, 13, 100))
        what = f"nudge {path} from {old}"
    elif kind == 4 and isinstance(parent, dict):
        del parent[key]
        what = f"delete {path}"
    elif kind == 5 and isinstance(old, list) and old:
        i = rng.randrange(len(old))
        old.insert(rng.randrange(len(old) + 1), copy.deepcopy(old[i]))
        what = f"duplicate an item of {path}"
    elif kind == 6 and isinstance(old, list) and old:
        del old[rng.randrange(len(old))]
        what = f"remove an item of {path}"
    elif kind == 7 and isinstance(old, list) and len(old) > 1:
        rng.shuffle(old)
        what = f"shuffle {path}"
    else:  # another field's value, from the untouched save
        other = rng.choice(paths)
        parent[key] = copy.deepcopy(_get(save, other))
        what = f"copy {other} into {path}"
    return data, what


# ---------------------------------------------------------------------------- playing on

MAX_DECISIONS = 300


def play_on(game: Game, rng: random.Random, decisions: int = MAX_DECISIONS) -> int:
    """Play random legal actions to the game's end (at most ``decisions``), checking what every
    consumer reads: views, events, observations within bounds, masks, saves. Returns decisions."""
    low, high = observation_bounds(10)
    n = game.num_players
    done = 0
    while not game.is_game_over and done < decisions:
        if game.is_round_over:
            game.next_round()
            continue
        seat = game.current_player
        assert seat is not None
        obs = observe(game, seat)
        assert np.all(obs >= low) and np.all(obs <= high) and np.all(np.isfinite(obs))
        if done % 25 == 0:
            for other in range(n):
                game.view(other)
            game.events(seat, since=game.log_length - 40)
            game.check(log=False)
        game.step(rng.choice(game.legal_actions()))
        done += 1
    data = json.loads(json.dumps(game.to_dict()))
    assert Game.from_dict(data).to_dict() == data
    return done


def check_mutant(data: Any, rng: random.Random) -> str:
    """``refused`` or ``played``; any other outcome raises."""
    try:
        game = Game.from_dict(data)
    except StateError:
        return "refused"
    play_on(game, rng)
    return "played"


@pytest.fixture(scope="module")
def saves() -> list[dict[str, Any]]:
    return real_saves()


def test_real_saves_load_and_play_on(saves):
    rng = random.Random(0)
    for data in saves:
        assert check_mutant(data, rng) == "played"


@pytest.mark.slow
def test_mutated_saves_are_refused_or_play_on_to_the_end(saves):
    rng = random.Random(2026)
    outcomes: Counter[str] = Counter()
    for _ in range(3000):
        data, what = mutate(rng.choice(saves), rng)
        try:
            outcomes[check_mutant(data, rng)] += 1
        except Exception as err:  # noqa: BLE001 - report the mutation that broke it
            raise AssertionError(f"{what}: {type(err).__name__}: {err}") from err
    # Both outcomes happen: the loader is neither a wall nor a sieve.
    assert outcomes["refused"] > 1000 and outcomes["played"] > 200, outcomes


# ---------------------------------------------------------------------------- named hostile saves

def load_refused(data: Any, match: str) -> None:
    with pytest.raises(StateError, match=match):
        Game.from_dict(data)


@pytest.fixture
def saved() -> dict[str, Any]:
    game = Game(Rules(num_players=4, target_score=200), seed=3)
    for _ in range(12):
        game.step(game.legal_actions()[0])
    return json.loads(json.dumps(game.to_dict()))


def test_a_log_entry_naming_a_seat_or_reason_out_of_range_is_refused(saved):
    load_refused({**saved, "log": [["draw", 0, "R7", 99]]}, r"log\[0\]: a draw event's other must be reason")
    load_refused({**saved, "log": [["draw", 9, "R7", 0]]}, r"log\[0\]: a draw event's seat must be a seat")
    load_refused({**saved, "log": [["color", 0, None, 4]]}, r"log\[0\]: a color event's other must be color")
    load_refused({**saved, "log": [["give", 0, "R7", 4]]}, r"log\[0\]: a give event's other must be seat")
    load_refused({**saved, "log": [["reverse", None, None, 0]]}, r"log\[0\]: a reverse event.s other must be direction")
    load_refused({**saved, "log": [["dealer", 0, None, 99]]}, r"log\[0\]: a dealer event's other must be round")
    load_refused({**saved, "log": [["start", None, None, None]]}, r"log\[0\]: a start event's card must be a card")


@pytest.mark.parametrize("value", [10**400, 10**9, 2**63, -1, 1e9, 1.0, float("nan"), "1", None, True])
def test_scores_penalty_and_target_are_bounded_to_what_a_game_reaches(saved, value):
    scores = list(saved["scores"])
    scores[1] = value
    load_refused({**saved, "scores": scores}, "scores: ")
    load_refused({**saved, "pending": {**saved["pending"], "penalty": value}}, "pending.penalty: ")
    load_refused({**saved, "rules": {**saved["rules"], "target_score": value}}, "rules: target_score must be an int")


def test_penalty_only_while_a_draw_card_awaits_its_victim(saved):
    assert saved["phase"] in ("play", "play_drawn")
    load_refused({**saved, "pending": {**saved["pending"], "penalty": 4}},
                 "cards are owed exactly while a Draw Two or Wild Draw Four awaits its victim")


def elimination_save(**changes: Any) -> dict[str, Any]:
    game = Game(Rules(num_players=3, elimination=True, target_score=50), seed=1)
    rng = random.Random(1)
    while not game.is_round_over:
        game.step(rng.choice(game.legal_actions()))
    data = json.loads(json.dumps(game.to_dict()))
    data.update(changes)
    return data


def test_unreachable_endings_are_refused():
    data = elimination_save()
    assert data["phase"] in ("round_over", "game_over")
    target = data["rules"]["target_score"]
    load_refused(elimination_save(scores=[target] * 3, eliminated=[True] * 3),
                 "eliminated: seats leave only under the elimination rule, and one must remain")
    load_refused(elimination_save(scores=[target] * 3), r"eliminated: exactly the seats at or over the target are out")
    over = Game(Rules(num_players=2, target_score=1), seed=4)
    while not over.is_game_over:
        over.step(over.legal_actions()[0])
    finished = json.loads(json.dumps(over.to_dict()))
    winner = finished["winners"][0]
    load_refused({**finished, "winners": [winner, winner]}, "winners: must list distinct seats in seat order")
    load_refused({**finished, "winners": [1 - winner]}, "the winners are the ones the scoring rules name")
    load_refused({**finished, "phase": "round_over"}, "ended the game|game over exactly when there are winners")
    load_refused({**finished, "phase": "round_over", "winners": []}, r"scores: a seat at or over the target 1 has ended")


@pytest.mark.parametrize("key", ["rules", "hands", "draw_pile", "known", "pending", "log", "rng_state", "winners",
                                 "scores", "phase", "format"])
@pytest.mark.parametrize("depth", [100, 100_000])
def test_deeply_nested_data_is_a_state_error(saved, key, depth):
    data = dict(saved)
    data[key] = deep(depth)
    with pytest.raises(StateError):
        Game.from_dict(data)
    nested = dict(saved)
    nested["pending"] = {**saved["pending"], "card": deep(depth)}
    with pytest.raises(StateError, match="pending.card"):
        Game.from_dict(nested)


@pytest.mark.parametrize("data", [None, [], "{}", 5, b"{}", float("nan"), {1: 2}, {(1, 2): 3}])
def test_anything_that_is_not_a_save_mapping_is_a_state_error(data):
    with pytest.raises(StateError):
        Game.from_dict(data)


# ---------------------------------------------------------------------------- typed refusals at the doors

@pytest.mark.parametrize("seed", [[1], "1", 1.5, b"1", (1,), {}, True])
def test_a_seed_is_an_int_or_none(seed):
    with pytest.raises(RulesError, match="seed must be None or an int"):
        Game(Rules(), seed=seed)
    assert Game(Rules(), seed=np.int64(3)).to_dict() == Game(Rules(), seed=3).to_dict()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"num_players": 0}, "num_players must be an int from 2 to 10"),
    ({"num_players": 11}, "num_players must be an int from 2 to 10"),
    ({"num_players": "4"}, "num_players must be an int from 2 to 10"),
    ({"dealer": 4}, r"dealer must be a seat 0\.\.3"),
    ({"edition": ["classic"]}, "unknown edition"),
    ({"hands": {7: ["R1"]}}, r"stacked hand for seat 7: seats are 0\.\.3"),
    ({"hands": [["R1"]]}, "hands must map seats"),
    ({"start": "R1"}, "start must be a list of card codes"),
    ({"then": ["R1"] * 30}, "asks for more R1 cards than the deck holds"),
])
def test_stacked_deck_refuses_bad_arguments_with_a_deck_error(kwargs, match):
    args = {"edition": "classic", "num_players": 4, "dealer": 0, **kwargs}
    with pytest.raises(DeckError, match=match):
        stacked_deck(**args)


@pytest.mark.parametrize(("options", "match"), [
    ({"edition": ["classic"]}, "unknown edition"),
    ({"edition": {"classic": 1}}, "unknown edition"),
    ({"target_score": 10**400}, "target_score must be an int from 1 to 1,000,000"),
    ({"target_score": 1_000_001}, "target_score must be an int from 1 to 1,000,000"),
    ({"uno_call": ["auto"]}, "uno_call must be one of explicit, auto"),
    ({"scoring": {}}, "scoring must be one of standard, lowest"),
])
def test_rules_refuse_unhashable_and_unbounded_options(options, match):
    with pytest.raises(RulesError, match=match):
        Rules(**options)
    assert Rules(target_score=1_000_000).target_score == 1_000_000


@pytest.mark.parametrize("seat", [-1, 4, 1.0, "1", True, None, [0]])
def test_every_seat_argument_is_checked(seat):
    game = Game(Rules(num_players=4), seed=1)
    calls = [game.view, game.seat_view, game.hand_value, game.team_of, lambda s: game.known_cards(s, 0),
             lambda s: game.determinize(s, 0), lambda s: observe(game, s)]
    if seat is not None:  # events(None) is every seat's events
        calls.append(game.events)
    for call in calls:
        with pytest.raises(SeatError, match=r"seat must be 0\.\.3"):
            call(seat)
    assert game.view(np.int64(1))["seat"] == 1


@pytest.mark.parametrize("text", ["swap ²", "swap +²", "swap ٣", "play R٧", "swap +10", "x" * 10_000])
def test_odd_action_text_is_an_action_text_error(text):
    game = Game(Rules(num_players=4, seven_zero=True), seed=1)
    with pytest.raises(ActionTextError):
        game.parse_action(text)
    with pytest.raises(ActionTextError):
        game.step(text)


@pytest.mark.parametrize("action", [3.5, None, 55.0, 50.9, np.float32(55), b"55", [55], {55: 1}, True, False,
                                    complex(55)])
def test_wrongly_typed_actions_are_refused_and_change_nothing(action):
    game = Game(Rules(num_players=4), seed=1)
    before = game.to_dict()
    with pytest.raises(ActionTextError, match="an action is an Action, an int id or its text"):
        game.step(action)
    assert game.to_dict() == before


def test_integer_action_ids_of_any_int_type_are_read_and_text_ids_are_not():
    game = Game(Rules(num_players=4), seed=1)
    legal = game.legal_actions()
    with pytest.raises(ActionTextError, match=r"cannot read '55'"):
        game.step("55")
    with pytest.raises(IllegalActionError, match=r"action ids are 0\.\.79, got 80"):
        game.step(np.int16(80))
    game.step(np.int64(int(legal[-1])))  # draw, as a numpy integer
    assert game.phase.text == "play_drawn"


@pytest.mark.parametrize("log_limit", [-1, 1.5, "10", True])
def test_log_limit_is_none_or_a_non_negative_int(log_limit):
    with pytest.raises(RulesError, match="log_limit must be None or an int >= 0"):
        Game(Rules(), seed=1, log_limit=log_limit)


# ---------------------------------------------------------------------------- bounded memory

def long_game(log_limit: int | None, decisions: int = 4000) -> Game:
    game = Game(Rules(edition="masters_of_the_universe", num_players=4, target_score=1_000_000), seed=9,
                log_limit=log_limit)
    rng = random.Random(9)
    for _ in range(decisions):
        if game.is_round_over:
            game.next_round()
        game.step(rng.choice(game.legal_actions()))
    return game


def test_a_long_game_keeps_a_bounded_log_and_counts_every_event():
    unbounded = long_game(None)
    total = unbounded.log_length
    assert total == len(unbounded.log) > 5000
    bounded = long_game(1000)
    assert bounded.to_dict(include_log=False) == unbounded.to_dict(include_log=False)  # same play
    assert bounded.log_length == total
    assert 1000 <= len(bounded.log) <= 1250 + 200  # trimmed in chunks after a step
    assert bounded.log == unbounded.log[-len(bounded.log):]
    since = total - 30
    assert bounded.events(0, since=since) == unbounded.events(0)[since:]
    assert bounded.events(since=0) == bounded.events()  # dropped events are gone
    silent = long_game(0)
    assert silent.log == [] and silent.log_length == total
    data = json.loads(json.dumps(bounded.to_dict()))
    assert Game.from_dict(data).log == bounded.log


def test_a_game_built_from_a_state_or_a_save_is_bounded_at_once_not_at_its_next_step():
    """Issue 27 (noticed in stop 30): ``Game.from_state`` kept an oversized log until the next step. Now the
    log is cut to ``log_limit`` as the game is built, and ``from_dict`` cuts a saved log before reading it:
    the dropped entries are counted in ``log_length`` but never parsed (a garbage entry there is not read)."""
    whole = long_game(None)
    total = whole.log_length
    assert total > 3 * 1000
    game = Game.from_state(whole.state.copy(), log_limit=1000)
    assert len(game.log) == 1000 and game.log_length == total
    assert game.log == whole.log[-1000:]
    assert game.events(0, since=total - 30) == whole.events(0)[total - 30:]
    data = json.loads(json.dumps(whole.to_dict()))
    data["log"][0] = "not an event"  # dropped before it is read
    loaded = Game.from_dict(data, log_limit=1000)
    assert len(loaded.log) == 1000 and loaded.log_length == total and loaded.log == whole.log[-1000:]
    assert Game.from_dict(data, log_limit=0).log == []
    with pytest.raises(StateError, match=r"log\[0\]"):  # kept, it is read and refused
        Game.from_dict(data, log_limit=None)
    data["log"][-1] = "not an event"
    with pytest.raises(StateError, match=r"log\[999\]"):
        Game.from_dict(data, log_limit=1000)


def test_the_default_log_limit_bounds_a_game_of_a_hundred_thousand_decisions():
    from uno_env.core import DEFAULT_LOG_LIMIT

    assert DEFAULT_LOG_LIMIT == 50_000
    assert Game(Rules(), seed=1).log_limit == DEFAULT_LOG_LIMIT


# ---------------------------------------------------------------------------- soak run

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Mutate real saves at random; each must be refused or play on.")
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--saves", type=int, default=96, help="real saves to mutate")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    saves = real_saves(args.saves, args.seed)
    outcomes: Counter[str] = Counter()
    start = time.perf_counter()
    for i in range(args.count):
        data, what = mutate(rng.choice(saves), rng)
        try:
            outcomes[check_mutant(data, rng)] += 1
        except Exception as err:  # noqa: BLE001
            print(f"mutant {i} broke the engine: {what}: {type(err).__name__}: {err}", file=sys.stderr)
            return 1
        if (i + 1) % 10_000 == 0:
            print(f"{i + 1:,} mutants: {dict(outcomes)} ({time.perf_counter() - start:.0f} s)", flush=True)
    print(f"{args.count:,} mutants: {dict(outcomes)}; none broke the engine")
    return 0


if __name__ == "__main__":
    sys.exit(main())



def test_refusals_of_saves_and_replays_never_write_out_unbounded_data():
    """Found by ``tests/soak/soak_web.py``: a replay whose action was a list of 100 annotations was refused with
    a message holding all of them (4,443 characters; a larger list, a larger message), and one whose
    annotation had a key of 100,000 characters with a message of 100,119; save versions and unknown keys
    likewise."""
    from uno_app.terminal import SAVE_FORMAT, saved_game
    from uno_env.replay import Replay, ReplayError

    game = Game(Rules(num_players=2), seed=1)
    huge = [{"agent": "ppo", "top": [[1, 0.5]] * 10}] * 10_000
    replay = {"format": "uno_env.replay", "version": 1, "start": game.to_dict(), "agents": ["a", "b"],
              "actions": [huge], "annotations": [None]}
    cases = [
        (ReplayError, lambda: Replay.from_dict(replay)),
        (ReplayError, lambda: Replay.from_dict({**replay, "format": huge})),
        (ReplayError, lambda: Replay.from_dict({**replay, "version": huge})),
        (ReplayError, lambda: Replay.from_dict({**replay, "actions": [], "annotations": [], "rounds": huge})),
        (ReplayError, lambda: Replay.from_dict({**replay, **{f"k{i}": 1 for i in range(10_000)}})),
        (ReplayError, lambda: Replay.from_dict({**replay, "actions": [0], "annotations": [{"[" * 100_000: 1}]})),
        (StateError, lambda: Game.from_dict({**game.to_dict(), **{"[" * 100_000 + str(i): 1 for i in range(100)}})),
        (StateError, lambda: saved_game({"format": SAVE_FORMAT, "version": huge}, "save")),
        (StateError, lambda: saved_game({"format": SAVE_FORMAT, "version": 1, "x" * 100_000: 1,
                                         **{f"k{i}": i for i in range(10_000)}}, "save")),
    ]
    for error, call in cases:
        with pytest.raises(error) as refused:
            call()
        assert len(str(refused.value)) < 1000, str(refused.value)[:1200]  # a shortened repr, whatever the size
