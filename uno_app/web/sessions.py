"""Sessions: a game against AI opponents, a watched AI game, or an open replay.

Every message the server sends about a game is built by one of two functions:

* ``seat_payload(game, seat, cursor)``: for a person at ``seat``, from ``game.view(seat)``
  and ``game.events(seat, since=cursor)`` only, so it never holds a card hidden from that
  seat (another hand, the draw pile, a card drawn by someone else). ``game.determinize(seat)`` resamples
  every hidden card and leaves it unchanged (tested).
* ``full_payload(game, cursor)``: every hand revealed, for watching AI-only games and for
  replays of finished games, where nobody at the table is a person.

A play session's table message adds only public facts: the seats' labels, who acted and
the action's text (every decision is public in UNO), and the UNO timer. The one exception
is ``save``: on request it sends the whole game (``Game.to_dict``, every hand) so the page
can download it, as ``uno-env play``'s ``save`` writes it to a file. A finished game's
replay is offered only once the game is over.

Each session is bounded whatever it is sent, and no long work runs on the event loop:

* ``SESSION_LOG_LIMIT``: a session's game keeps its last this many events (``Game``'s
  ``log_limit``). A ``load`` or ``replay_open`` cuts a save's ``game.log`` and a replay's
  ``start.log`` to their last this many entries *before* they are parsed and checked, so the
  first table message and the session's memory stay small however long the file's log is.
* ``MAX_REPLAY_ACTIONS``: a replay (a replay file, a save's replay) of more actions is refused
  (``LimitError``) before its actions are read. A session's own game records at most this many
  actions, so its replay and its save always open here: past them a play session refuses moves
  (``LimitError``; the AI seats stop too) and a watched game stops, each saying so.
* ``WORK_TIMEOUT``: building a session from a message (a new game, a ``load``, a ``replay_open``)
  runs in a worker thread; one that takes longer is answered with an error, and the connection
  takes no other such message until it ends (see ``server.Connection.work``).
* ``FRAME_TIMEOUT``: a replay frame is built in a worker thread; one that takes longer is
  answered with an error (the build finishes in the background, and the session takes its next
  seek once it has).

A ``Registry`` holds the sessions, so memory stays bounded and closed tabs free their slots:

* a session idle for ``idle_timeout`` seconds is closed and dropped, and one whose connection
  closed is held for a ``resume`` only ``resume_timeout`` seconds (``RESUME_TIMEOUT``);
  ``Registry.expire`` drops both, run periodically by the server and before each new session;
* only live (connected) sessions count toward ``max_sessions``: a new session when the
  registry holds that many evicts the oldest disconnected one, and is refused only when every
  held session is live;
* each client address has at most ``max_per_client`` live sessions
  (``MAX_SESSIONS_PER_CLIENT``); beyond that many held, its own oldest disconnected one is evicted;
* the held sessions keep at most ``max_actions`` recorded actions together (``MAX_HELD_ACTIONS``:
  a game of ``MAX_REPLAY_ACTIONS`` actions, each annotated as a PPO seat's is, holds about 65 MiB,
  measured): a new session that does not fit evicts the oldest disconnected ones, else is refused;
  a growing game asks every ``CROWD_CHECK_EVERY`` actions, and past the bound records no more (a move
  is refused, a watched game stops), saying why.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from pydantic import BaseModel

from uno_env.core import Game, Rules
from uno_env.core import actions as A
from uno_env.core.errors import StateError, UnoError
from uno_env.replay import REPLAY_FORMAT, Recorder, Replay, ReplayError

from ..terminal import SAVE_FORMAT, SAVE_VERSION, saved_game
from . import protocol as P
from .seats import Seat, SpecError, build_seat, check_spec, decide

log = logging.getLogger("uno_app.web")

HUMAN_LABEL = "you"
CHECKPOINT_EVERY = 32  # a replay keeps a position every this many actions for seeking...
MAX_KEPT = 500  # ...and at most this many
SESSION_LOG_LIMIT = 5_000  # events a session's game keeps; a loaded log is cut to its last this many first
MAX_REPLAY_ACTIONS = 100_000  # actions of a replay the app opens (a whole game stays far below)
FRAME_TIMEOUT = 20.0  # seconds a replay frame may take (in a worker thread) before the visitor is told
WORK_TIMEOUT = 30.0  # seconds building a session (new game, load, replay_open) may take in a worker thread
RESUME_TIMEOUT = 300.0  # seconds a closed connection's session is held for a resume
MAX_HELD_ACTIONS = 2_000_000  # recorded actions all held sessions keep together (about 650 bytes each, annotated)
CROWD_CHECK_EVERY = 64  # a growing game asks the registry whether the server has room every this many actions
MAX_SESSIONS_PER_CLIENT = 8  # live sessions per client address
Send = Callable[[dict[str, Any]], Awaitable[None]]


class ClientError(ValueError):
    """A valid message that the session cannot act on now (not your turn, no game, ...)."""


class LimitError(ClientError):
    """A valid message whose data is larger than the app takes (``MAX_REPLAY_ACTIONS``)."""


def full_message() -> str:
    """What a session says when its game reaches ``MAX_REPLAY_ACTIONS``."""
    return (f"this game holds {MAX_REPLAY_ACTIONS} actions, the most a session records (MAX_REPLAY_ACTIONS) "
            "so that its replay opens here; start a new game")


def _cut_log(game_data: Any) -> Any:
    """A ``Game.to_dict`` with its log cut to the last ``SESSION_LOG_LIMIT`` entries (a shallow copy);
    anything else as it is (the parser then says what is wrong)."""
    if not isinstance(game_data, dict):
        return game_data
    log = game_data.get("log")
    if not isinstance(log, list) or len(log) <= SESSION_LOG_LIMIT:
        return game_data
    return {**game_data, "log": log[len(log) - SESSION_LOG_LIMIT:]}


def _cut_replay(replay_data: Any) -> Any:
    """Replay data with its start's log cut; raises ``LimitError`` past ``MAX_REPLAY_ACTIONS`` (counted,
    not read)."""
    if not isinstance(replay_data, dict):
        return replay_data
    actions = replay_data.get("actions")
    if isinstance(actions, list) and len(actions) > MAX_REPLAY_ACTIONS:
        raise LimitError(f"this replay holds {len(actions)} actions; the web app opens replays of at most "
                         f"{MAX_REPLAY_ACTIONS} (MAX_REPLAY_ACTIONS)")
    if "start" not in replay_data:
        return replay_data
    return {**replay_data, "start": _cut_log(replay_data["start"])}


def bounded(data: dict[str, Any]) -> dict[str, Any]:
    """A save, a bare ``Game.to_dict`` or a replay file with every game log cut to its last
    ``SESSION_LOG_LIMIT`` entries, before anything is parsed; raises ``LimitError`` for a replay of
    more than ``MAX_REPLAY_ACTIONS`` actions. The data given is not changed."""
    kind = data.get("format")
    if kind == REPLAY_FORMAT:
        cut: dict[str, Any] = _cut_replay(data)
        return cut
    if kind != SAVE_FORMAT:
        bare: dict[str, Any] = _cut_log(data)
        return bare
    data = dict(data)
    if "game" in data:
        data["game"] = _cut_log(data["game"])
    if "replay" in data:
        data["replay"] = _cut_replay(data["replay"])
    return data


def parse_bounded(text: str) -> BaseModel:
    """``protocol.parse_message`` with the data of a ``load`` or ``replay_open`` already ``bounded`` (the
    server's parser process runs this for large messages: what it returns is small however long the
    message's logs are); raises ``ProtocolError`` or ``LimitError``."""
    message = P.parse_message(text)
    if isinstance(message, (P.Load, P.ReplayOpen)) and message.data is not None:
        return message.model_copy(update={"data": bounded(message.data)})
    return message


def _session_game(game: Game) -> Game:
    """``game`` (just parsed, not shared) keeping at most ``SESSION_LOG_LIMIT`` events from now on."""
    return Game.from_state(game.state, check=False, log_limit=SESSION_LOG_LIMIT)


def seat_payload(game: Game, seat: int, cursor: int) -> tuple[dict[str, Any], int]:
    """What a person at ``seat`` is sent: the seat's view and its events from event number ``cursor`` on;
    and the new cursor (``game.log_length``). Only the new events are built."""
    return {"view": game.view(seat), "events": game.events(seat, since=cursor)}, game.log_length


def full_payload(game: Game, cursor: int) -> tuple[dict[str, Any], int]:
    """An all-hands-revealed table (watch, replay): the deciding seat's view, every hand, new events."""
    seat = game.current_player
    return ({"view": game.view(0 if seat is None else seat), "hands": game.hands, "events": game.events(since=cursor)},
            game.log_length)


def _seed(value: int | None) -> int:
    return value if value is not None else random.SystemRandom().randrange(2**63)


def _expand(specs: list[str], count: int, what: str) -> list[str]:
    if len(specs) == 1:
        specs = specs * count
    if len(specs) != count:
        raise ClientError(f"{what} needs 1 or {count} agents for this table, got {len(specs)}")
    try:
        return [check_spec(s) for s in specs]
    except SpecError as err:
        raise ClientError(str(err)) from None


def _rules(settings: P.TableSettings) -> Rules:
    try:
        return Rules(**settings.rule_options())
    except UnoError as err:
        raise ClientError(str(err)) from None


class Session:
    """State shared by every kind of session: identity, connection, lock, activity, tasks."""

    kind: ClassVar[str] = "session"

    def __init__(self) -> None:
        self.id = secrets.token_hex(8)
        self.token = secrets.token_urlsafe(18)
        self.lock = asyncio.Lock()
        self.sender: Send | None = None
        self.clock: Callable[[], float] = time.monotonic  # the registry's clock, once registered
        self.last_active = self.clock()
        self.client = ""  # the address of the client that started it
        self.disconnected_at: float | None = None  # when its connection closed; None while live
        self.closed = False
        self.tasks: set[asyncio.Task[None]] = set()
        self.crowded: Callable[[], str | None] = lambda: None  # the registry's, once registered: why no room

    @property
    def weight(self) -> int:
        """Recorded actions this session holds (what ``Registry.max_actions`` counts)."""
        return 0

    @property
    def live(self) -> bool:
        """Open and shown by a connection (not waiting for a resume)."""
        return not self.closed and self.disconnected_at is None

    def touch(self) -> None:
        """Record activity (idle sessions expire)."""
        self.last_active = self.clock()

    def detach(self, sender: Send | None = None) -> None:
        """The connection showing it went away (only ``sender``'s, when given): hold it for a resume."""
        if sender is not None and self.sender != sender:
            return
        self.sender = None
        if self.disconnected_at is None:
            self.disconnected_at = self.clock()

    async def send(self, message: dict[str, Any]) -> None:
        """Send to the attached browser, if any (a broken connection detaches)."""
        sender = self.sender
        if sender is None:
            return
        message["session"] = self.id
        try:
            await sender(message)
        except Exception:  # the browser went away: keep the session for a resume
            if self.sender is sender:
                self.detach()

    def spawn(self, coroutine: Awaitable[None]) -> None:
        """Run a background task owned by this session (cancelled when it closes)."""
        task: asyncio.Task[None] = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def attach(self, sender: Send) -> None:
        """A browser takes the session over and is sent its current state."""
        self.sender = sender
        self.disconnected_at = None
        self.touch()
        async with self.lock:
            await self.send(self.snapshot())

    def snapshot(self) -> dict[str, Any]:
        """The full current state for a browser that (re)attaches."""
        raise NotImplementedError

    async def handle(self, message: BaseModel) -> None:
        """Act on one validated message (called with no lock held)."""
        raise ClientError(f"a {self.kind} session does not take {getattr(message, 'type', '?')!r} messages")

    def close(self) -> None:
        """Stop the session's tasks; it takes no more messages."""
        self.closed = True
        for task in list(self.tasks):
            task.cancel()

    def replay(self) -> Replay | None:
        """The replay this session may show (None while it would reveal hidden cards)."""
        return None


class _Recording(Session):
    """A session whose game is recorded as it goes (played or watched): bounded per session
    (``MAX_REPLAY_ACTIONS``) and, with every other session, by the registry (``Registry.max_actions``)."""

    recorder: Recorder

    @property
    def weight(self) -> int:
        return len(self.recorder.actions)

    def limit(self) -> str | None:
        """Why the game may record no more actions now (its own cap, or the server's), or None."""
        count = len(self.recorder.actions)
        if count >= MAX_REPLAY_ACTIONS:
            return full_message()
        return self.crowded() if count % CROWD_CHECK_EVERY == 0 else None

    def record(self, action: int, note: dict[str, Any] | None = None) -> None:
        """``recorder.step``, refused with ``LimitError`` (nothing changed) past ``limit``."""
        stop = self.limit()
        if stop is not None:
            raise LimitError(stop)
        self.recorder.step(action, note)


class PlaySession(_Recording):
    """One person against AI opponents; the person's browser sees only ``seat_payload``."""

    kind = "play"

    def __init__(self, recorder: Recorder, human: int, seats: dict[int, Seat], specs: dict[int, str], *,
                 uno_time: float, forgetful: float, seed: int) -> None:
        super().__init__()
        self.recorder = recorder
        self.game = recorder.game
        self.human = human
        self.seats = seats
        self.specs = specs
        self.uno_time = uno_time
        self.forgetful = forgetful
        self.seed = seed
        self.labels = [HUMAN_LABEL if s == human else seats[s].label for s in range(self.game.num_players)]
        self.cursor = 0
        self.precalled = False  # UNO called during this turn, before the call was asked for
        self.decisions = 0  # counts every step; a pending UNO timer checks it
        self.uno_deadline: float | None = None
        self.error: str | None = None

    # ---------------------------------------------------------------- building
    @classmethod
    def create(cls, settings: P.PlaySettings) -> PlaySession:
        """A new game from the page's settings; raises ``ClientError``."""
        rules = _rules(settings)
        if settings.seat >= rules.num_players:
            raise ClientError(f"seat must be 0..{rules.num_players - 1} for {rules.num_players} players")
        seed = _seed(settings.seed)
        game = Game(rules, seed=seed, log_limit=SESSION_LOG_LIMIT)
        specs = _expand(list(settings.opponents), rules.num_players - 1, "opponents")
        return cls.seated(Recorder(game, ["?"] * rules.num_players, meta={"seed": seed}), settings.seat,
                          specs, uno_time=settings.uno_time, forgetful=settings.forgetful, seed=seed)

    @classmethod
    def seated(cls, recorder: Recorder, human: int, specs: list[str], *, uno_time: float, forgetful: float,
               seed: int) -> PlaySession:
        """Seat the AI opponents (``specs`` clockwise from the person's left) at a recorded game."""
        game = recorder.game
        n = game.num_players
        seeder = random.Random(seed)
        seats: dict[int, Seat] = {}
        by_seat: dict[int, str] = {}
        for offset, spec in enumerate(specs, 1):
            seat = (human + offset) % n
            try:
                seats[seat] = build_seat(spec, game.rules.edition, n, seeder.getrandbits(63), forgetful)
            except SpecError as err:
                raise ClientError(str(err)) from None
            by_seat[seat] = spec
        session = cls(recorder, human, seats, by_seat, uno_time=uno_time, forgetful=forgetful, seed=seed)
        recorder.agents = list(session.labels)
        return session

    @classmethod
    def load(cls, message: P.Load) -> PlaySession:
        """A game from a save (``uno-env play``'s format, which this app also writes, or a bare
        ``Game.to_dict``), checked by the terminal game's ``saved_game``; raises ``ClientError``."""
        try:
            saved = saved_game(bounded(message.data), "this file")
        except StateError as err:
            raise ClientError(str(err)) from None
        game = _session_game(saved.game)
        n = game.num_players
        human = message.seat if message.seat is not None else saved.human_seat or 0
        if human >= n:
            raise ClientError(f"seat must be 0..{n - 1} for this {n}-player game, got {human}")
        specs_in = message.opponents or saved.opponents or ["ppo"]
        specs = _expand(list(specs_in), n - 1, "opponents")
        recorder = Recorder(game, ["?"] * n, meta={"loaded": True})
        if saved.replay is not None:
            try:
                recorder = Recorder.resume(saved.replay, game)
            except ReplayError as err:
                raise ClientError(f"the save's replay does not fit its game: {err}") from None
        seed = (saved.seed * 1_000_003 + len(recorder.actions)) % 2**63 if saved.seed else _seed(None)
        return cls.seated(recorder, human, specs, uno_time=message.uno_time, forgetful=saved.forgetful, seed=seed)

    # ---------------------------------------------------------------- messages
    def snapshot(self) -> dict[str, Any]:
        self.cursor = 0
        self._arm_uno_timer()
        return self.table()

    def table(self, actor: int | None = None, action: str | None = None) -> dict[str, Any]:
        """The table message: ``seat_payload`` plus public facts (labels, who did what, the UNO timer)."""
        payload, self.cursor = seat_payload(self.game, self.human, self.cursor)
        left = None if self.uno_deadline is None else max(0.0, self.uno_deadline - time.monotonic())
        return {"type": "table", "mode": "play", "seat": self.human, "labels": self.labels, **payload,
                "actor": actor, "action": action, "uno": {"called": self.precalled, "seconds_left": left},
                "index": len(self.recorder.actions), "over": self.game.is_game_over, "error": self.error}

    def save_data(self) -> dict[str, Any]:
        """The whole game (every hand included) as ``uno-env play`` saves it, plus its replay from the start."""
        n = self.game.num_players
        return {"format": SAVE_FORMAT, "version": SAVE_VERSION, "human_seat": self.human,
                "opponents": [self.specs[(self.human + k) % n] for k in range(1, n)],
                "forgetful": self.forgetful, "seed": self.seed, "uno_prompt": False, "game": self.game.to_dict(),
                "replay": self.recorder.replay().to_dict()}

    def replay(self) -> Replay | None:
        return self.recorder.replay() if self.game.is_game_over else None

    async def handle(self, message: BaseModel) -> None:
        async with self.lock:
            if isinstance(message, P.Act):
                await self._act(message.action)
            elif isinstance(message, P.CallUno):
                await self._call_uno()
            elif isinstance(message, P.NextRound):
                if not self.game.is_round_over or self.game.is_game_over:
                    raise ClientError("the game is over" if self.game.is_game_over else "the round is not over yet")
                self.recorder.next_round()
                await self._step_done(None, None)
            elif isinstance(message, P.Save):  # built in a worker thread (megabytes at MAX_REPLAY_ACTIONS)
                await self.send({"type": "saved", "data": await asyncio.to_thread(self.save_data),
                                 "filename": f"uno-{self.game.rules.edition}-round{self.game.round_number}.json"})
            else:
                await super().handle(message)

    async def _act(self, action: str | int) -> None:
        game = self.game
        if game.is_round_over:
            raise ClientError("the game is over" if game.is_game_over else "the round is over: deal the next round")
        if game.current_player != self.human:
            seat = game.current_player
            raise ClientError(f"it is not your turn: player {seat} ({self.labels[seat or 0]}) decides now")
        try:
            chosen = game.parse_action(action) if isinstance(action, str) else game.action(action)
            self.record(chosen)
        except UnoError as err:
            raise ClientError(str(err)) from None
        await self._step_done(self.human, chosen.text)

    async def _call_uno(self) -> None:
        game = self.game
        if game.is_round_over or game.current_player != self.human:
            raise ClientError("call UNO during your own turn (before or as you play your second-to-last card)")
        if A.UNO in game.legal_actions():
            self.record(A.UNO)
            await self._step_done(self.human, "uno")
            return
        self.precalled = True
        await self.send(self.table())

    async def attach(self, sender: Send) -> None:
        await super().attach(sender)
        async with self.lock:
            await self._advance(None, None, send_first=False)

    async def _step_done(self, actor: int | None, action: str | None) -> None:
        """After a step: send it, then let the AI seats play until the person decides or the round ends."""
        self.decisions += 1
        self.uno_deadline = None
        self.error = None
        if self.game.current_player != self.human:
            self.precalled = False
        await self._advance(actor, action)

    async def _advance(self, actor: int | None, action: str | None, send_first: bool = True) -> None:
        game = self.game
        while True:
            if send_first:
                self._arm_uno_timer()
                await self.send(self.table(actor, action))
                self.touch()
            send_first = True
            seat = game.current_player
            if game.is_round_over or seat is None or self.closed:
                return
            if seat == self.human:
                if game.phase.text == "uno" and self.precalled and self.limit() is None:
                    self.record(A.UNO)
                    self.precalled = False
                    self.decisions += 1
                    actor, action = seat, "uno"
                    continue
                return
            stop = self.limit()
            if stop is not None:  # the AI seats stop at the cap too (the person's moves are refused)
                self.error = stop
                await self.send(self.table())
                return
            ai = self.seats[seat]
            try:
                chosen, note = await asyncio.to_thread(decide, ai, game, seat)
                self.recorder.step(chosen, note)
            except Exception as err:  # an agent's bug must not take the server down
                log.exception("AI seat %s failed", seat)
                self.error = f"player {seat} ({self.labels[seat]}) failed: {type(err).__name__}: {err}"
                await self.send(self.table())
                return
            self.decisions += 1
            if game.current_player != self.human:
                self.precalled = False
            actor, action = seat, str(game.action(chosen))

    def _arm_uno_timer(self) -> None:
        game = self.game
        if (self.uno_time <= 0 or self.uno_deadline is not None or game.current_player != self.human
                or game.phase.text != "uno" or self.precalled):
            return
        self.uno_deadline = time.monotonic() + self.uno_time
        self.spawn(self._uno_timeout(self.decisions, self.uno_time))

    async def _uno_timeout(self, decision: int, seconds: float) -> None:
        await asyncio.sleep(seconds)
        async with self.lock:
            if self.closed or self.decisions != decision or self.limit() is not None:
                return
            self.record(A.NO_UNO)
            await self._step_done(self.human, "no-uno")


class WatchSession(_Recording):
    """AI against AI at a chosen pace; every hand is shown (no person sits at the table)."""

    kind = "watch"

    def __init__(self, recorder: Recorder, seats: dict[int, Seat], delay: float) -> None:
        super().__init__()
        self.recorder = recorder
        self.game = recorder.game
        self.seats = seats
        self.labels = [seats[s].label for s in range(self.game.num_players)]
        recorder.agents = list(self.labels)
        self.delay = delay
        self.running = asyncio.Event()
        self.paused = False
        self.cursor = 0
        self.started = False

    @classmethod
    def create(cls, settings: P.WatchSettings) -> WatchSession:
        """An AI-only game from the page's settings; raises ``ClientError``."""
        rules = _rules(settings)
        seed = _seed(settings.seed)
        specs = _expand(list(settings.agents), rules.num_players, "agents")
        seeder = random.Random(seed)
        try:
            seats = {s: build_seat(spec, rules.edition, rules.num_players, seeder.getrandbits(63), settings.forgetful)
                     for s, spec in enumerate(specs)}
        except SpecError as err:
            raise ClientError(str(err)) from None
        recorder = Recorder(Game(rules, seed=seed, log_limit=SESSION_LOG_LIMIT), [s.label for s in seats.values()], meta={"seed": seed})
        return cls(recorder, seats, settings.delay)

    def frame(self, actor: int | None = None, action: str | None = None, note: dict[str, Any] | None = None
              ) -> dict[str, Any]:
        payload, self.cursor = full_payload(self.game, self.cursor)
        return {"type": "frame", "mode": "watch", "labels": self.labels, **payload, "move": _move(
            self.game, actor, action, note, self.labels), "index": len(self.recorder.actions),
            "delay": self.delay, "paused": self.paused, "over": self.game.is_game_over}

    def snapshot(self) -> dict[str, Any]:
        self.cursor = 0
        return self.frame()

    async def attach(self, sender: Send) -> None:
        await super().attach(sender)
        if not self.paused:
            self.running.set()
        if not self.started:
            self.started = True
            self.spawn(self._run())

    def replay(self) -> Replay | None:
        return self.recorder.replay()

    async def handle(self, message: BaseModel) -> None:
        if not isinstance(message, P.WatchControl):
            await super().handle(message)
            return
        async with self.lock:
            if message.delay is not None:
                self.delay = message.delay
            if message.paused is not None:
                self.paused = message.paused
                (self.running.clear if self.paused else self.running.set)()
            await self.send(self.frame())

    async def _run(self) -> None:
        game = self.game
        while not game.is_game_over:
            stop = self.limit()
            if stop is not None:  # the watched game stops, and says so
                await self.send({"type": "error", "message": stop, "request": None})
                return
            await self.running.wait()
            if self.sender is None:  # nobody watching: wait for a resume
                self.running.clear()
                continue
            async with self.lock:
                if game.is_round_over:
                    self.recorder.next_round()
                    message = self.frame()
                else:
                    seat = game.current_player
                    assert seat is not None
                    chosen, note = await asyncio.to_thread(decide, self.seats[seat], game, seat)
                    self.recorder.step(chosen, note)  # limit() was checked at the top of this turn; only _run records here
                    message = self.frame(seat, str(game.action(chosen)), note)
                await self.send(message)
                self.touch()
            pause = self.delay * (4 if game.is_round_over else 1)
            await asyncio.sleep(pause)


def _move(game: Game, seat: int | None, action: str | None, note: dict[str, Any] | None,
          labels: list[str]) -> dict[str, Any] | None:
    """A decision for display: who, what, and (PPO) the most probable actions as texts."""
    if seat is None or action is None:
        return None
    top = [[str(game.action(a)), p] for a, p in (note or {}).get("top", [])]
    agent = (note or {}).get("agent") or labels[seat]
    return {"seat": seat, "agent": agent, "action": action, "top": top}


class ReplaySession(Session):
    """A replay with a step slider: every hand shown, each decision with its agent (and PPO's odds)."""

    kind = "replay"

    def __init__(self, replay: Replay, title: str) -> None:
        super().__init__()
        self.replay_data = replay
        self.title = title
        self.index = len(replay.actions)
        # Positions kept for seeking: at most MAX_KEPT, without their event logs (a frame needs only the
        # events one action adds), so a long replay costs little memory.
        self.every = max(CHECKPOINT_EVERY, -(-len(replay.actions) // MAX_KEPT))
        self.kept: dict[int, Game] = {0: Game.from_dict(replay.start, log_limit=SESSION_LOG_LIMIT)}
        self.building: asyncio.Future[dict[str, Any]] | None = None  # the last frame built in a worker thread

    def _game_at(self, index: int) -> Game:
        """A fresh game at position ``index`` (before any ``finish``), from the nearest kept position."""
        base = max(i for i in self.kept if i <= index)
        game = self.kept[base].clone()
        for i in range(base, index):
            self.replay_data.apply(game, i)
            if (i + 1) % self.every == 0 and i + 1 not in self.kept:
                self.kept[i + 1] = Game.from_dict(game.to_dict(include_log=False), log_limit=SESSION_LOG_LIMIT)
        return game

    def frame(self, index: int) -> dict[str, Any]:
        """The table at ``index`` with the events and the decision that led there."""
        replay = self.replay_data
        last = len(replay.actions)
        if index > last:
            raise ClientError(f"this replay has positions 0..{last}, not {index}")
        move = None
        if index == 0:
            game, cursor = self._game_at(0), 0
        else:
            game = self._game_at(index - 1)
            cursor = game.log_length
            seat = replay.apply(game, index - 1)
            move = _move(game, seat, str(game.action(replay.actions[index - 1])),
                         replay.annotations[index - 1] if index - 1 < len(replay.annotations) else None, replay.agents)
        if index == last:
            replay.finish(game)
        payload, _ = full_payload(game, cursor)
        self.index = index
        return {"type": "frame", "mode": "replay", "labels": replay.agents, **payload, "move": move,
                "index": index, "length": last, "title": self.title, "over": game.is_game_over}

    async def build(self, index: int) -> dict[str, Any]:
        """``frame(index)``, built in a worker thread so the event loop (every other connection) goes on;
        raises ``ClientError`` when it takes more than ``FRAME_TIMEOUT`` seconds, or while such a build
        still runs (one build at a time: ``frame`` changes the kept positions)."""
        if self.building is not None and not self.building.done():
            raise ClientError("this replay is still building a position asked for earlier; try again in a moment")
        task = asyncio.ensure_future(asyncio.to_thread(self.frame, index))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a late error is not logged as lost
        self.building = task
        done, _ = await asyncio.wait({task}, timeout=FRAME_TIMEOUT)
        if not done:
            raise ClientError(f"position {index} of this replay took more than {FRAME_TIMEOUT:g} s to build; "
                              "try again in a moment, or a nearer position")
        return task.result()

    @property
    def weight(self) -> int:
        return len(self.replay_data.actions)

    def snapshot(self) -> dict[str, Any]:
        return self.frame(self.index)

    async def attach(self, sender: Send) -> None:
        self.sender = sender
        self.touch()
        async with self.lock:
            await self.send(await self.build(self.index))

    def replay(self) -> Replay | None:
        return self.replay_data

    async def handle(self, message: BaseModel) -> None:
        if not isinstance(message, P.ReplaySeek):
            await super().handle(message)
            return
        async with self.lock:
            await self.send(await self.build(message.index))


def replay_from_data(data: dict[str, Any]) -> tuple[Replay, str]:
    """A replay (and a title) from a replay file or a saved game; raises ``ClientError``.

    A save that holds its replay (this app's) replays from the start; another save (``uno-env
    play``'s, a bare ``Game.to_dict``) opens as its one saved position, every hand shown."""
    data = bounded(data)
    try:
        if data.get("format") == REPLAY_FORMAT:
            return Replay.from_dict(data), "replay file"
        saved = saved_game(data, "this file")
    except StateError as err:
        raise ClientError(f"{err} (a replay is a replay file or a saved game)") from None
    if saved.replay is not None:
        return saved.replay, "saved game"
    game = saved.game
    return Replay(start=game.to_dict(), agents=[f"player {s}" for s in range(game.num_players)]), "saved position"


class Registry:
    """The held sessions and their limits (see the module docstring); ``clock`` gives the time in seconds."""

    def __init__(self, max_sessions: int = 200, idle_timeout: float = 1800.0, *,
                 resume_timeout: float = RESUME_TIMEOUT, max_per_client: int = MAX_SESSIONS_PER_CLIENT,
                 max_actions: int = MAX_HELD_ACTIONS, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_sessions = max_sessions
        self.max_actions = max_actions
        self.idle_timeout = idle_timeout
        self.resume_timeout = resume_timeout
        self.max_per_client = max_per_client
        self.clock = clock
        self.sessions: dict[str, Session] = {}
        self.expired = 0
        self.evicted = 0

    def add(self, session: Session, client: str = "", replacing: Session | None = None) -> None:
        """Register a new session started from address ``client``; raises ``ClientError`` when that client
        or the server already has its most live sessions. ``replacing``: a session the caller drops next
        (not counted)."""
        self.expire()
        others = [s for s in self.sessions.values() if s is not replacing]
        mine = [s for s in others if s.client == client]
        if sum(s.live for s in mine) >= self.max_per_client:
            session.close()
            raise ClientError(f"this address already has {self.max_per_client} games open, the most one address "
                              "may have; leave one (or close its tab) first")
        if len(mine) >= self.max_per_client:
            self._evict_oldest_disconnected(mine)
        if len(others) >= self.max_sessions and not self._evict_oldest_disconnected(others):
            session.close()
            raise ClientError(f"the server holds its maximum of {self.max_sessions} live games; try again later")
        while True:
            others = [s for s in self.sessions.values() if s is not replacing]
            held = sum(s.weight for s in others)
            if held + session.weight <= self.max_actions:
                break
            if not self._evict_oldest_disconnected(others):
                session.close()
                raise ClientError(f"this game's {session.weight} recorded actions do not fit beside the {held} the "
                                  f"server's games hold (at most {self.max_actions} together); try again later, or "
                                  "open a shorter replay")
        session.crowded = self.crowded
        session.clock = self.clock
        session.client = client
        session.touch()
        self.sessions[session.id] = session

    def _evict_oldest_disconnected(self, candidates: list[Session]) -> bool:
        """Drop the session among ``candidates`` whose connection closed first; False if every one is live."""
        waiting = [s for s in candidates if s.disconnected_at is not None]
        if not waiting:
            return False
        self.remove(min(waiting, key=lambda s: s.disconnected_at or 0.0))
        self.evicted += 1
        return True

    def crowded(self) -> str | None:
        """Why a growing game may record no more actions (the sessions hold ``max_actions``), or None."""
        if sum(s.weight for s in self.sessions.values()) < self.max_actions:
            return None
        return (f"the server's games hold {self.max_actions} recorded actions together, the most it keeps "
                "(--max-actions); this game goes on once others end or expire")

    def get(self, session_id: str, token: str) -> Session:
        """The session with this id and token; raises ``ClientError``."""
        session = self.sessions.get(session_id)
        if session is None or not hmac.compare_digest(session.token, token):
            raise ClientError("no such session (it ended or expired); start a new game")
        return session

    def remove(self, session: Session) -> None:
        """Close and drop a session."""
        session.close()
        self.sessions.pop(session.id, None)

    def expire(self, now: float | None = None) -> list[str]:
        """Close and drop every session idle longer than ``idle_timeout`` or disconnected longer than
        ``resume_timeout``; their ids."""
        now = self.clock() if now is None else now
        gone = [s for s in self.sessions.values() if now - s.last_active > self.idle_timeout
                or (s.disconnected_at is not None and now - s.disconnected_at >= self.resume_timeout)]
        for session in gone:
            self.remove(session)
        self.expired += len(gone)
        return [s.id for s in gone]

    def stats(self) -> dict[str, Any]:
        """Counts for /api/stats."""
        kinds: dict[str, int] = {}
        for session in self.sessions.values():
            kinds[session.kind] = kinds.get(session.kind, 0) + 1
        return {"sessions": len(self.sessions), "live": sum(s.live for s in self.sessions.values()),
                "by_kind": kinds, "expired": self.expired, "evicted": self.evicted,
                "max_sessions": self.max_sessions, "max_per_client": self.max_per_client,
                "held_actions": sum(s.weight for s in self.sessions.values()), "max_actions": self.max_actions,
                "idle_timeout": self.idle_timeout, "resume_timeout": self.resume_timeout}
