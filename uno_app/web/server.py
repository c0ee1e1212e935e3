"""``uno-env serve``: the web app's server (FastAPI, uvicorn, one WebSocket per browser tab).

::

    uno-env serve                      # http://127.0.0.1:8000
    uno-env serve --port 8080 --host 0.0.0.0

Routes: ``/`` the page (``static/index.html``), ``/static/...`` its scripts and styles (shipped
in the package; nothing is fetched from elsewhere), ``/api/options`` the editions, opponents
and rule options the page offers, ``/api/stats`` how many sessions are live, and ``/ws`` the
game protocol (``uno_app.web.protocol``).

A WebSocket whose ``Origin`` is another site's is refused (a page elsewhere cannot drive
your games), and every request (HTTP and WebSocket) must name in its ``Host`` header an address
the server is bound to (``allowed_hosts``: the loopback names when it listens on loopback, that
address when it listens on one, this machine's name and addresses when on all of them, plus each
``--allowed-host``), so that a DNS-rebinding page (``Host: evil.example``) is refused with 400. Sessions survive a reload: the page keeps the session id and token and sends
``resume``, within ``--resume-timeout`` seconds of the connection closing (``RESUME_TIMEOUT``,
300). Idle sessions expire after ``--idle-timeout`` seconds. At most ``--max-sessions`` are live
(connected): a new game when that many are held evicts the oldest disconnected one, and is
refused only when all are live. One client address has at most ``--max-per-client`` live games
(``MAX_SESSIONS_PER_CLIENT``, 8); a ninth is refused with a message, and its oldest
disconnected one makes way for a new one. All held games together keep at most ``--max-actions``
recorded actions (``MAX_HELD_ACTIONS``, 2,000,000), so that many visitors' long games cannot fill
the server's memory either.

A message longer than ``LARGE_MESSAGE_BYTES`` (256 KiB) is parsed in a worker process, one at a
time, within ``PARSE_TIMEOUT`` seconds (``Parser``): parsing JSON holds the GIL, so in a thread it
would stall the event loop just as long (measured 0.16-0.4 s for a 7 MB save), and its objects
(about 15 times the text) never enter the server's memory; what comes back has its logs cut, and
its long lists come as JSON slices that a worker thread rebuilds one at a time (``pieces``).
Building a session (a new game, a ``load``, a ``replay_open``) runs in a thread within
``WORK_TIMEOUT`` seconds, one at a time per connection (``Connection.work``). An outgoing message
that holds a whole game (``saved``, ``replay_data``) or many events is built and encoded in a worker
thread, its long lists a slice at a time (``pieces.encode``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import multiprocessing
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.websockets import WebSocketDisconnected

from uno_env.core.cards import EDITIONS
from uno_env.core.errors import UnoError

from . import pieces
from . import protocol as P
from . import sessions as S
from .seats import OPPONENT_NOTES, offered
from .sessions import (
    MAX_HELD_ACTIONS,
    MAX_SESSIONS_PER_CLIENT,
    RESUME_TIMEOUT,
    ClientError,
    PlaySession,
    Registry,
    ReplaySession,
    Session,
    WatchSession,
    parse_bounded,
    replay_from_data,
)

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MAX_RESUME_TIMEOUT = 3600.0  # the longest --resume-timeout
LARGE_MESSAGE_BYTES = 256 * 1024  # longer messages are parsed in the parser process (Parser)
LARGE_EVENTS = 256  # an outgoing table or frame with more events is encoded in a worker thread (pieces.encode)
LARGE_REPLIES = ("saved", "replay_data")  # outgoing messages that hold a whole game: always encoded so
PARSE_TIMEOUT = 30.0  # seconds a large message may wait for and take in the parser process
log = logging.getLogger("uno_app.web")
T = TypeVar("T")


def options() -> dict[str, Any]:
    """What the page may offer: editions (colors, letters, special wild), opponents, rule choices."""
    editions = {
        name: {"title": ed.title, "colors": list(ed.colors), "letters": ed.letters,
               "special": None if ed.special is None else {
                   "code": ed.special.code, "name": ed.special.name, "flavour": ed.special.flavour},
               "symbol_value": ed.symbol_value}
        for name, ed in EDITIONS.items()
    }
    return {"editions": editions, "opponents": offered(), "opponent_notes": OPPONENT_NOTES,
            "rules": P.rule_choices(), "play_defaults": P.PlaySettings().model_dump(),
            "watch_defaults": P.WatchSettings().model_dump(), "max_message_bytes": P.MAX_MESSAGE_BYTES}


def _origin_ok(websocket: WebSocket) -> bool:
    """No Origin (not a browser) or the same host the page came from."""
    origin = websocket.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == websocket.headers.get("host", "").lower()


def _leave_with(parent: int) -> None:
    """In the parser process: exit once the server process ``parent`` has gone (however it ended; a
    worker waiting on its queue would otherwise outlive it)."""
    import os
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def parse_apart(text: str) -> tuple[BaseModel, Any]:
    """In the parser process: the message (``parse_bounded``) without its data, and the data as
    ``pieces.split`` carries it (long lists as JSON texts, which the server rebuilds a slice at a time:
    unpickling 100,000 annotations whole held the server's GIL for about a second)."""
    message = parse_bounded(text)
    data = getattr(message, "data", None)
    if data is None:
        return message, None
    return message.model_copy(update={"data": None}), pieces.split(data)


class Parser:
    """Reads client messages: one over ``LARGE_MESSAGE_BYTES`` in a worker process (``parse_apart``:
    parsed, validated, its logs cut, its long lists in slices), one at a time, within ``PARSE_TIMEOUT``,
    its data rebuilt in a worker thread (``pieces.join``); others here. The worker exits when the server
    process does."""

    def __init__(self) -> None:
        self.pool: ProcessPoolExecutor | None = None  # started at the first large message

    async def parse(self, text: str) -> BaseModel:
        """A validated message; raises ``ProtocolError`` or ``ClientError`` (``LimitError``, a timeout)."""
        if len(text) <= LARGE_MESSAGE_BYTES or len(text) > P.MAX_MESSAGE_BYTES:
            return P.parse_message(text)
        if self.pool is None:
            import os

            self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_leave_with, initargs=(os.getpid(),))
        pool = self.pool
        try:
            message, data = await asyncio.wait_for(asyncio.wrap_future(pool.submit(parse_apart, text)), PARSE_TIMEOUT)
        except (P.ProtocolError, ClientError):
            raise
        except TimeoutError:
            raise ClientError(f"a message of {len(text)} bytes was not read within {PARSE_TIMEOUT:g} s (the server "
                              "reads large messages one at a time); try again in a moment") from None
        except BrokenProcessPool:
            if self.pool is pool:
                self.pool = None
            raise ClientError("the server's reader of large messages stopped; try again") from None
        except Exception as err:  # e.g. a result nested too deeply to come back
            raise P.ProtocolError(f"this message could not be read ({type(err).__name__})") from None
        if data is None:
            return message
        try:
            joined = await asyncio.to_thread(pieces.join, data)
        except (ValueError, RecursionError) as err:  # slices the parser process wrote: not expected
            raise P.ProtocolError(f"this message could not be read ({type(err).__name__})") from None
        return message.model_copy(update={"data": joined})

    def close(self) -> None:
        """Stop the worker process (queued messages are dropped)."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None


def _large(message: dict[str, Any]) -> bool:
    """Whether an outgoing message may be long enough to encode off the event loop (``pieces.encode``)."""
    events = message.get("events")
    return message.get("type") in LARGE_REPLIES or isinstance(events, list) and len(events) > LARGE_EVENTS


class Connection:
    """One browser tab: its socket and the session it shows."""

    def __init__(self, websocket: WebSocket, registry: Registry) -> None:
        self.websocket = websocket
        self.registry = registry
        self.client = websocket.client.host if websocket.client is not None else ""
        self.session: Session | None = None
        self.send_lock = asyncio.Lock()
        self.working: asyncio.Future[Any] | None = None  # the last session built in a worker thread

    async def work(self, build: Callable[..., T], *args: Any) -> T:
        """``build(*args)`` in a worker thread; raises ``ClientError`` when it takes more than ``WORK_TIMEOUT``
        seconds, or while this connection's previous build still runs (one at a time: a visitor cannot pile
        up threads)."""
        if self.working is not None and not self.working.done():
            raise ClientError("this connection's previous request is still being worked on; try again in a moment")
        task = asyncio.ensure_future(asyncio.to_thread(build, *args))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a late error is not logged as lost
        self.working = task
        done, _ = await asyncio.wait({task}, timeout=S.WORK_TIMEOUT)
        if not done:
            raise ClientError(f"this request took more than {S.WORK_TIMEOUT:g} s (WORK_TIMEOUT); "
                              "try again in a moment, or with smaller data")
        return task.result()

    async def send(self, message: dict[str, Any]) -> None:
        """Send one JSON message (one at a time); a long one is encoded in a worker thread (``pieces.encode``).
        Raises ``WebSocketDisconnect`` once the browser has gone (also when an earlier send found it gone:
        Starlette then raises its ``WebSocketDisconnected``, a RuntimeError, which escaped as a traceback)."""
        async with self.send_lock:
            try:
                if _large(message):
                    await self.websocket.send_text(await asyncio.to_thread(pieces.encode, message))
                else:
                    await self.websocket.send_json(message)
            except WebSocketDisconnected:
                raise WebSocketDisconnect(code=1006) from None

    async def open(self, session: Session, keep_previous: bool = False) -> None:
        """Make ``session`` this tab's session (registered, attached, sent its state)."""
        previous = self.session
        self.registry.add(session, self.client, replacing=None if keep_previous else previous)
        if previous is not None:
            if keep_previous:  # held for a resume, no longer shown here
                previous.detach(self.send)
            else:
                self.registry.remove(previous)
        self.session = session
        await self.send({"type": "session", "session": session.id, "token": session.token, "kind": session.kind})
        await session.attach(self.send)

    def current(self) -> Session:
        """This tab's live session; raises ``ClientError``."""
        session = self.session
        if session is None or session.closed:
            self.session = None
            raise ClientError("no game here (or it expired): start one with Play, Watch, Load or Replay")
        return session

    async def dispatch(self, message: BaseModel) -> None:
        """Act on one validated message; raises ``ClientError`` or ``UnoError``."""
        if isinstance(message, P.Ping):
            await self.send({"type": "pong"})
        elif isinstance(message, P.NewGame):
            await self.open(await self.work(PlaySession.create, message.settings))
        elif isinstance(message, P.Watch):
            await self.open(await self.work(WatchSession.create, message.settings))
        elif isinstance(message, P.Load):
            await self.open(await self.work(PlaySession.load, message))
        elif isinstance(message, P.ReplayOpen):
            await self.open_replay(message)
        elif isinstance(message, P.ReplayDownload):
            session = self.current()
            replay = session.replay()
            if replay is None:
                raise ClientError("the replay shows every hand: it is available once the game is over")
            await self.send({"type": "replay_data", "data": await asyncio.to_thread(replay.to_dict),
                             "filename": "uno-replay.json", "session": session.id})
        elif isinstance(message, P.Resume):
            session = self.registry.get(message.session, message.token)
            if self.session is not None and self.session is not session:
                self.registry.remove(self.session)
            self.session = session
            await self.send({"type": "session", "session": session.id, "token": session.token, "kind": session.kind})
            await session.attach(self.send)
        elif isinstance(message, P.Leave):
            if self.session is not None:
                self.registry.remove(self.session)
                self.session = None
            await self.send({"type": "left"})
        else:
            session = self.current()
            session.touch()
            await session.handle(message)

    async def open_replay(self, message: P.ReplayOpen) -> None:
        if message.source == "game":
            found = self.current().replay()
            if found is None:
                raise ClientError("the replay shows every hand: it is available once the game is over")
            title = {"play": "your game", "watch": "the watched game"}.get(self.current().kind, "")
            await self.open(await self.work(ReplaySession, found, title))
            return
        if message.data is None:
            raise ClientError("replay_open with source 'data' needs data (a replay file or a saved game)")
        await self.open(await self.work(_replay_session, message.data))


