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
from uno_app.web import protocol, server, sessions  # noqa: E402
from uno_app.web.protocol import MAX_TARGET  # noqa: E402
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


# ---------------------------------------------------------------------- 4. large messages in the parser process
def test_large_messages_are_parsed_in_the_parser_process_cut_and_refused_there(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def here(text: str | bytes) -> Any:
        raise AssertionError(f"a message of {len(text)} bytes was parsed in the server process")

    save = huge_save()
    text = json.dumps({"type": "load", "data": save, "opponents": ["random"], "uno_time": 0})
    assert len(text) > server.LARGE_MESSAGE_BYTES
    too_long = {"format": "uno_env.replay", "version": 1, "start": {}, "agents": [],
                "actions": [0] * (MAX_REPLAY_ACTIONS + 1)}
    nested = '{"type": "load", "data": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "ping"})  # small messages are parsed here, as before
        assert sock.receive()["type"] == "pong"
        monkeypatch.setattr(protocol, "parse_message", here)  # not in the (spawned) parser process
        sock.send(text)
        session = sock.until(lambda m: m["type"] == "session")
        sock.until(lambda m: m["type"] == "table")
        assert len(session_of(client, session["session"]).game.state.log) <= SESSION_LOG_LIMIT
        assert f"at most {MAX_REPLAY_ACTIONS} (MAX_REPLAY_ACTIONS)" in sock.error(
            json.dumps({"type": "replay_open", "data": too_long}))
        assert "one JSON object (RecursionError" in sock.error(nested)
        monkeypatch.setattr(server, "PARSE_TIMEOUT", 0)
        assert f"a message of {len(text)} bytes was not read within 0 s" in sock.error(text)
        assert session_of(client, session["session"]).live  # nothing changed


# ---------------------------------------------------------------------- 5. building a session off the loop
def test_a_slow_build_times_out_and_the_connection_takes_one_build_at_a_time(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()
    create = sessions.PlaySession.create

    def slow(settings: Any) -> sessions.PlaySession:
        started.set()
        release.wait(60)
        return create(settings)

    monkeypatch.setattr(sessions.PlaySession, "create", slow)
    monkeypatch.setattr(sessions, "WORK_TIMEOUT", 0)
    game = {"type": "new_game", "settings": {"opponents": ["random"], "uno_time": 0, "players": 2}}
    with client.websocket_connect("/ws") as ws, client.websocket_connect("/ws") as other_ws:
        sock, other = Socket(ws), Socket(other_ws)
        assert "took more than 0 s (WORK_TIMEOUT)" in sock.error(game)
        assert started.wait(60)
        other.send({"type": "ping"})  # the event loop is free while the build goes on
        assert other.receive()["type"] == "pong"
        assert "previous request is still being worked on" in sock.error(game)
        assert "previous request is still being worked on" in sock.error({"type": "replay_open",
                                                                           "data": recorded(9).replay().to_dict()})
        release.set()
        monkeypatch.setattr(sessions, "WORK_TIMEOUT", 60.0)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the late build ends; its session was never registered
            sock.send(game)
            reply = sock.receive()
            if reply["type"] == "session":
                break
            assert "still being worked on" in reply["message"], reply
            time.sleep(0.01)
        assert reply["type"] == "session"
        assert len(client.app.state.registry.sessions) == 1  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- 6. a session's own game is capped
def test_a_play_session_records_at_most_max_replay_actions(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = set()
    for cap in (5, 6, 7, 8):
        monkeypatch.setattr(sessions, "MAX_REPLAY_ACTIONS", cap)
        with client.websocket_connect("/ws") as ws:
            sock = Socket(ws)
            sock.send({"type": "new_game", "settings": {"players": 2, "seed": 3, "opponents": ["random"],
                                                        "uno_time": 0, "target_score": 500}})
            session = sock.until(lambda m: m["type"] == "session")
            table = sock.until(lambda m: m["type"] == "table")
            recorder = session_of(client, session["session"]).recorder
            while len(recorder.actions) < cap:
                if not table["view"]["my_turn"]:
                    table = sock.receive()
                    continue
                sock.send({"type": "act", "action": table["view"]["legal_action_ids"][0]})
                table = sock.until(lambda m: m["type"] == "table")
            while sock.ws and table["view"]["my_turn"] is False and table["error"] is None:
                table = sock.until(lambda m: m["type"] == "table")  # the AI's turn: it stops, saying why
            limit = f"this game holds {cap} actions, the most a session records (MAX_REPLAY_ACTIONS)"
            if table["view"]["my_turn"]:
                cases.add("person")
                action = table["view"]["legal_action_ids"][0]
                assert limit in sock.error({"type": "act", "action": action})
            else:
                cases.add("ai")
                assert limit in table["error"]
            assert len(recorder.actions) == cap
            sock.send({"type": "save"})
            saved = sock.until(lambda m: m["type"] == "saved")["data"]
            assert len(saved["replay"]["actions"]) == cap
    assert cases == {"person", "ai"}  # the cap met both a person's move and an AI's


def test_a_watched_game_stops_at_max_replay_actions_and_its_replay_opens(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "MAX_REPLAY_ACTIONS", 7)
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "watch", "settings": {"players": 2, "agents": ["random"], "seed": 1, "delay": 0,
                                                 "target_score": MAX_TARGET}})
        sock.until(lambda m: m["type"] == "session")
        stopped = sock.receive()
        while stopped["type"] == "frame":
            last = stopped
            stopped = sock.receive()
        assert stopped["type"] == "error" and "this game holds 7 actions, the most a session records" in stopped[
            "message"]
        assert last["index"] == 7 and not last["over"]
        sock.send({"type": "replay_open", "source": "game"})
        sock.until(lambda m: m["type"] == "session")
        frame = sock.until(lambda m: m["type"] == "frame")
        assert frame["length"] == frame["index"] == 7 and frame["hands"] == last["hands"]
        sock.send({"type": "replay_download"})
        assert len(sock.until(lambda m: m["type"] == "replay_data")["data"]["actions"]) == 7


# ---------------------------------------------------------------------- 7. JSON in slices (uno_app.web.pieces)
def test_pieces_encode_as_json_does_and_split_and_join_give_back_the_data() -> None:
    from uno_app.web import pieces

    recorder = recorded(60)
    replay = recorder.replay().to_dict()
    replay["actions"] = replay["actions"] * 100  # past pieces.SLICE, and not a multiple of it
    replay["annotations"] = [{"top": [[a, 0.5], [55, 0.25]]} for a in replay["actions"]]
    message = {"type": "saved", "data": {"replay": replay, "game": recorder.game.to_dict(), "keys": {1: True, None: 2}},
               "empty": [], "long": list(range(pieces.SLICE + 1)), "text": "ünïcode ✓", "nan": float("nan")}
    assert len(replay["actions"]) > 2 * pieces.SLICE and len(replay["actions"]) % pieces.SLICE
    assert pieces.encode(message) == json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    data = json.loads(json.dumps(message))
    split = pieces.split(data)
    assert isinstance(split["data"]["replay"]["annotations"], pieces.Slices)
    assert split["data"]["game"] == data["data"]["game"]  # nothing long in it: passed whole
    assert json.dumps(pieces.join(split)) == json.dumps(data)
    deep: dict[str, Any] = {"long": list(range(pieces.SLICE + 1))}
    for _ in range(pieces.MAX_DEPTH):
        deep = {"a": deep}
    assert pieces.split(deep) == deep  # past MAX_DEPTH mappings, values travel whole


def test_a_save_or_replay_download_is_built_and_encoded_in_a_worker_thread(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27.1: a game at MAX_REPLAY_ACTIONS saves as megabytes; one json.dumps of it held the event loop."""
    from uno_app.web import pieces

    loop_threads: set[int] = set()
    encoded: list[tuple[str, int]] = []
    encode, save_data = pieces.encode, sessions.PlaySession.save_data

    def recording_encode(message: Any) -> str:
        encoded.append((message["type"], threading.get_ident()))
        return encode(message)

    def recording_save_data(self: sessions.PlaySession) -> dict[str, Any]:
        encoded.append(("save_data", threading.get_ident()))
        return save_data(self)

    async def ping_thread() -> None:
        loop_threads.add(threading.get_ident())

    monkeypatch.setattr(pieces, "encode", recording_encode)
    monkeypatch.setattr(sessions.PlaySession, "save_data", recording_save_data)
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        client.portal.call(ping_thread)  # type: ignore[union-attr]  # the event loop's thread
        sock.send({"type": "new_game", "settings": {"players": 2, "seed": 3, "opponents": ["random"], "uno_time": 0}})
        sock.until(lambda m: m["type"] == "table")
        sock.send({"type": "save"})
        saved = sock.until(lambda m: m["type"] == "saved")
        assert Game.from_dict(saved["data"]["game"]).to_dict() == saved["data"]["game"]
        sock.send({"type": "watch", "settings": {"players": 2, "agents": ["random"], "seed": 1, "delay": 10}})
        sock.until(lambda m: m["type"] == "frame")
        sock.send({"type": "replay_download"})  # a watched game's replay is offered at any time
        assert sock.until(lambda m: m["type"] == "replay_data")["data"]["format"] == "uno_env.replay"
    assert [kind for kind, _ in encoded] == ["save_data", "saved", "replay_data"]
    assert loop_threads and all(thread not in loop_threads for _, thread in encoded)
    assert not server._large({"type": "table", "events": [{}] * server.LARGE_EVENTS})  # small: encoded on the loop
    assert server._large({"type": "table", "events": [{}] * (server.LARGE_EVENTS + 1)})


# ---------------------------------------------------------------------- 8. what all sessions hold together
def test_the_held_games_keep_at_most_max_actions_recorded_actions_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """One session is bounded by MAX_REPLAY_ACTIONS, but a 100,000-action annotated save holds about 65 MiB
    (measured), so 200 of them would hold 13 GiB: the registry counts every held session's recorded actions
    (``--max-actions``). A new session that does not fit evicts closed tabs' games first, else is refused;
    a growing game records no more at the bound, saying why."""
    replay = recorded(60).replay().to_dict()
    n = len(replay["actions"])
    most = 2 * n - 1  # one such replay fits, two do not
    monkeypatch.setattr(sessions, "CROWD_CHECK_EVERY", 1)
    with TestClient(server.create_app(max_actions=most)) as client:
        registry = client.app.state.registry  # type: ignore[attr-defined]
        with client.websocket_connect("/ws") as first_ws:
            first = Socket(first_ws)
            first.send({"type": "replay_open", "data": replay})
            held = first.until(lambda m: m["type"] == "session")
            with client.websocket_connect("/ws") as ws:
                message = Socket(ws).error({"type": "replay_open", "data": replay})
                assert f"this game's {n} recorded actions do not fit beside the {n} the server's games hold" in message
                assert f"(at most {most} together)" in message
            assert list(registry.sessions) == [held["session"]]
        with client.websocket_connect("/ws") as ws:  # the first tab closed: its game makes way
            sock = Socket(ws)
            sock.send({"type": "replay_open", "data": replay})
            sock.until(lambda m: m["type"] == "frame")
            assert held["session"] not in registry.sessions and registry.stats()["evicted"] == 1
            with client.websocket_connect("/ws") as watch_ws:  # n held: a watched game stops at n - 1 more
                watcher = Socket(watch_ws)
                watcher.send({"type": "watch", "settings": {"players": 2, "agents": ["random"], "seed": 1,
                                                            "delay": 0, "target_score": MAX_TARGET}})
                stopped = watcher.until(lambda m: m["type"] == "error")
                assert f"the server's games hold {most} recorded actions together" in stopped["message"]
                assert "--max-actions" in stopped["message"]
                assert registry.stats()["held_actions"] == most
