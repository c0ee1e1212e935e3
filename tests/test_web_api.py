"""The web app's server through FastAPI's TestClient: the protocol, what each browser is sent, saves, expiry."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web app needs the web extra: pip install -e '.[web]'")

from fastapi.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from agents.registry import shipped_checkpoints  # noqa: E402
from uno_app.terminal import SAVE_FORMAT, read_save  # noqa: E402
from uno_app.web import protocol, server  # noqa: E402
from uno_app.web.seats import OPPONENTS, check_spec  # noqa: E402
from uno_app.web.sessions import full_payload, seat_payload  # noqa: E402
from uno_env.core import Game, Rules  # noqa: E402
from uno_env.replay import Replay  # noqa: E402

STATIC = Path(server.__file__).parent / "static"
TABLE_KEYS = {"type", "mode", "seat", "labels", "view", "events", "actor", "action", "uno", "index", "over", "error",
              "session"}


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(server.create_app()) as test_client:
        yield test_client


class Socket:
    """A test browser tab: sends JSON, reads messages until one matches."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []
        assert self.receive()["type"] == "hello"

    def send(self, message: Any) -> None:
        self.ws.send_text(message if isinstance(message, str) else json.dumps(message))

    def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = self.ws.receive_json()
        self.seen.append(message)
        return message

    def until(self, accept: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            message = self.receive()
            if accept(message):
                return message
            assert message["type"] != "error", message

    def error(self, message: Any) -> str:
        self.send(message)
        reply = self.receive()
        assert reply["type"] == "error", reply
        return str(reply["message"])

    def decision(self) -> dict[str, Any]:
        """The next table message that waits for this seat (or ends the round)."""
        return self.until(lambda m: m["type"] == "table" and (m["view"]["my_turn"] or m["view"]["phase"] in
                                                               ("round_over", "game_over")))


def new_game(sock: Socket, **settings: Any) -> dict[str, Any]:
    sock.send({"type": "new_game", "settings": settings})
    session = sock.until(lambda m: m["type"] == "session")
    assert session["kind"] == "play"
    return session


def session_of(client: TestClient, session: dict[str, Any]) -> Any:
    return client.app.state.registry.sessions[session["session"]]  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- the page
def test_the_page_and_its_files_come_from_the_package(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for name in ("app.js", "app.css"):
        assert client.get(f"/static/{name}").status_code == 200
    for path in STATIC.iterdir():  # no CDN, no remote font or script at run time
        text = path.read_text()
        assert "https://" not in text and "http://" not in text and "//cdn" not in text, path.name
    assert client.get("/static/../server.py").status_code == 404


def test_options_offer_the_editions_and_only_offered_opponents(client: TestClient) -> None:
    options = client.get("/api/options").json()
    assert set(options["editions"]) == {"classic", "monster_high", "angry_birds", "masters_of_the_universe"}
    assert options["editions"]["monster_high"]["colors"] == ["blue", "green", "pink", "yellow"]
    assert options["editions"]["angry_birds"]["special"]["code"] == "WK"
    assert all(options["editions"][e]["special"]["flavour"] for e in ("monster_high", "angry_birds",
                                                                       "masters_of_the_universe"))
    assert options["opponents"][:len(OPPONENTS)] == list(OPPONENTS)
    assert {f"ppo:{name}" for name in shipped_checkpoints()} <= set(options["opponents"])


@pytest.mark.parametrize("spec", ["agents.ismcts:ISMCTSAgent", "os:system", "ppo:/etc/passwd", "ppo:../checkpoints/x",
                                  "ppo:path=agents/checkpoints/universal.safetensors", "rule:challenge=false", "human", "", 5])
def test_only_offered_opponents_are_accepted(spec: Any) -> None:
    with pytest.raises(ValueError, match="opponents are ppo, rule, ismcts, simple, random"):
        check_spec(spec)


# ---------------------------------------------------------------------- safety of what a seat is sent
def random_positions(count: int, seed: int) -> Iterator[Game]:
    rng = random.Random(seed)
    rules = [Rules(edition="monster_high", num_players=4), Rules(edition="angry_birds", num_players=3),
             Rules(edition="masters_of_the_universe", num_players=5, seven_zero=True),
             Rules(num_players=4, stacking=True, teams=True)]
    for i in range(count):
        game = Game(rules[i % len(rules)], seed=rng.randrange(10**6))
        for _ in range(rng.randrange(1, 200)):
            if game.is_round_over:
                break
            legal = game.legal_actions()
            plays = [a for a in legal if a < 55]
            game.step(rng.choice(plays if plays and rng.random() < 0.8 else legal))
        yield game


def test_a_seat_payload_never_depends_on_cards_hidden_from_the_seat() -> None:
    """Resampling every hidden card (determinize) leaves each seat's payload exactly as it was."""
    for index, game in enumerate(random_positions(40, seed=5)):
        for seat in range(game.num_players):
            payload, _ = seat_payload(game, seat, 0)
            other, _ = seat_payload(game.determinize(seat, index), seat, 0)
            assert payload == other
            text = json.dumps(payload)
            assert '"hands"' not in text and '"draw_pile"' not in text and '"rng_state"' not in text


def test_the_revealed_table_holds_every_hand() -> None:
    game = next(random_positions(1, seed=2))
    payload, _ = full_payload(game, 0)
    assert payload["hands"] == game.hands and payload["events"] == game.events()


def test_every_message_of_a_whole_game_is_the_seats_view_and_events(client: TestClient) -> None:
    """Play a whole game as seat 1; check each message against the position it describes (rebuilt from the replay)."""
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        session = new_game(sock, edition="angry_birds", players=3, seat=1, opponents=["ppo", "random"], seed=21,
                           target_score=120, uno_time=0, forgetful=0.3)
        rng = random.Random(3)
        while True:
            message = sock.decision()
            if message["over"]:
                break
            if message["view"]["phase"] == "round_over":
                sock.send({"type": "next_round"})
                continue
            legal = message["view"]["legal_actions"]
            plays = [a for a in legal if a.startswith("play")]
            sock.send({"type": "act", "action": rng.choice(plays or legal)})
        sock.send({"type": "replay_download"})
        replay = Replay.from_dict(sock.until(lambda m: m["type"] == "replay_data")["data"])
    tables = [m for m in sock.seen if m["type"] == "table"]
    assert len(tables) > 50 and tables[-1]["over"]
    assert {m["session"] for m in sock.seen if "session" in m} == {session["session"]}
    cursor = 0
    for message in tables:
        assert set(message) == TABLE_KEYS
        game = replay.game_at(message["index"])
        if game.round_number < message["view"]["round"]:
            game.next_round()
        assert message["view"] == game.view(1)
        events = game.events(1)
        assert message["events"] == events[cursor:]
        cursor = len(events)
        if message["actor"] is not None:
            assert message["action"] == str(game.action(replay.actions[message["index"] - 1]))
    assert replay.agents[1] == "you" and replay.agents[2].startswith("ppo") and replay.agents[0] == "random"
    assert any(a and a.get("top") for a in replay.annotations)  # the PPO seat's probabilities are recorded


# ---------------------------------------------------------------------- bad messages change nothing
BAD_MESSAGES: list[tuple[Any, str]] = [
    ("{not json", "a message is one JSON object"),
    ("[1, 2]", "one JSON object with a 'type'"),
    ({"type": "fly"}, "unknown message type 'fly'; types are new_game"),
    ({"action": "draw"}, "the message has no 'type'; types are new_game"),
    ({"type": "act"}, "action: Field required"),
    ({"type": "act", "action": "draw", "extra": 1}, "extra: Extra inputs are not permitted"),
    ({"type": "act", "action": 1.5}, "bad 'act' message"),
    ({"type": "act", "action": "fly away"}, "cannot read 'fly away'"),
    ({"type": "act", "action": 99}, "action ids are ints 0..79"),
    ({"type": "act", "action": "x" * 100}, "at most 40 characters"),
    ({"type": "next_round"}, "the round is not over yet"),
    ({"type": "replay_open", "source": "game"}, "available once the game is over"),
    ({"type": "replay_download"}, "available once the game is over"),
    ({"type": "replay_seek", "index": 3}, "a play session does not take 'replay_seek'"),
    ({"type": "new_game", "settings": {"players": 11}}, "settings.players: Input should be less than or equal to 10"),
    ({"type": "new_game", "settings": {"players": "4"}}, "settings.players: Input should be a valid integer"),
    ({"type": "new_game", "settings": {"seat": 5}}, "seat must be 0..3"),
    ({"type": "new_game", "settings": {"edition": "pokemon"}}, "settings.edition"),
    ({"type": "new_game", "settings": {"teams": True, "players": 3}}, "teams needs an even number"),
    ({"type": "new_game", "settings": {"opponents": ["rule", "rule"]}}, "opponents needs 1 or 3 agents"),
    ({"type": "new_game", "settings": {"opponents": ["os:system"]}}, "unknown opponent 'os:system'"),
    ({"type": "new_game", "settings": {"opponents": ["ppo:/tmp/evil.safetensors"]}}, "unknown opponent"),
    ({"type": "load", "data": {"format": "uno_env.game", "hands": []}}, "this file is not a saved game"),
    ({"type": "load", "data": {"format": "pickle"}}, "this file is not a saved game"),
    ({"type": "load", "data": {"format": "uno_env.play", "version": 1, "game": {}, "eval": "x"}}, "unknown key(s) 'eval'"),
    ({"type": "replay_open", "data": {"format": "uno_env.replay", "version": 1}}, "invalid replay: missing key"),
    ({"type": "resume", "session": "abc", "token": "def"}, "no such session"),
    ("[" * 50_000 + "]" * 50_000, "a message is one JSON object"),
    ("x" * (protocol.MAX_MESSAGE_BYTES + 1), "messages are at most"),
]


def test_bad_messages_get_a_clear_error_and_change_nothing(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        session = new_game(sock, players=4, opponents=["rule"], seed=8)
        table = sock.decision()
        game = session_of(client, session).game
        before = game.to_dict()
        for message, expected in BAD_MESSAGES:
            assert expected in sock.error(message), message
            assert game.to_dict() == before
        illegal = next(t for t in ("play R0", "play W4", "keep", "challenge", "catch") if t not in
                       table["view"]["legal_actions"])
        assert "is not legal now" in sock.error({"type": "act", "action": illegal})
        assert game.to_dict() == before
        sock.send({"type": "ping"})
        assert sock.receive() == {"type": "pong"}


def test_acting_between_rounds_or_without_a_game_is_refused(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        assert "no game here" in sock.error({"type": "act", "action": "draw"})
        session = new_game(sock, players=2, opponents=["random"], seed=8, target_score=1000, uno_time=0)
        while True:
            table = sock.decision()
            if table["view"]["phase"] == "round_over":
                break
            legal = table["view"]["legal_actions"]
            sock.send({"type": "act", "action": next((a for a in legal if a.startswith("play")), legal[0])})
        game = session_of(client, session).game
        before = game.to_dict()
        assert "the round is over: deal the next round" in sock.error({"type": "act", "action": "draw"})
        assert "call UNO during your own turn" in sock.error({"type": "uno"})
        assert game.to_dict() == before
        sock.send({"type": "next_round"})
        assert sock.until(lambda m: m["type"] == "table")["view"]["round"] == 2


def test_opponents_from_a_save_are_checked_like_the_pages(client: TestClient) -> None:
    game = Game(Rules(num_players=2), seed=1)
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        save = {"format": "uno_env.play", "version": 1, "human_seat": 0, "opponents": ["agents.evil:Boom"],
                "game": game.to_dict()}
        assert "unknown opponent 'agents.evil:Boom'" in sock.error({"type": "load", "data": save})
        save["opponents"] = ["rule"]
        save["human_seat"] = 7
        assert "human_seat must be a seat 0..1" in sock.error({"type": "load", "data": save})


def test_a_websocket_from_another_site_is_refused(client: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect) as info:
        with client.websocket_connect("/ws", headers={"origin": "http://evil.example"}) as ws:
            ws.receive_json()
    assert info.value.code == 1008
    with client.websocket_connect("/ws", headers={"origin": "http://testserver"}) as ws:
        assert ws.receive_json()["type"] == "hello"


# ---------------------------------------------------------------------- UNO, catch
def two_card_position(seat: int, players: int, seed: int) -> Game:
    """A position where ``seat`` plays with two cards and holds a playable colored card (found by random play)."""
    rng = random.Random(seed)
    while True:
        game = Game(Rules(num_players=players), seed=rng.randrange(10**6))
        while not game.is_round_over:
            legal = game.legal_actions()
            hand = game.hands[game.current_player or 0]
            if (game.current_player == seat and game.phase.text == "play" and len(hand) == 2
                    and any(a < 52 for a in legal)):
                return game
            plays = [a for a in legal if a < 55]
            game.step(rng.choice(plays or legal))


def load(sock: Socket, game: Game, **extra: Any) -> dict[str, Any]:
    sock.send({"type": "load", "data": game.to_dict(), **extra})
    sock.until(lambda m: m["type"] == "session")
    return sock.decision()


def colored_play(table: dict[str, Any]) -> str:
    return next(a for a in table["view"]["legal_actions"] if a.startswith("play") and not a.startswith("play W"))


def test_uno_must_be_pressed_in_time(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        table = load(sock, two_card_position(0, 2, seed=1), opponents=["rule"], uno_time=0.3)
        sock.send({"type": "act", "action": colored_play(table)})
        asked = sock.decision()
        assert asked["view"]["phase"] == "uno" and 0 <= asked["uno"]["seconds_left"] <= 0.3  # 0: a stalled machine
        late = sock.until(lambda m: m["type"] == "table" and m["action"] == "no-uno")
        assert late["actor"] == 0 and any(e["type"] == "no_uno" and e["seat"] == 0 for e in late["events"])


def test_uno_called_in_time_and_called_early(client: TestClient) -> None:
    position = two_card_position(0, 2, seed=1)
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        table = load(sock, position, opponents=["rule"], uno_time=5)
        sock.send({"type": "act", "action": colored_play(table)})
        assert sock.decision()["view"]["phase"] == "uno"
        sock.send({"type": "uno"})
        called = sock.until(lambda m: m["type"] == "table" and m["action"] == "uno")
        assert called["view"]["uno_called"][0]
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        table = load(sock, position, opponents=["rule"], uno_time=5)
        sock.send({"type": "uno"})  # as the second-to-last card is played
        assert sock.until(lambda m: m["type"] == "table")["uno"]["called"]
        sock.send({"type": "act", "action": colored_play(table)})
        called = sock.until(lambda m: m["type"] == "table" and m["action"] == "uno")
        assert called["uno"]["seconds_left"] is None and called["view"]["uno_called"][0]


def test_without_a_timer_uno_waits_for_the_choice(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        table = load(sock, two_card_position(0, 2, seed=1), opponents=["rule"], uno_time=0)
        sock.send({"type": "act", "action": colored_play(table)})
        asked = sock.decision()
        assert asked["uno"]["seconds_left"] is None and asked["view"]["legal_actions"] == ["uno", "no-uno"]


def test_catching_an_opponent_who_forgot_uno(client: TestClient) -> None:
    position = two_card_position(1, 2, seed=4)
    save = {"format": SAVE_FORMAT, "version": 1, "human_seat": 0, "opponents": ["simple"], "forgetful": 1.0,
            "seed": 3, "game": position.to_dict()}
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "load", "data": save})
        table = sock.decision()  # the simple agent plays its colored card, forgets UNO: seat 0 may catch it
        assert table["view"]["phase"] == "catch" and table["action"] == "no-uno"
        assert table["view"]["legal_actions"] == ["catch", "no-catch"]
        sock.send({"type": "act", "action": "catch"})
        caught = sock.until(lambda m: m["type"] == "table" and m["action"] == "catch")
        assert any(e["type"] == "catch" and e["other"] == 1 for e in caught["events"])
        assert caught["view"]["hand_sizes"][1] == 3


# ---------------------------------------------------------------------- saves
def test_save_and_load_continue_the_game_and_its_replay(client: TestClient, tmp_path: Path) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        new_game(sock, players=3, opponents=["rule", "random"], seed=17, target_score=80, uno_time=0)
        for _ in range(5):
            table = sock.decision()
            sock.send({"type": "act", "action": table["view"]["legal_actions"][-1]})
        table = sock.decision()
        sock.send({"type": "save"})
        saved = sock.until(lambda m: m["type"] == "saved")
        data = saved["data"]
        assert data["format"] == SAVE_FORMAT and data["opponents"] == ["rule", "random"]
        path = tmp_path / "save.json"
        path.write_text(json.dumps(data))
        terminal = read_save(path)  # `uno-env play --load` reads the same file
        assert terminal.game.to_dict() == data["game"] and terminal.human_seat == 0 and terminal.replay is not None
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "load", "data": data})
        sock.until(lambda m: m["type"] == "session")
        resumed = sock.decision()
        assert resumed["view"] == table["view"] and resumed["index"] == table["index"]
        tampered = json.loads(json.dumps(data))
        tampered["replay"]["actions"] = tampered["replay"]["actions"][:-1]
        tampered["replay"]["annotations"] = tampered["replay"]["annotations"][:-1]
        assert "the save's replay does not fit its game" in sock.error({"type": "load", "data": tampered})


# ---------------------------------------------------------------------- watch and replay
def test_watch_an_ai_game_then_replay_it(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "watch", "settings": {"players": 3, "agents": ["ppo", "rule", "random"], "seed": 5,
                                                 "target_score": 200, "delay": 0}})
        assert sock.until(lambda m: m["type"] == "session")["kind"] == "watch"
        last = sock.until(lambda m: m["type"] == "frame" and m["over"])
        frames = [m for m in sock.seen if m["type"] == "frame"]
        assert all(len(f["hands"]) == 3 for f in frames)
        indices = [f["index"] for f in frames]
        assert indices == sorted(indices) and last["index"] == max(indices)
        assert any(f["move"] and f["move"]["top"] for f in frames if f["move"] and f["move"]["seat"] == 0)
        sock.send({"type": "replay_open", "source": "game"})
        assert sock.until(lambda m: m["type"] == "session")["kind"] == "replay"
        end = sock.until(lambda m: m["type"] == "frame")
        assert end["index"] == end["length"] == last["index"] and end["over"]
        assert end["hands"] == last["hands"]
        for index in (1, 0, end["length"] // 2, end["length"] - 1, 1, end["length"]):
            sock.send({"type": "replay_seek", "index": index})
            frame = sock.until(lambda m: m["type"] == "frame")
            assert frame["index"] == index and (frame["move"] is None) == (index == 0)
        assert "positions 0.." in sock.error({"type": "replay_seek", "index": end["length"] + 1})
        sock.send({"type": "replay_download"})
        data = sock.until(lambda m: m["type"] == "replay_data")["data"]
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "replay_open", "data": data})
        sock.until(lambda m: m["type"] == "session")
        assert sock.until(lambda m: m["type"] == "frame")["hands"] == last["hands"]


