"""Soak the web server: one real ``uno-env serve`` on loopback, sent hostile input for as long as asked,
while a probe player (``tests/web_probe.py``, in a process of its own) plays ordinary games throughout.

Each case opens one WebSocket (from 127.0.0.1, the probe plays from 127.0.0.2) and sends one of:

* a ``load`` of a real save changed as data or as bytes (the mutations of ``tests.soak.soak_saves``);
* a ``replay_open`` of a real replay changed likewise (``tests.soak.soak_replays``), then seeks;
* a hostile message: not JSON, nested thousands deep, a wrong or unknown type, fields out of range,
  huge numbers, binary frames, text past the message cap;
* a short game with random settings (some refused): moves by id and by text, legal and not, UNO,
  next round, save, replay, leave;
* connect / new game / close churn, a resume with a right or wrong token;
* the shape of a DNS-rebinding page (``Host`` and ``Origin`` ``evil.example``), over HTTP and WebSocket.

An answer of ``{"type": "error"}`` is the server's typed refusal: its message must say what is wrong in
1 to 4,000 characters. Anything else the server must answer as the protocol says. After every case the
server process is alive, has printed no traceback, answers a ping and ``/api/stats``; the probe is
still playing; and the server's resident memory (with its parser process) has grown at most
``--max-server-growth`` MiB past its size once the probe was warm (the registry bounds what held games
keep: ``--max-actions``). At the end the probe's round trips are printed (p99, worst)::

    python -m tests.soak.soak_web --seconds 600 --seed 3
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from tests.soak.harness import Case, Family, main
from tests.soak.soak_replays import action_mutation, real_replays
from tests.soak.soak_saves import SPECS, byte_mutation, dumps, setting_mutation
from tests.test_hostile_saves import ODD_VALUES, mutate, real_saves
from uno_app.terminal import SAVE_FORMAT, SAVE_VERSION
from uno_app.web.protocol import MAX_MESSAGE_BYTES

PROG = "tests.soak.soak_web"
ABUSER = "127.0.0.1"
MiB = 1 << 20
MAX_SESSIONS = 24  # the server's --max-sessions: churn runs past it
ANSWER_TIMEOUT = 60.0  # seconds to wait for one answer


class Refused(Exception):  # noqa: N818 - the server's own word for it is "error"
    """The server answered ``{"type": "error"}``: its message."""


def _tree_rss(pid: int) -> int:
    """Resident bytes of process ``pid`` and the processes under it."""
    from tests.test_web_abuse import tree_rss

    return tree_rss(pid)


class Client:
    """One WebSocket from ``ABUSER``: send messages, read answers (``Refused`` for an error)."""

    def __init__(self, address: str, **kwargs: Any) -> None:
        from websockets.sync.client import connect

        self.table: dict[str, Any] = {}
        self.ws = connect(f"ws://{address}/ws", source_address=(ABUSER, 0), proxy=None, open_timeout=ANSWER_TIMEOUT,
                          close_timeout=5, max_size=2 * MAX_MESSAGE_BYTES, legacy=True, **kwargs)
        assert self.receive()["type"] == "hello"

    def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.ws.recv(timeout=ANSWER_TIMEOUT))
        if message["type"] == "table":
            self.table = message  # the latest table, wherever it was read
        return message

    def send(self, message: dict[str, Any] | str | bytes) -> None:
        self.ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))

    def until(self, *kinds: str, request: str | None = None) -> dict[str, Any]:
        """The next message of one of ``kinds``; raises ``Refused`` at an error first (one answering
        ``request``, when given: tables of the AI's moves may come between a request and its error, so an
        error can arrive after the table that was awaited, answering an earlier request)."""
        while True:
            message = self.receive()
            if message["type"] == "error" and (request is None or message.get("request") in (request, None)):
                raise Refused(str(message.get("message")))
            if message["type"] in kinds:
                return message

    def ask(self, message: dict[str, Any], *kinds: str) -> dict[str, Any]:
        self.send(message)
        return self.until(*kinds, request=str(message["type"]))

    def close(self) -> None:
        self.ws.close()


class WebSoak:
    """The server, the probe and the inputs cases are built from."""

    def __init__(self) -> None:
        self.stack = ExitStack()
        self.address = ""
        self.pid = 0
        self.output: list[str] = []
        self.seen_output = 0
        self.probe: Any = None
        self.rss_start = 0
        self.max_growth = 0.0
        self.saves: list[dict[str, Any]] = []
        self.replays: list[dict[str, Any]] = []
        self.sessions: list[tuple[str, str]] = []  # (id, token) of games started: resumed later

    def setup(self, args: argparse.Namespace) -> None:
        from tests.test_web_abuse import ProbeProcess
        from tests.web_helpers import served

        self.max_growth = args.max_server_growth * MiB
        self.saves = real_saves(24, args.seed)
        self.replays = real_replays(12, args.seed)
        self.address, proc = self.stack.enter_context(served("--max-sessions", str(MAX_SESSIONS)))
        self.pid = proc.pid
        assert proc.stdout is not None
        stdout = proc.stdout
        threading.Thread(target=lambda: self.output.extend(stdout), daemon=True).start()
        self.probe = ProbeProcess(self.address)
        self.stack.callback(self.finish_probe)
        self.probe.wait_warm(120)
        self.rss_start = _tree_rss(self.pid)

    def finish_probe(self) -> None:
        if self.probe is None:
            return
        probe, self.probe = self.probe, None
        if not probe.playing:
            print(f"soak web: the probe had stopped (status {probe.proc.returncode})", flush=True)
            return
        result = probe.finish()
        latencies = sorted(result["latencies"])
        if latencies:
            p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
            print(f"soak web: the probe played {result['games']} games, {len(latencies):,} round trips: median "
                  f"{latencies[len(latencies) // 2] * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, worst "
                  f"{latencies[-1] * 1000:.0f} ms; error: {result['error']}", flush=True)

    def teardown(self) -> None:
        self.stack.close()

    # ------------------------------------------------------------------ the checks after every case
    def check_server(self) -> None:
        from tests.test_web_abuse import Server

        text = "".join(self.output[self.seen_output:])
        self.seen_output = len(self.output)
        assert "Traceback" not in text, f"the server printed a traceback: {text[-3000:]}"
        server = Server(self.address, self.pid)
        stats = server.stats()
        assert stats["sessions"] <= MAX_SESSIONS and stats["held_actions"] <= stats["max_actions"], stats
        client = Client(self.address)
        try:
            assert client.ask({"type": "ping"}, "pong")["type"] == "pong"
        finally:
            client.close()
        assert self.probe is not None and self.probe.playing, "the probe player stopped"
        grown = _tree_rss(self.pid) - self.rss_start
        assert grown <= self.max_growth, (f"the server (with its parser process) grew {grown / MiB:.0f} MiB, past "
                                          f"the {self.max_growth / MiB:.0f} MiB allowed")

    def case(self, what: str, body: Any) -> Case:
        """A case running ``body(client)`` on a fresh connection, then the server checks."""
        def run() -> str:
            client = Client(self.address)
            try:
                outcome: str = body(client)
            finally:
                client.close()
                self.check_server()
            return outcome
        return Case(what, run)

    # ------------------------------------------------------------------ the cases
    def make_case(self, rng: random.Random, index: int) -> Case:
        kind = rng.choices(["load", "replay", "message", "game", "churn", "rebinding"], [5, 4, 4, 4, 2, 1])[0]
        return getattr(self, f"{kind}_case")(rng)

    def load_case(self, rng: random.Random) -> Case:
        game_data = self.saves[rng.randrange(len(self.saves))]
        what = ["load"]
        if rng.random() < 0.5:
            game_data, change = mutate(game_data, rng)
            what.append(f"game: {change}")
        data: dict[str, Any] = dict(game_data)
        n = len(game_data.get("hands", [])) if isinstance(game_data, dict) and isinstance(
            game_data.get("hands"), list) else 2
        if rng.random() < 0.7:
            data = {"format": SAVE_FORMAT, "version": SAVE_VERSION, "human_seat": rng.randrange(max(n, 1)),
                    "opponents": [rng.choice(("rule", "random"))], "forgetful": 0.2, "seed": rng.randrange(2**32),
                    "uno_prompt": False, "game": game_data}
            if rng.random() < 0.5:
                what.append(f"settings: {setting_mutation(data, max(n, 2), rng)}")
        raw = dumps({"type": "load", "data": data, "uno_time": 0})
        if rng.random() < 0.2:
            raw, change = byte_mutation(raw, rng)
            what.append(f"bytes: {change}")
        text = raw.decode("utf-8", "replace")
        moves = rng.randrange(4)

        def body(client: Client) -> str:
            client.send(text)
            client.until("session")
            client.until("table")
            try:
                for _ in range(moves):
                    table = client.table
                    if table["over"] or table["error"]:
                        break
                    if table["view"]["phase"] == "round_over":
                        client.ask({"type": "next_round"}, "table")
                    elif table["view"]["my_turn"]:
                        client.ask({"type": "act", "action": rng.choice(table["view"]["legal_action_ids"])}, "table")
                    else:
                        client.until("table")
            except Refused as err:
                raise AssertionError(f"a loaded game refused a legal move: {err}") from None
            return "accepted:loaded"
        return self.case("; ".join(what), body)

    def replay_case(self, rng: random.Random) -> Case:
        data = json.loads(json.dumps(self.replays[rng.randrange(len(self.replays))]))
        what = ["replay_open"]
        roll = rng.random()
        if roll < 0.35:
            data, change = mutate(data, rng)
            what.append(f"data: {change}")
        elif roll < 0.7:
            what.append(f"actions: {action_mutation(data, rng)}")
        raw = dumps({"type": "replay_open", "data": data})
        if rng.random() < 0.15:
            raw, change = byte_mutation(raw, rng)
            what.append(f"bytes: {change}")
        text = raw.decode("utf-8", "replace")
        seeks = [rng.randrange(-2, 4000) for _ in range(rng.randrange(4))]

        def body(client: Client) -> str:
            client.send(text)
            frame = client.until("frame")
            for index in seeks:
                try:
                    frame = client.ask({"type": "replay_seek", "index": index}, "frame")
                except Refused:
                    assert index < 0 or index > frame["length"], f"seek {index} of {frame['length']} refused"
            client.send({"type": "replay_download"})
            assert len(client.until("replay_data")["data"]["actions"]) == frame["length"]
            return "accepted:replay"
        return self.case("; ".join(what), body)

    def message_case(self, rng: random.Random) -> Case:
        depth = rng.choice([50, 5_000, 200_000])
        kinds: list[tuple[str, str | bytes]] = [
            ("not JSON", "not json {"), ("binary", b"\xff\xfe\x00binary"), ("a list", "[1, 2]"), ("no type", "{}"),
            ("an unknown type", '{"type": "format_disk"}'), ("a long type", json.dumps({"type": "x" * 10_000})),
            (f"nested {depth} deep", '{"type": "load", "data": ' + '{"a": ' * depth + "1" + "}" * (depth + 1)),
            ("an act without a game", '{"type": "act", "action": 3}'),
            ("a seek without a replay", '{"type": "replay_seek", "index": 0}'),
            ("one byte past the cap", '{"type": "ping", "pad": "' + "x" * (MAX_MESSAGE_BYTES - 26) + '"}'),
            ("an odd field", json.dumps({"type": "new_game", "settings": {rng.choice(
                ["players", "seat", "target_score", "seed", "uno_time", "forgetful", "opponents", "edition"]):
                rng.choice(ODD_VALUES + [10**30, -1, 0, 11, "4", 1e308, [SPECS[0]] * 50])}})),
            ("an odd opponent", json.dumps({"type": "new_game", "settings": {"opponents": [rng.choice(SPECS)]}})),
            ("a resume of nothing", json.dumps({"type": "resume", "session": "0" * 16, "token": "x" * 24})),
            ("a watch control without a game", json.dumps({"type": "watch_control", "delay": 1e308})),
        ]
        what, text = rng.choice(kinds)

        def body(client: Client) -> str:
            client.send(text)
            reply = client.receive()
            if reply["type"] == "error":
                raise Refused(str(reply["message"]))
            assert reply["type"] in ("session", "pong"), f"{what}: answered {str(reply)[:300]}"
            return f"accepted:{reply['type']}"
        return self.case(f"message: {what}", body)

    def game_case(self, rng: random.Random) -> Case:
        settings: dict[str, Any] = {"players": rng.randrange(2, 7), "opponents": [rng.choice(["random", "rule"])],
                                    "seed": rng.randrange(2**32), "uno_time": rng.choice([0, 0.05, 4]),
                                    "target_score": rng.choice([1, 50, 500])}
        if rng.random() < 0.15:
            settings[rng.choice(list(settings))] = rng.choice(ODD_VALUES)
        moves = [rng.choice(["id", "id", "id", "text", "illegal", "uno", "next_round", "save"])
                 for _ in range(rng.randrange(1, 30))]
        ending = rng.choice(["close", "leave", "replay"])

        def body(client: Client) -> str:
            session = client.ask({"type": "new_game", "settings": settings}, "session")
            self.sessions = (self.sessions + [(session["session"], session["token"])])[-50:]
            client.until("table")
            for move in moves:
                table = client.table  # the latest: tables of the AI's moves come whenever they are made
                if table["over"] or table["error"]:
                    break
                view = table["view"]
                try:
                    if move == "save":
                        client.ask({"type": "save"}, "saved")
                    elif move == "uno":
                        client.ask({"type": "uno"}, "table")
                    elif view["phase"] == "round_over" or move == "next_round":
                        client.ask({"type": "next_round"}, "table")
                    elif not view["my_turn"]:
                        client.until("table")
                    elif move == "text":
                        client.ask({"type": "act", "action": rng.choice(view["legal_actions"])}, "table")
                    elif move == "illegal":
                        illegal = [a for a in range(80) if a not in view["legal_action_ids"]]
                        client.ask({"type": "act", "action": rng.choice(illegal)}, "table")
                    else:
                        client.ask({"type": "act", "action": rng.choice(view["legal_action_ids"])}, "table")
                except Refused:
                    pass  # a move the game refuses (said so); the game goes on
            table = client.table
            if ending == "leave":
                client.ask({"type": "leave"}, "left")
            elif ending == "replay":
                try:
                    client.ask({"type": "replay_open", "source": "game"}, "frame")
                except Refused as err:
                    assert "once the game is over" in str(err) and not table["over"], err
            return "accepted:played"
        return self.case(f"game: {json.dumps(settings)[:200]}, moves {moves}, then {ending}", body)

    def churn_case(self, rng: random.Random) -> Case:
        cycles = rng.randrange(1, 3 * MAX_SESSIONS)
        resume = self.sessions[rng.randrange(len(self.sessions))] if self.sessions and rng.random() < 0.5 else None
        wrong = rng.random() < 0.5

        def body(client: Client) -> str:
            if resume is not None:
                session, token = resume
                try:
                    client.ask({"type": "resume", "session": session, "token": token + ("x" if wrong else "")},
                               "session")
                except Refused as err:
                    assert "no such session" in str(err), err
                else:
                    assert not wrong, "a wrong token resumed a session"
            for cycle in range(cycles):
                other = Client(self.address)
                try:
                    other.ask({"type": "new_game", "settings": {"players": 2, "opponents": ["random"],
                                                                "seed": cycle}}, "session")
                finally:
                    other.close()
            client.ask({"type": "new_game", "settings": {"players": 2, "opponents": ["random"]}}, "session")
            return "accepted:churned"
        return self.case(f"churn: {cycles} connect/new game/close cycles, resume {resume} wrong={wrong}", body)

    def rebinding_case(self, rng: random.Random) -> Case:
        from tests.test_web_abuse import Server

        host = rng.choice(["evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "0x7f000001"])

        def run() -> str:
            import socket

            from websockets.exceptions import InvalidStatus
            from websockets.sync.client import connect

            server = Server(self.address, self.pid)
            name, port = self.address.rsplit(":", 1)
            status = server.http("/api/options", host=f"{host}:{port}")
            assert status == 400, f"Host {host!r} answered {status}"
            sock = socket.create_connection((name, int(port)), timeout=ANSWER_TIMEOUT)
            try:  # the page's own address in the URL: Host and Origin both name it
                connect(f"ws://{host}:{port}/ws", sock=sock, proxy=None, open_timeout=ANSWER_TIMEOUT,
                        origin=f"http://{host}:{port}", legacy=True).close()  # type: ignore[arg-type]
            except InvalidStatus as err:
                assert err.response.status_code == 400, err
            else:
                raise AssertionError(f"a WebSocket with Host {host!r} was accepted")
            finally:
                sock.close()
            self.check_server()
            return "refused-with-400"
        return Case(f"rebinding: Host {host!r}", run)


def family() -> Family:
    """The web family."""
    state = WebSoak()

    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--max-server-growth", type=float, default=1536.0, metavar="MIB",
                            help="most the server's memory (with its parser process) may grow past its size once the "
                                 "probe was warm (default 1536 MiB)")

    return Family("web", state.make_case, (Refused,), case_timeout=120.0, max_rss_growth_mib=1024.0,
                  setup=state.setup, teardown=state.teardown, extra_arguments=arguments)


def run(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    return main(family(), argv, PROG, (__doc__ or "").split("\n")[0])


if __name__ == "__main__":
    sys.exit(run())