def _replay_session(data: dict[str, Any]) -> ReplaySession:
    """A replay session for a replay file or a saved game (``replay_from_data``); raises ``ClientError``."""
    return ReplaySession(*replay_from_data(data))


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def allowed_hosts(bound: str, extra: Sequence[str] = ()) -> list[str]:
    """The names a request's ``Host`` header may give for a server bound to ``bound`` (see the module docstring)."""
    import socket

    if bound in LOOPBACK:
        names = list(LOOPBACK)
    elif bound in ("0.0.0.0", "::", ""):  # every interface: this machine's name and addresses
        name = socket.gethostname()
        try:
            addresses = socket.gethostbyname_ex(name)[2]
        except OSError:
            addresses = []
        names = [*LOOPBACK, name.lower(), socket.getfqdn().lower(), *addresses]
    else:
        names = [bound.lower()]
    names += [*(h.lower() for h in extra)]
    # a Host header writes an IPv6 address in brackets, and Starlette compares it so
    return list(dict.fromkeys(f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names))


def create_app(*, max_sessions: int = 200, idle_timeout: float = 1800.0, resume_timeout: float = RESUME_TIMEOUT,
               max_per_client: int = MAX_SESSIONS_PER_CLIENT, max_actions: int = MAX_HELD_ACTIONS,
               sweep_every: float | None = None,
               hosts: Sequence[str] | None = None, clock: Callable[[], float] = time.monotonic) -> FastAPI:
    """The web app; ``app.state.registry`` holds its sessions (limits: the module docstring). ``hosts``: the
    ``Host`` names it answers (``allowed_hosts``); None answers any (an embedding that checks hosts itself,
    the in-process tests). ``clock``: the registry's time in seconds (tests inject one)."""
    registry = Registry(max_sessions=max_sessions, idle_timeout=idle_timeout, resume_timeout=resume_timeout,
                        max_per_client=max_per_client, max_actions=max_actions, clock=clock)
    sweep = sweep_every if sweep_every is not None else max(1.0, min(60.0, idle_timeout / 4, resume_timeout / 4))
    parser = Parser()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async def janitor() -> None:
            while True:
                await asyncio.sleep(sweep)
                registry.expire()

        task = asyncio.create_task(janitor())
        # What is loaded by now (modules, the app) lives as long as the server: frozen out of the garbage
        # collector's full collections, which hold the GIL (every connection) while they walk every object.
        gc.freeze()
        try:
            yield
        finally:
            task.cancel()
            parser.close()
            for session in list(registry.sessions.values()):
                registry.remove(session)

    app = FastAPI(title="uno_env", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    if hosts is not None:  # Starlette's own check, for HTTP and WebSocket requests alike
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts), www_redirect=False)
    app.state.registry = registry
    app.state.parser = parser
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/api/options")
    async def api_options() -> JSONResponse:
        return JSONResponse(options())

    @app.get("/api/stats")
    async def api_stats() -> JSONResponse:
        return JSONResponse({**registry.stats(), "rss_bytes": rss_bytes()})

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        if not _origin_ok(websocket):
            await websocket.close(code=1008, reason="cross-site connection refused")
            return
        await websocket.accept()
        connection = Connection(websocket, registry)
        try:
            await connection.send({"type": "hello", "version": 1})
            while True:
                raw = await websocket.receive()
                if raw["type"] == "websocket.disconnect":
                    break
                text = raw.get("text")
                if text is None:
                    text = (raw.get("bytes") or b"").decode("utf-8", "replace")
                kind = None
                try:
                    message = await parser.parse(text)
                    kind = getattr(message, "type", None)
                    await connection.dispatch(message)
                except (P.ProtocolError, ClientError, UnoError) as err:
                    await connection.send({"type": "error", "message": str(err), "request": kind})
        except WebSocketDisconnect:
            pass
        finally:
            if connection.session is not None:  # held for a resume (unless another tab took it over)
                connection.session.detach(connection.send)

    return app