def test_watch_can_pause_and_change_pace(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "watch", "settings": {"players": 2, "agents": ["random"], "seed": 1, "delay": 0.05}})
        sock.until(lambda m: m["type"] == "frame" and m["index"] >= 2)
        sock.send({"type": "watch_control", "paused": True, "delay": 1.5})
        paused = sock.until(lambda m: m["type"] == "frame" and m["paused"])
        assert paused["delay"] == 1.5
        assert "'watch_control' message: delay: Input should be greater than or equal to 0" in sock.error({"type": "watch_control", "delay": -1})


def test_a_saved_position_opens_as_a_replay(client: TestClient) -> None:
    game = next(random_positions(1, seed=9))
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "replay_open", "data": game.to_dict()})
        sock.until(lambda m: m["type"] == "session")
        frame = sock.until(lambda m: m["type"] == "frame")
        assert frame["length"] == 0 and frame["hands"] == game.hands


# ---------------------------------------------------------------------- sessions: resume, limits, expiry
def test_a_reloaded_page_resumes_its_game(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        session = new_game(sock, players=2, opponents=["rule"], seed=3)
        table = sock.decision()
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        assert "no such session" in sock.error({"type": "resume", "session": session["session"], "token": "x" * 20})
        sock.send({"type": "resume", "session": session["session"], "token": session["token"]})
        sock.until(lambda m: m["type"] == "session")
        again = sock.decision()
        assert again["view"] == table["view"] and again["events"][0]["type"] == "dealer_draw"  # the whole log again


def test_the_server_holds_at_most_max_sessions_live() -> None:
    """Only live games count: with both held games' tabs open a third is refused; once one tab closes, a new
    visitor evicts that disconnected game instead."""
    with TestClient(server.create_app(max_sessions=2)) as client:
        with client.websocket_connect("/ws") as first, client.websocket_connect("/ws") as second:
            kept = new_game(Socket(first), players=2, opponents=["random"])
            new_game(Socket(second), players=2, opponents=["random"])
            with client.websocket_connect("/ws") as ws:
                sock = Socket(ws)
                assert "maximum of 2 live games" in sock.error({"type": "new_game", "settings": {"opponents": ["random"]}})
            assert client.get("/api/stats").json()["sessions"] == 2
            second.close()
            with client.websocket_connect("/ws") as ws:
                new_game(Socket(ws), players=2, opponents=["random"])
            stats = client.get("/api/stats").json()
            assert (stats["sessions"], stats["evicted"]) == (2, 1)
            assert kept["session"] in client.app.state.registry.sessions  # type: ignore[attr-defined]


def test_churn_of_closed_connections_never_locks_out_a_new_visitor() -> None:
    """2x the cap of connect / new_game / close cycles, one tab kept open throughout: a fresh visitor still
    gets a game, at most max_sessions are held, and the open tab's game is never evicted."""
    cap = 3
    with TestClient(server.create_app(max_sessions=cap)) as client:
        with client.websocket_connect("/ws") as kept_ws:
            kept = Socket(kept_ws)
            new_game(kept, players=2, opponents=["rule"], seed=5)
            kept.decision()
            closed = []
            for _ in range(2 * cap):
                with client.websocket_connect("/ws") as ws:
                    closed.append(new_game(Socket(ws), players=2, opponents=["random"]))
                assert client.get("/api/stats").json()["sessions"] <= cap
            with client.websocket_connect("/ws") as ws:
                sock = Socket(ws)
                new_game(sock, players=2, opponents=["random"], seed=1)
                sock.decision()
                assert "no such session" in sock.error({"type": "resume", "session": closed[0]["session"],
                                                        "token": closed[0]["token"]})  # the oldest went first
            stats = client.get("/api/stats").json()
            assert stats["sessions"] <= cap and stats["evicted"] == 2 * cap + 1 - (cap - 1)
            kept.send({"type": "ping"})
            kept.until(lambda m: m["type"] == "pong")
            assert "session" not in kept.seen[-1]  # still its own game: nothing asked it to leave
            assert kept.seen[1]["session"] in client.app.state.registry.sessions  # type: ignore[attr-defined]


class FakeClock:
    """A clock the test moves by hand (no sleeps)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_closed_tabs_game_is_held_for_resume_timeout_seconds_only() -> None:
    clock = FakeClock()
    with TestClient(server.create_app(resume_timeout=300, clock=clock, sweep_every=3600)) as client:
        registry = client.app.state.registry  # type: ignore[attr-defined]
        with client.websocket_connect("/ws") as ws:
            early = new_game(Socket(ws), players=2, opponents=["random"], seed=2)
        with client.websocket_connect("/ws") as ws:
            late = new_game(Socket(ws), players=2, opponents=["random"], seed=3)
            clock.now += 299
        assert registry.expire() == [] and len(registry.sessions) == 2  # both still held for a resume
        clock.now += 1
        assert registry.expire() == [early["session"]]  # 300 s after its tab closed
        with client.websocket_connect("/ws") as ws:
            sock = Socket(ws)
            assert "no such session" in sock.error({"type": "resume", "session": early["session"],
                                                    "token": early["token"]})
            sock.send({"type": "resume", "session": late["session"], "token": late["token"]})
            sock.until(lambda m: m["type"] == "session")
            clock.now += 1000  # past the resume timeout, within the idle one: live again, so it stays
            assert registry.expire() == [] and registry.stats()["live"] == 1


def test_one_client_address_has_at_most_max_per_client_live_games() -> None:
    with TestClient(server.create_app(max_per_client=2)) as client:
        registry = client.app.state.registry  # type: ignore[attr-defined]
        with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
            sock_a = Socket(a)
            first = new_game(sock_a, players=2, opponents=["random"])
            new_game(Socket(b), players=2, opponents=["random"])
            with client.websocket_connect("/ws") as ws:
                message = Socket(ws).error({"type": "new_game", "settings": {"opponents": ["random"]}})
                assert "this address already has 2 games open" in message and "leave one" in message
            assert len(registry.sessions) == 2
            second = new_game(sock_a, players=2, opponents=["random"])  # a tab replacing its own game may
            assert first["session"] not in registry.sessions and second["session"] in registry.sessions
        with client.websocket_connect("/ws") as ws:  # both tabs closed: the oldest held makes way
            new_game(Socket(ws), players=2, opponents=["random"])
        assert len(registry.sessions) == 2 and registry.stats()["evicted"] == 1


def test_idle_sessions_expire() -> None:
    clock = FakeClock()  # idle time passes by hand: a busy machine cannot expire the game early
    with TestClient(server.create_app(idle_timeout=60, sweep_every=0.05, clock=clock)) as client:
        with client.websocket_connect("/ws") as ws:
            sock = Socket(ws)
            new_game(sock, players=2, opponents=["random"], seed=1)
            sock.decision()
            assert client.get("/api/stats").json()["sessions"] == 1
            clock.now += 61  # the janitor (every 0.05 s) finds it idle past the timeout
            deadline = time.monotonic() + 10
            while client.get("/api/stats").json()["sessions"] and time.monotonic() < deadline:
                time.sleep(0.05)
            stats = client.get("/api/stats").json()
            assert stats["sessions"] == 0 and stats["expired"] == 1
            assert "no game here (or it expired)" in sock.error({"type": "act", "action": "draw"})


def test_leave_ends_the_session(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        new_game(sock, players=2, opponents=["random"])
        sock.send({"type": "leave"})
        sock.until(lambda m: m["type"] == "left")
        assert client.get("/api/stats").json()["sessions"] == 0


def test_serve_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        server.main(["--port", "70000"])
    assert info.value.code == 2 and "--port must be 0..65535" in capsys.readouterr().err
    for bad in (["--resume-timeout", "3601"], ["--resume-timeout", "-1"], ["--resume-timeout", "nan"]):
        with pytest.raises(SystemExit) as info:
            server.main(bad)
        assert info.value.code == 2 and "--resume-timeout must be 0..3600" in capsys.readouterr().err
    for name in ("--max-per-client", "--max-actions", "--max-sessions", "--idle-timeout"):
        with pytest.raises(SystemExit) as info:
            server.main([name, "0"])
        assert info.value.code == 2 and f"{name} must be positive, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        server.main(["--help"])
    assert "--host" in capsys.readouterr().out


def test_the_readmes_defaults() -> None:
    """The README's numbers: 127.0.0.1:8000, a 4 s UNO timer, AI forgetting 10%, 30 minutes idle, 200 games, top 3."""
    from uno_app.replays import TOP_ACTIONS

    args = server.build_parser().parse_args([])
    assert (args.host, args.port, args.idle_timeout, args.max_sessions) == ("127.0.0.1", 8000, 1800.0, 200)
    settings = protocol.PlaySettings()
    assert (settings.uno_time, settings.forgetful, settings.opponents, TOP_ACTIONS) == (4.0, 0.1, ["ppo"], 3)


def test_replay_frames_match_the_replayed_positions_in_any_order(client: TestClient) -> None:
    from uno_env.replay import Recorder

    rng = random.Random(6)
    recorder = Recorder(Game(Rules(edition="masters_of_the_universe", num_players=3, target_score=150), seed=6),
                        ["a", "b", "c"])
    while not recorder.game.is_game_over:
        if recorder.game.is_round_over:
            recorder.next_round()
            continue
        legal = recorder.game.legal_actions()
        recorder.step(rng.choice([a for a in legal if a < 55] or legal))
    replay = recorder.replay()
    assert len(replay.actions) > 100
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "replay_open", "data": replay.to_dict()})
        sock.until(lambda m: m["type"] == "frame")
        for index in [70, 3, 65, 64, 0, 100, len(replay.actions), 33, 31, 99]:
            sock.send({"type": "replay_seek", "index": index})
            frame = sock.until(lambda m: m["type"] == "frame")
            game = replay.game_at(index)
            before = len(replay.game_at(index - 1).log) if index else 0
            assert frame["hands"] == game.hands and frame["events"] == game.events()[before:]
            assert frame["view"] == game.view(game.current_player if game.current_player is not None else 0)


