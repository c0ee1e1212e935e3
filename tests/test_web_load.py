"""A bounded load test on loopback: 50 whole games at once against AI opponents, over the WebSocket API.

Each client plays seat ``k`` of its own game (its own seed, table size and opponents) with
seeded random choices, then downloads the game's replay and checks that nothing was lost or
mixed up: every message carried its own session, the replay is its own seed's game, the
actions at its seat are exactly the ones it sent, and the last table it saw is the replay's
last position. The server's resident memory is printed before, with the 50 finished games
held, and after they are left (run with ``-s`` to read it).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import urllib.request
from typing import Any

import pytest

from tests.web_helpers import served
from uno_env.replay import Replay

pytestmark = pytest.mark.slow
pytest.importorskip("fastapi", reason="the web app needs the web extra: pip install -e '.[web]'")
GAMES = 50


def stats(address: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://{address}/api/stats", timeout=30) as reply:
        result: dict[str, Any] = json.load(reply)
        return result


async def play_one(address: str, index: int) -> dict[str, Any]:
    """One client, one whole game; returns what it checked."""
    from websockets.asyncio.client import connect

    rng = random.Random(index)
    players = 2 + index % 3
    seat = index % players
    seed = 10_000 + index
    settings = {"players": players, "seat": seat, "seed": seed, "target_score": 80, "uno_time": 0,
                "opponents": ["random" if index % 2 else "rule"], "forgetful": 0.2}
    sent: list[int] = []
    messages = 0
    async with connect(f"ws://{address}/ws", max_size=2**24) as ws:
        await ws.send(json.dumps({"type": "new_game", "settings": settings}))
        session = token = None
        last: dict[str, Any] | None = None
        while True:
            message = json.loads(await ws.recv())
            messages += 1
            kind = message["type"]
            assert kind not in ("error", "expired"), message
            if kind == "session":
                session, token = message["session"], message["token"]
                continue
            if kind == "hello":
                continue
            assert message["session"] == session and message["seat"] == seat
            view = message["view"]
            last = message
            if message["over"]:
                break
            if view["phase"] == "round_over":
                await ws.send(json.dumps({"type": "next_round"}))
            elif view["my_turn"]:
                action = rng.choice(view["legal_action_ids"])
                sent.append(action)
                await ws.send(json.dumps({"type": "act", "action": action}))
        await ws.send(json.dumps({"type": "replay_download"}))
        data = json.loads(await ws.recv())
        assert data["type"] == "replay_data" and data["session"] == session
    replay = Replay.from_dict(data["data"])
    assert replay.meta["seed"] == seed and replay.agents[seat] == "you"
    game = replay.start_game()
    mine = [replay.actions[i] for i in range(len(replay.actions)) if replay.apply(game, i) == seat]
    assert mine == sent
    assert last is not None and last["view"] == replay.final_game().view(seat)
    return {"messages": messages, "decisions": len(replay.actions), "rounds": game.round_number,
            "session": session, "token": token}


async def leave(address: str, session: str, token: str) -> None:
    """Resume a finished game from a new connection and end it."""
    from websockets.asyncio.client import connect

    async with connect(f"ws://{address}/ws", max_size=2**24) as ws:
        await ws.send(json.dumps({"type": "resume", "session": session, "token": token}))
        await ws.send(json.dumps({"type": "leave"}))
        while (message := json.loads(await ws.recv()))["type"] != "left":
            assert message["type"] != "error", message


async def play_all(address: str) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(play_one(address, i) for i in range(GAMES))))


async def leave_all(address: str, results: list[dict[str, Any]]) -> None:
    await asyncio.gather(*(leave(address, r["session"], r["token"]) for r in results))


def test_fifty_concurrent_games_none_lost_or_mixed_up() -> None:
    pytest.importorskip("websockets")
    with served("--max-per-client", str(GAMES)) as (address, _):  # every client here is 127.0.0.1
        idle = stats(address)
        started = time.perf_counter()
        results = asyncio.run(play_all(address))
        elapsed = time.perf_counter() - started
        held = stats(address)
        asyncio.run(leave_all(address, results))
        after = stats(address)
    assert len(results) == GAMES and idle["sessions"] == 0
    assert held["sessions"] == GAMES and held["expired"] == 0  # every game held to its end, none dropped
    assert after["sessions"] == 0
    decisions = sum(r["decisions"] for r in results)
    mib = 2**20
    print(f"\nload test: {GAMES} concurrent games, {decisions} decisions, {sum(r['messages'] for r in results)} "
          f"messages, {sum(r['rounds'] for r in results)} rounds in {elapsed:.1f} s; server RSS "
          f"{idle['rss_bytes'] / mib:.0f} MiB idle, {held['rss_bytes'] / mib:.0f} MiB with the {GAMES} finished games "
          f"held, {after['rss_bytes'] / mib:.0f} MiB after they were left")