def rss_bytes() -> int:
    """This process's resident memory, in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as handle:
            import os

            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="uno-env serve",
                                     description="Play UNO in a web browser against AI opponents, watch them, replay games.")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--idle-timeout", type=float, default=1800.0, metavar="SECONDS",
                        help="drop a game nobody touched for this long (default 1800)")
    parser.add_argument("--max-sessions", type=int, default=200,
                        help="live (connected) games at once (default 200); a closed tab's game makes way")
    parser.add_argument("--resume-timeout", type=float, default=RESUME_TIMEOUT, metavar="SECONDS",
                        help=f"hold a closed tab's game this long for a reload to resume it, 0..{MAX_RESUME_TIMEOUT:.0f} "
                             f"(default {RESUME_TIMEOUT:.0f})")
    parser.add_argument("--max-per-client", type=int, default=MAX_SESSIONS_PER_CLIENT, metavar="N",
                        help=f"live games one client address may have (default {MAX_SESSIONS_PER_CLIENT})")
    parser.add_argument("--max-actions", type=int, default=MAX_HELD_ACTIONS, metavar="N",
                        help=f"recorded actions all held games may keep together (default {MAX_HELD_ACTIONS:,}; about "
                             "650 bytes each when a PPO seat annotates them); past them a new game evicts closed "
                             "tabs' games or is refused, and a growing game records no more (a move is refused, "
                             "a watched game stops), saying why")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a name the Host header may also give (repeatable), e.g. the name a proxy or a DNS "
                             "record gives this machine; by default only the address it listens on")
    parser.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])
    return parser


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``uno-env serve``."""
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"uno-env serve: error: --port must be 0..65535, got {args.port}", file=sys.stderr)
        raise SystemExit(2)
    for name, value in (("--idle-timeout", args.idle_timeout), ("--max-sessions", args.max_sessions),
                        ("--max-per-client", args.max_per_client), ("--max-actions", args.max_actions)):
        if not value > 0:
            print(f"uno-env serve: error: {name} must be positive, got {value}", file=sys.stderr)
            raise SystemExit(2)
    if not 0 <= args.resume_timeout <= MAX_RESUME_TIMEOUT:
        print(f"uno-env serve: error: --resume-timeout must be 0..{MAX_RESUME_TIMEOUT:.0f} seconds, "
              f"got {args.resume_timeout}", file=sys.stderr)
        raise SystemExit(2)
    import uvicorn

    app = create_app(max_sessions=args.max_sessions, idle_timeout=args.idle_timeout,
                     resume_timeout=args.resume_timeout, max_per_client=args.max_per_client,
                     max_actions=args.max_actions, hosts=allowed_hosts(args.host, args.allowed_host))
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level,
                            ws_max_size=P.MAX_MESSAGE_BYTES + 1024)
    server = uvicorn.Server(config)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"Note: listening on {args.host}: other machines can reach this server.", flush=True)

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.05)
        if server.started:
            port = args.port
            for listener in server.servers:
                for sock in listener.sockets:
                    port = sock.getsockname()[1]
            print(f"uno-env serve: open http://{shown}:{port}/ in a browser (Ctrl-C to stop)", flush=True)
        await task

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    if not server.started:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