def test_the_host_names_a_server_answers_follow_the_address_it_is_bound_to() -> None:
    from uno_app.web.server import allowed_hosts

    assert allowed_hosts("127.0.0.1") == ["127.0.0.1", "localhost", "[::1]"]
    assert allowed_hosts("192.0.2.7") == ["192.0.2.7"]
    assert allowed_hosts("192.0.2.7", ["UNO.example"]) == ["192.0.2.7", "uno.example"]
    assert allowed_hosts("fe80::1") == ["[fe80::1]"]
    every = allowed_hosts("0.0.0.0")
    assert every[:3] == ["127.0.0.1", "localhost", "[::1]"] and "evil.example" not in every


def test_a_dns_rebinding_request_is_refused_over_http_and_websocket() -> None:
    from starlette.testclient import WebSocketDenialResponse

    from uno_app.web.server import allowed_hosts, create_app

    app = create_app(hosts=allowed_hosts("127.0.0.1"))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        assert client.get("/api/options").status_code == 200
        assert client.get("/api/options", headers={"host": "evil.example"}).status_code == 400
        assert client.get("/", headers={"host": "evil.example:8000"}).status_code == 400
        evil = {"host": "evil.example:8000", "origin": "http://evil.example:8000"}  # both agree: rebinding's shape
        with pytest.raises(WebSocketDenialResponse), client.websocket_connect("/ws", headers=evil):
            pass
        for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000"):
            with client.websocket_connect("/ws", headers={"host": host, "origin": f"http://{host}"}) as ws:
                assert ws.receive_json()["type"] == "hello"


def test_a_reply_to_a_browser_that_has_gone_ends_the_connection_quietly(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by ``tests/soak/soak_web.py``: when a session's send found the browser gone (Starlette marks the socket
    disconnected), the next reply on that connection (an error) raised Starlette's WebSocketDisconnected, a
    RuntimeError, and the server printed a traceback. Now the connection ends as on any disconnect."""
    from starlette.websockets import WebSocketState

    async def gone(self: server.Connection, message: Any) -> None:
        self.websocket.application_state = WebSocketState.DISCONNECTED  # as a failed send leaves it
        raise server.ClientError("the round is not over yet")

    monkeypatch.setattr(server.Connection, "dispatch", gone)
    with client.websocket_connect("/ws") as ws:
        sock = Socket(ws)
        sock.send({"type": "next_round"})
    assert client.get("/api/stats").json()["sessions"] == 0  # the server goes on
