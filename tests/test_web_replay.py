"""The replay format (uno_env.replay): recording, replaying, strict loading of hostile files."""

from __future__ import annotations

import copy
import doctest
import json
import random
import sys
from typing import Any

import pytest

import uno_env.replay
from uno_env.core import Game, Rules, StateError
from uno_env.core.cards import EDITIONS
from uno_env.replay import MAX_ACTIONS, Recorder, Replay, ReplayError


def test_module_docstring_runs() -> None:
    result = doctest.testmod(uno_env.replay)
    assert result.attempted >= 4 and result.failed == 0


def record(rules: Rules, seed: int, *, decks: bool = False, annotate: bool = False) -> tuple[Recorder, list[dict[str, Any]]]:
    """A whole game of seeded random plays; returns the recorder and the position after every action."""
    rng = random.Random(seed)
    recorder = Recorder(Game(rules, seed=seed), [f"bot{s}" for s in range(rules.num_players)], meta={"seed": seed})
    positions = [recorder.game.to_dict(include_log=False)]
    edition = EDITIONS[rules.edition]
    while not recorder.game.is_game_over:
        if recorder.game.is_round_over:
            deck = [edition.code(k) for k in edition.deck()] if decks else None
            if deck is not None:
                rng.shuffle(deck)
            recorder.next_round(deck)
            continue
        legal = recorder.game.legal_actions()
        plays = [a for a in legal if a < 55]  # play when possible: rounds end sooner than with random draws
        action = rng.choice(plays or legal)
        note = {"agent": "ppo", "top": [[int(action), 0.5], [int(legal[0]), 0.25]]} if annotate else None
        recorder.step(action, note)
        positions.append(recorder.game.to_dict(include_log=False))
    return recorder, positions


@pytest.mark.parametrize("edition", sorted(EDITIONS))
def test_replay_gives_every_recorded_position(edition: str) -> None:
    rules = Rules(edition=edition, num_players=3, target_score=500, stacking=True, seven_zero=True)
    recorder, positions = record(rules, seed=11, decks=True, annotate=True)
    replay = Replay.from_dict(json.loads(recorder.replay().to_json()))
    assert len(replay.actions) == len(positions) - 1 and replay.decks
    for index, game in enumerate(replay.positions()):
        expected = positions[index]
        if index == len(replay.actions):
            assert game.is_game_over
        assert game.to_dict(include_log=False) == expected, index
    assert replay.game_at(7).to_dict(include_log=False) == positions[7]
    assert replay.annotations[0] == {"agent": "ppo", "top": [[replay.actions[0], 0.5], [replay.annotations[0]["top"][1][0], 0.25]]}


def test_rounds_dealt_after_the_last_action_are_replayed() -> None:
    recorder, _ = record(Rules(num_players=2, target_score=300), seed=4)
    # Stop the second recording right after a round was dealt (no action of that round yet).
    rules = Rules(num_players=2, target_score=300)
    short = Recorder(Game(rules, seed=4), ["a", "b"])
    full = recorder.replay()
    index = 0
    while short.game.round_number < 2:
        if short.game.is_round_over:
            short.next_round()
        else:
            short.step(full.actions[index])
            index += 1
    replay = Replay.from_dict(short.replay().to_dict())
    assert replay.rounds == 2 and replay.final_game().round_number == 2
    assert replay.final_game().to_dict(include_log=False) == short.game.to_dict(include_log=False)


def test_save_and_load_a_file(tmp_path: Any) -> None:
    recorder, positions = record(Rules(num_players=4, target_score=100), seed=2)
    path = tmp_path / "game.replay.json"
    recorder.replay().save(path)
    loaded = Replay.load(path)
    assert loaded.final_game().to_dict(include_log=False) == positions[-1]
    assert loaded.meta == {"seed": 2} and loaded.agents == ["bot0", "bot1", "bot2", "bot3"]


def test_a_failed_step_records_nothing() -> None:
    recorder = Recorder(Game(Rules(num_players=2), seed=1), ["a", "b"])
    illegal = next(a for a in range(80) if a not in recorder.game.legal_actions())
    with pytest.raises(ValueError):
        recorder.step(illegal)
    with pytest.raises(ValueError):
        recorder.step("fly away")
    assert recorder.actions == [] and recorder.annotations == []


@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    recorder, _ = record(Rules(num_players=3, target_score=100), seed=9, decks=True, annotate=True)
    return recorder.replay().to_dict()


