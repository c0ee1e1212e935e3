"""The web app's bounds per session (issue 27.1): loaded logs are cut before they are parsed,
long replays are refused before their actions are read, and replay frames are built off the
event loop with a timeout."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web app needs the web extra: pip install -e '.[web]'")

from fastapi.testclient import TestClient  # noqa: E402

from tests.test_web_api import Socket  # noqa: E402
from uno_app.terminal import SAVE_FORMAT, SAVE_VERSION  # noqa: E402
from uno_app.web import server, sessions  # noqa: E402
from uno_app.web.sessions import MAX_REPLAY_ACTIONS, SESSION_LOG_LIMIT, LimitError, bounded  # noqa: E402
from uno_env.core import Game, Rules  # noqa: E402
from uno_env.replay import Recorder, Replay  # noqa: E402

HUGE = 60_000  # log entries: more than SESSION_LOG_LIMIT and more than Game's default log_limit
EVENT_BYTES = 200  # a generous bound on one event in a table message (about 85 bytes measured)


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(server.create_app()) as test_client:
        yield test_client


def recorded(actions: int, seed: int = 5) -> Recorder:
    """A 2-player game after ``actions`` seeded random actions (``Game`` keeps every event)."""
    rng = random.Random(seed)
    recorder = Recorder(Game(Rules(num_players=2), seed=seed, log_limit=None), ["you", "random"])
    for _ in range(actions):
        if recorder.game.is_round_over:
            break
        legal = recorder.game.legal_actions()
        recorder.step(rng.choice([a for a in legal if a < 55] or legal))
    return recorder


def padded(game_data: dict[str, Any], entries: int = HUGE) -> dict[str, Any]:
    """The game data with its (valid) log entries repeated to ``entries``: every entry stays valid."""
    log = game_data["log"]
    return {**game_data, "log": [log[i % len(log)] for i in range(entries)]}


def huge_save() -> dict[str, Any]:
    """This app's save format: a game and its replay, both with logs of ``HUGE`` entries."""
    recorder = recorded(9)
    replay = recorder.replay().to_dict()
    replay["start"] = padded(replay["start"])
    return {"format": SAVE_FORMAT, "version": SAVE_VERSION, "human_seat": 0, "opponents": ["random"],
            "forgetful": 0.0, "seed": 5, "uno_prompt": False, "game": padded(recorder.game.to_dict()),
            "replay": replay}


def session_of(client: TestClient, session_id: str) -> Any:
    return client.app.state.registry.sessions[session_id]  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- 1. logs cut on load
def test_bounded_cuts_every_log_of_a_copy_and_keeps_the_last_entries() -> None:
    save = huge_save()
    before = json.dumps(save)
    cut = bounded(save)
    assert json.dumps(save) == before  # the data given is not changed
    assert cut["game"]["log"] == save["game"]["log"][-SESSION_LOG_LIMIT:]
    assert cut["replay"]["start"]["log"] == save["replay"]["start"]["log"][-SESSION_LOG_LIMIT:]
    bare = bounded(save["game"])
    assert bare["log"] == save["game"]["log"][-SESSION_LOG_LIMIT:]
    replay_file = bounded(save["replay"])
    assert len(replay_file["start"]["log"]) == SESSION_LOG_LIMIT
    short = recorded(9).game.to_dict()
    assert bounded(short) is short  # a log within the limit is left as it is
    assert bounded({"format": "pickle"}) == {"format": "pickle"}  # not a save: the parser says so


@pytest.mark.parametrize("kind", ["save", "bare"])
def test_a_save_with_a_huge_log_loads_with_a_small_first_message_and_plays_on(client: TestClient, kind: str) -> None:
    save = huge_save()
    data = save if kind == "save" else save["game"]
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "load", "data": data, "opponents": ["random"], "uno_time": 0})
        session = sock.until(lambda m: m["type"] == "session")
        first = sock.until(lambda m: m["type"] == "table")
        assert len(first["events"]) <= SESSION_LOG_LIMIT
        assert len(json.dumps(first)) < SESSION_LOG_LIMIT * EVENT_BYTES  # was about 85 bytes per loaded entry
        game = session_of(client, session["session"]).game
        assert game.log_limit == SESSION_LOG_LIMIT and len(game.state.log) <= SESSION_LOG_LIMIT
        table = first
        for _ in range(6):  # play continues
            if table["over"] or table["view"]["phase"] in ("round_over", "game_over"):
                break
            if not table["view"]["my_turn"]:
                table = sock.decision()
                continue
            index = table["index"]
            sock.send({"type": "act", "action": table["view"]["legal_actions"][0]})
            table = sock.decision()
            assert table["index"] > index and table["error"] is None
        assert len(game.state.log) <= SESSION_LOG_LIMIT + (SESSION_LOG_LIMIT >> 2)


