"""A probe player for the web server's load tests, in a process of its own: it plays whole 2-player games
against a random opponent and times each message it sends to the first reply (a table for a move, a
session for a new game), so that what it measures is the server's answer alone, never the work of the
process that drives the abuse (whose own parsing and garbage collection would stall a probe sharing its
event loop).

::

    python -m tests.web_probe 127.0.0.1:8000 --source 127.0.0.2

It prints ``warm`` once its first game is under way, plays until its standard input ends (and on until it
has timed ``--at-least-round-trips`` messages and finished ``--at-least-games`` games), then prints one
JSON line: ``latencies`` (seconds), ``sent`` (``time.monotonic()`` of each timed message: the same clock
in every process), ``games`` (finished), ``error`` (what went wrong, or null; the exit status is then 1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import threading
import time
from typing import Any

WARM_AFTER = 10  # timed round trips before ``warm`` is printed


class Probe:
    """Plays games on one connection until ``stop`` is set."""

    def __init__(self, address: str, source: str, min_round_trips: int = 0, min_games: int = 0) -> None:
        self.address = address
        self.source = source
        self.min_round_trips = min_round_trips
        self.min_games = min_games
        self.latencies: list[float] = []
        self.sent: list[float] = []
        self.games = 0
        self.asked = False  # standard input ended: stop once the counts are reached
        self.stop = asyncio.Event()

    def ask_stop(self) -> None:
        """Stop now, or as soon as the counts asked for are reached."""
        self.asked = True
        self._maybe_stop()

    def _maybe_stop(self) -> None:
        if self.asked and len(self.latencies) >= self.min_round_trips and self.games >= self.min_games:
            self.stop.set()

    async def receive(self, ws: Any) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 120))
        if message["type"] == "error":
            raise AssertionError(f"the probe got an error: {message}")
        return message

    async def timed(self, ws: Any, message: dict[str, Any]) -> dict[str, Any]:
        started, wall = time.perf_counter(), time.monotonic()
        await ws.send(json.dumps(message))
        reply = await self.receive(ws)
        self.latencies.append(time.perf_counter() - started)
        self.sent.append(wall)
        if len(self.latencies) == WARM_AFTER:
            print("warm", flush=True)
        self._maybe_stop()
        return reply

    async def run(self) -> None:
        from websockets.asyncio.client import connect

        rng = random.Random(2)
        async with connect(f"ws://{self.address}/ws", local_addr=(self.source, 0), proxy=None, open_timeout=60,
                           close_timeout=5, max_size=2**25) as ws:
            assert (await self.receive(ws))["type"] == "hello"
            while not self.stop.is_set():
                settings = {"players": 2, "seed": 100 + self.games, "opponents": ["random"], "uno_time": 0,
                            "target_score": 100}
                assert (await self.timed(ws, {"type": "new_game", "settings": settings}))["type"] == "session"
                reply: dict[str, Any] | None = None
                while not self.stop.is_set():
                    message = reply or await self.receive(ws)
                    reply = None
                    if message["type"] != "table":
                        continue
                    view = message["view"]
                    if message["over"]:
                        self.games += 1
                        self._maybe_stop()
                        break
                    if view["phase"] == "round_over":
                        await asyncio.sleep(0.01)  # a person's pace, and time for the others
                        reply = await self.timed(ws, {"type": "next_round"})
                    elif view["my_turn"]:
                        await asyncio.sleep(0.01)
                        reply = await self.timed(ws, {"type": "act", "action": rng.choice(view["legal_action_ids"])})


async def main_async(address: str, source: str, min_round_trips: int = 0, min_games: int = 0) -> dict[str, Any]:
    probe = Probe(address, source, min_round_trips, min_games)
    loop = asyncio.get_running_loop()
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(probe.ask_stop)), daemon=True).start()
    error = None
    playing = asyncio.ensure_future(probe.run())
    stopping = asyncio.ensure_future(probe.stop.wait())
    await asyncio.wait({playing, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if not playing.done():  # it stops at its next message; a reply that never comes is not waited for
        await asyncio.wait({playing}, timeout=10)
        playing.cancel()
    stopping.cancel()
    try:
        await playing
    except asyncio.CancelledError:
        pass
    except Exception as err:  # noqa: BLE001 - reported to the test, which fails on it
        error = f"{type(err).__name__}: {str(err)[:500]}"
    return {"latencies": probe.latencies, "sent": probe.sent, "games": probe.games, "error": error}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.web_probe", description=__doc__.split("\n")[0])
    parser.add_argument("address", help="HOST:PORT of the server")
    parser.add_argument("--source", default="127.0.0.2", help="the client address to connect from")
    parser.add_argument("--at-least-round-trips", type=int, default=0, help="play on past the stop until this many")
    parser.add_argument("--at-least-games", type=int, default=0, help="play on past the stop until this many")
    args = parser.parse_args(argv)
    result = asyncio.run(main_async(args.address, args.source, args.at_least_round_trips, args.at_least_games))
    print(json.dumps(result), flush=True)
    return 0 if result["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