def mutated(good: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(good)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


BAD = [
    (("format",), "uno_env.game", "format must be"),
    (("version",), 2, "version must be 1"),
    (("extra",), 1, "unknown key"),
    (("start",), KeyError, "missing key"),
    (("start", "hands"), [], "start:"),
    (("agents",), ["a", "b"], "agents must be a list of 3"),
    (("agents",), ["a", "b", 7], "agents must be a list of 3"),
    (("agents",), ["a", "b", "x" * 500], "at most"),
    (("actions",), "55", "actions must be a list"),
    (("actions", 0), 80, "actions[0] must be an action id"),
    (("actions", 0), True, "actions[0] must be an action id"),
    (("actions", 0), 1.0, "actions[0] must be an action id"),
    (("annotations",), [], "one entry"),
    (("annotations", 0), {"agent": "x", "eval": "os.system('x')"}, "unknown key"),
    (("annotations", 0), {"top": [[3, float("nan")]]}, "probability"),
    (("annotations", 0), {"top": [[3, 1.5]]}, "probability"),
    (("annotations", 0), {"top": [[99, 0.5]]}, "action id"),
    (("annotations", 0), {"top": [[1, 0.1]] * 11}, "at most 10"),
    (("annotations", 0), {"agent": 5}, "agent must be a label"),
    (("decks", "99"), ["R7"], "never dealt"),
    (("decks", "x"), ["R7"], "not a round number"),
    (("rounds",), 1, "rounds is 1"),
    (("rounds",), "2", "rounds must be an int"),
    (("meta",), {"f": {"nested": 1}}, "meta"),
    (("meta",), {"n": float("inf")}, "meta"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD, ids=[m for _, _, m in BAD])
def test_hostile_replays_are_refused_with_a_clear_error(good: dict[str, Any], path: tuple[Any, ...], value: Any,
                                                         message: str) -> None:
    data = mutated(good, path, value)
    with pytest.raises(ReplayError, match="invalid replay") as info:
        Replay.from_dict(data)
    assert message in str(info.value)
    assert isinstance(info.value, StateError) and isinstance(info.value, ValueError)


def test_an_illegal_action_is_named_by_its_index(good: dict[str, Any]) -> None:
    game = Game.from_dict(good["start"])
    illegal = next(a for a in range(80) if a not in game.legal_actions())
    with pytest.raises(ReplayError, match=r"actions\[0\] .*not legal"):
        Replay.from_dict(mutated(good, ("actions", 0), illegal))
    with pytest.raises(ReplayError, match="already over"):
        Replay.from_dict({**good, "actions": good["actions"] + [55], "annotations": good["annotations"] + [None]})


def test_a_deck_that_is_not_a_deck_is_refused(good: dict[str, Any]) -> None:
    round_two = next(iter(good["decks"]))
    deck = list(good["decks"][round_two])
    deck[0] = deck[1]
    with pytest.raises(ReplayError, match="wrong counts"):
        Replay.from_dict(mutated(good, ("decks", round_two), deck))


def test_text_and_files_that_are_not_replays(tmp_path: Any) -> None:
    with pytest.raises(ReplayError, match="not JSON"):
        Replay.from_json("{not json")
    with pytest.raises(ReplayError, match="not JSON"):
        Replay.from_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ReplayError, match="JSON object"):
        Replay.from_json("[1, 2]")
    with pytest.raises(ReplayError, match="at most"):
        Replay.from_dict({"format": "uno_env.replay", "version": 1, "start": Game(seed=1).to_dict(),
                          "agents": ["a"] * 4, "actions": [55] * (MAX_ACTIONS + 1)})
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(uno_env.replay.MAX_FILE_BYTES + 1)
    with pytest.raises(ReplayError, match="bytes"):
        Replay.load(path)
    with pytest.raises(ReplayError, match="bytes"):  # endless, and its stated size is 0
        Replay.load("/dev/zero")


def test_labels_are_never_built_or_imported(good: dict[str, Any]) -> None:
    data = mutated(good, ("agents",), ["json.tool:main", "agents.ppo_agent:PPOAgent", "os:system"])
    data["annotations"][0] = {"agent": "webbrowser:open"}
    before = set(sys.modules)
    replay = Replay.from_dict(data)
    assert replay.agents[2] == "os:system"
    assert {"json.tool", "webbrowser"}.isdisjoint(set(sys.modules) - before)


# ---------------------------------------------------------------------- uno-env evaluate --replays
def test_recorded_games_are_the_evaluated_games() -> None:
    from agents.registry import make_agent
    from agents.tournament import evaluate
    from uno_app.replays import record_games

    rules = Rules(num_players=2, target_score=100)
    result = evaluate(["ppo", "rule"], rules, games=4, seed=5, unit="game")
    lineup = [make_agent(s, edition="classic", num_players=2) for s in ("ppo", "rule")]
    for number, record, replay in record_games(lineup, rules, [1, 2], seed=5, unit="game"):
        assert record == result.records[number]
        replay = Replay.from_dict(json.loads(replay.to_json()))
        final = replay.final_game()
        assert final.is_game_over and replay.meta["game"] == number
        winner_seat = final.winners[0]
        assert record.wins[record.seats.index(winner_seat)] == 1.0
        ppo_seat = record.seats[0]
        assert replay.agents[ppo_seat] == "ppo[classic_2p_long_points]"
        game = replay.start_game()
        ppo_notes = [replay.annotations[i] for i in range(len(replay.actions)) if replay.apply(game, i) == ppo_seat]
        assert any(note and note["top"] for note in ppo_notes)
        assert all(note is None for i, note in enumerate(replay.annotations) if note and "agent" in note)


def test_evaluate_writes_the_chosen_replays(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from uno_app.evaluate import main

    args = ["--agents", "rule", "random", "--games", "6", "--rule", "target_score=60", "--unit", "game",
            "--no-progress", "--replays", str(tmp_path)]
    assert main([*args, "--replay-games", "0,4-5"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game-0.json", "game-4.json", "game-5.json"]
    assert Replay.load(tmp_path / "game-4.json").meta == {"seed": 0, "deal": 2, "rotation": 0, "unit": "game",
                                                           "game": 4}
    assert "wrote 3 replay file(s)" in capsys.readouterr().err
    for bad, message in ((["--replay-games", "6"], "game 6 is not played"), (["--replay-games", "5-2"], "backwards"),
                         (["--replay-games", "x"], "game numbers and ranges"), (["--round-robin"], "leave out"),
                         (["--replays", str(tmp_path / "nowhere"), "--replay-games", "0"], "not a directory")):
        assert main([*args, *bad]) == 2
        assert message in capsys.readouterr().err
    assert len(list(tmp_path.iterdir())) == 3