def test_a_replay_file_with_a_huge_start_log_opens_with_a_small_frame(client: TestClient) -> None:
    replay = huge_save()["replay"]
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "replay_open", "data": {**replay, "start": replay["start"]}})
        session = sock.until(lambda m: m["type"] == "session")
        sock.until(lambda m: m["type"] == "frame")
        sock.send({"type": "replay_seek", "index": 0})
        start = sock.until(lambda m: m["type"] == "frame")
        assert len(start["events"]) == SESSION_LOG_LIMIT and len(json.dumps(start)) < SESSION_LOG_LIMIT * EVENT_BYTES
        held = session_of(client, session["session"]).replay_data.start
        assert len(held["log"]) == SESSION_LOG_LIMIT


# ---------------------------------------------------------------------- 2. replay length
def test_a_replay_longer_than_the_limit_is_refused_before_its_actions_are_read(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the replay was parsed")

    monkeypatch.setattr(Replay, "from_dict", never)
    too_long = {"format": "uno_env.replay", "version": 1, "start": {}, "agents": [],
                "actions": [0] * (MAX_REPLAY_ACTIONS + 1)}
    with pytest.raises(LimitError, match=f"at most {MAX_REPLAY_ACTIONS} \\(MAX_REPLAY_ACTIONS\\)"):
        bounded(too_long)
    save = {"format": SAVE_FORMAT, "version": SAVE_VERSION, "game": {}, "replay": too_long}
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        for message in ({"type": "replay_open", "data": too_long}, {"type": "replay_open", "data": save},
                        {"type": "load", "data": save}):
            text = sock.error(message)
            assert f"{MAX_REPLAY_ACTIONS + 1} actions" in text and f"at most {MAX_REPLAY_ACTIONS}" in text
        sock.send({"type": "ping"})
        assert sock.receive()["type"] == "pong"


def test_a_replay_at_the_limit_opens(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = recorded(9).replay()
    monkeypatch.setattr(sessions, "MAX_REPLAY_ACTIONS", len(replay.actions))
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "replay_open", "data": replay.to_dict()})
        assert sock.until(lambda m: m["type"] == "frame")["length"] == len(replay.actions)
        longer = recorded(10).replay().to_dict()
        assert "at most 9 (MAX_REPLAY_ACTIONS)" in sock.error({"type": "replay_open", "data": longer})


# ---------------------------------------------------------------------- 3. frames off the event loop
def test_a_slow_frame_times_out_for_its_visitor_while_other_connections_answer(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()
    build = sessions.ReplaySession.frame

    def slow(self: sessions.ReplaySession, index: int) -> dict[str, Any]:
        started.set()
        release.wait(60)
        return build(self, index)

    monkeypatch.setattr(sessions.ReplaySession, "frame", slow)
    monkeypatch.setattr(sessions, "FRAME_TIMEOUT", 0)
    replay = recorded(9).replay()
    with client.websocket_connect("/ws") as ws, client.websocket_connect("/ws") as other_ws:
        sock, other = Socket(ws), Socket(other_ws)
        sock.send({"type": "replay_open", "data": replay.to_dict()})
        session = sock.until(lambda m: m["type"] == "session")
        reply = sock.receive()
        assert reply["type"] == "error" and "took more than 0 s to build" in reply["message"], reply
        assert started.wait(60)
        other.send({"type": "ping"})  # the event loop is free while the frame is still being built
        assert other.receive()["type"] == "pong" and not release.is_set()
        assert "still building" in sock.error({"type": "replay_seek", "index": 0})
        release.set()
        building = session_of(client, session["session"]).building
        deadline = time.monotonic() + 60
        while not building.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        monkeypatch.setattr(sessions, "FRAME_TIMEOUT", 60.0)
        sock.send({"type": "replay_seek", "index": 3})
        frame = sock.until(lambda m: m["type"] == "frame")
        assert frame["index"] == 3 and frame["hands"] == replay.game_at(3).hands
