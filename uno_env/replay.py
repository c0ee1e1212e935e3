"""Replays: a whole game as data (where it started, every action, who decided what).

A replay is a JSON file that the web app's Replay view and ``uno-env evaluate --replays``
read and write::

    {
      "format": "uno_env.replay", "version": 1,
      "start": {...},                  # Game.to_dict() of the first position
      "agents": ["you", "rule", ...],  # one display label per seat
      "actions": [55, 12, ...],        # every action id, in order
      "annotations": [null, {"agent": "ppo", "top": [[12, 0.62], [55, 0.21]]}, ...],
      "decks": {"2": ["R7", ...]},     # decks dealt by next_round, by round number (optional)
      "rounds": 3,                     # rounds dealt by the last position
      "meta": {"title": "...", "seed": 7}
    }

Replaying applies the actions to the start position; when a round is over and another
action follows (or ``rounds`` says one more round was dealt), ``next_round`` deals it, with
the deck listed under that round's number in ``decks`` or else shuffled by the game's own
generator, whose state the start position holds. So the same replay always gives the same
positions.

``annotations`` has one entry per action, ``null`` or an object with ``agent`` (the label of
whoever decided, when it differs from the seat's) and ``top`` (the deciding agent's most
probable actions as ``[action id, probability]`` pairs, most probable first; a PPO agent's
masked policy). ``agents`` and ``agent`` are labels for display only: nothing in a replay
is ever built into an agent, imported or run. ``meta`` holds display data only (strings,
numbers, booleans).

``Replay.from_dict`` (and ``Replay.load``) check every field and replay every action, and
raise ``ReplayError`` (a ``StateError``) naming what is wrong; a replay that loads can be
stepped to its end. ``Recorder`` writes one while a game is played::

    >>> from uno_env.core import Game, Rules
    >>> from uno_env.replay import Recorder, Replay
    >>> recorder = Recorder(Game(Rules(num_players=2, target_score=50), seed=3), ["alice", "bob"])
    >>> while not recorder.game.is_game_over:
    ...     if recorder.game.is_round_over:
    ...         recorder.next_round()
    ...     else:
    ...         recorder.step(recorder.game.legal_actions()[0])
    >>> replay = Replay.from_dict(recorder.replay().to_dict())  # validated by replaying it
    >>> replay.final_game().to_dict(include_log=False) == recorder.game.to_dict(include_log=False)
    True
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from uno_env.core import Game
from uno_env.core.actions import NUM_ACTIONS, Action
from uno_env.core.cards import short_list, short_repr
from uno_env.core.errors import GameFlowError, StateError, UnoError
from uno_env.files import NotARegularFileError, atomic_write, read_at_most

__all__ = ["MAX_ACTIONS", "MAX_FILE_BYTES", "REPLAY_FORMAT", "REPLAY_VERSION", "Recorder", "Replay", "ReplayError"]

REPLAY_FORMAT = "uno_env.replay"
REPLAY_VERSION = 1
MAX_ACTIONS = 500_000  # a whole game of ten players to a high target stays far below this
MAX_FILE_BYTES = 64 * 1024 * 1024  # ``Replay.load`` reads at most one byte more and refuses larger files
MAX_TOP = 10  # probabilities kept per annotation
MAX_LABEL = 80  # characters of an agent label or a meta string
MAX_META = 32  # meta entries
_KEYS = {"format", "version", "start", "agents", "actions", "annotations", "decks", "rounds", "meta"}
_ANNOTATION_KEYS = {"agent", "top"}


class ReplayError(StateError):
    """A replay that is malformed, or whose actions do not replay from its start position."""


def _fail(what: str) -> ReplayError:
    return ReplayError(f"invalid replay: {what}")


@dataclass
class Replay:
    """One recorded game: start position, actions, per-action annotations and seat labels."""

    start: dict[str, Any]
    agents: list[str]
    actions: list[int] = field(default_factory=list)
    annotations: list[dict[str, Any] | None] = field(default_factory=list)
    decks: dict[int, list[str]] = field(default_factory=dict)
    rounds: int | None = None  # None: the start position's round plus the rounds the actions imply
    meta: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ positions
    def start_game(self) -> Game:
        """A fresh ``Game`` at the start position."""
        return Game.from_dict(self.start)

    def apply(self, game: Game, index: int) -> int:
        """Apply action ``index`` to ``game``, which must be at position ``index`` (deals a round first if
        due); returns the seat that took it."""
        if game.is_round_over:
            game.next_round(deck=self.decks.get(game.round_number + 1))
        seat = game.current_player
        assert seat is not None
        game.step(self.actions[index])
        return seat

    def finish(self, game: Game) -> None:
        """Deal the rounds dealt after the last action (``rounds``), on the game at the last position."""
        target = self.rounds if self.rounds is not None else game.round_number
        while game.round_number < target and game.is_round_over and not game.is_game_over:
            game.next_round(deck=self.decks.get(game.round_number + 1))

    def positions(self) -> Iterator[Game]:
        """The game at every position, 0 to ``len(actions)`` (one object, advanced in place)."""
        game = self.start_game()
        yield game
        for index in range(len(self.actions)):
            self.apply(game, index)
            if index == len(self.actions) - 1:
                self.finish(game)
            yield game

    def game_at(self, index: int) -> Game:
        """A fresh ``Game`` after the first ``index`` actions (0 is the start, ``len(actions)`` the end)."""
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= len(self.actions):
            raise ValueError(f"a replay position is an int 0..{len(self.actions)}, got {short_repr(index)}")
        game = self.start_game()
        for i in range(index):
            self.apply(game, i)
        if index == len(self.actions):
            self.finish(game)
        return game

    def final_game(self) -> Game:
        """The game at the last position."""
        return self.game_at(len(self.actions))

    # ------------------------------------------------------------------ data
    def to_dict(self) -> dict[str, Any]:
        """The replay as JSON data (the module docstring's layout)."""
        data: dict[str, Any] = {
            "format": REPLAY_FORMAT, "version": REPLAY_VERSION, "start": self.start, "agents": list(self.agents),
            "actions": [int(a) for a in self.actions],
            "annotations": [None if a is None else dict(a) for a in self.annotations],
            "decks": {str(r): list(d) for r, d in sorted(self.decks.items())},
            "meta": dict(self.meta),
        }
        if self.rounds is not None:
            data["rounds"] = self.rounds
        return data

    def to_json(self) -> str:
        """The replay as compact JSON text."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the replay as JSON (atomically: the old file or the new one, never half of one)."""
        atomic_write(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Replay:
        """Read and validate a replay file; raises ``ReplayError`` (or ``OSError`` when unreadable)."""
        try:
            raw = read_at_most(path, MAX_FILE_BYTES)  # not its stated size: a device has none
        except (NotARegularFileError, IsADirectoryError) as err:
            raise _fail(f"{os.fspath(path)}: {err.strerror}; a replay is a JSON file") from None
        if raw is None:
            raise _fail(f"{os.fspath(path)} holds more than {MAX_FILE_BYTES} bytes; a replay is at most that")
        return cls.from_json(raw)

    @classmethod
    def from_json(cls, text: str | bytes) -> Replay:
        """Parse and validate replay JSON text; raises ``ReplayError``."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise _fail(f"not JSON ({type(err).__name__}: {err})") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> Replay:
        """Validate replay data and replay every action; raises ``ReplayError`` naming the problem."""
        if not isinstance(data, dict):
            raise _fail(f"a replay is a JSON object, got {type(data).__name__}")
        if data.get("format") != REPLAY_FORMAT:
            raise _fail(f"format must be {REPLAY_FORMAT!r}, got {short_repr(data.get('format'))}")
        if data.get("version") != REPLAY_VERSION:
            raise _fail(f"version must be {REPLAY_VERSION}, got {short_repr(data.get('version'))} (this program reads version 1)")
        unknown = sorted(str(k) for k in data if k not in _KEYS)
        if unknown:
            raise _fail(f"unknown key(s) {short_list(unknown)}; keys are {', '.join(sorted(_KEYS))}")
        missing = sorted(k for k in ("start", "agents", "actions") if k not in data)
        if missing:
            raise _fail(f"missing key(s) {', '.join(missing)}")
        start = data["start"]
        try:
            game = Game.from_dict(start)
        except StateError as err:
            raise _fail(f"start: {err}") from None
        n = game.num_players
        agents = _labels(data["agents"], n)
        actions = _actions(data["actions"])
        annotations = _annotations(data.get("annotations", [None] * len(actions)), len(actions))
        decks = _decks(data.get("decks", {}))
        rounds = data.get("rounds")
        if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int)):
            raise _fail(f"rounds must be an int, got {short_repr(rounds)}")
        meta = _meta(data.get("meta", {}))
        replay = cls(start=start, agents=agents, actions=actions, annotations=annotations, decks=decks,
                     rounds=rounds, meta=meta)
        replay._check(game)
        return replay

    def _check(self, game: Game) -> None:
        """Replay every action from ``game`` (the start position); raise ``ReplayError`` at the first bad one."""
        first_round = game.round_number
        dealt = {first_round}
        for index, action in enumerate(self.actions):
            if game.is_game_over:
                raise _fail(f"actions[{index}]: the game is already over ({len(self.actions) - index} actions too many)")
            try:
                if game.is_round_over:
                    game.next_round(deck=self.decks.get(game.round_number + 1))
                    dealt.add(game.round_number)
                game.step(action)
            except UnoError as err:
                raise _fail(f"actions[{index}] ({action}) in round {game.round_number}: {err}") from None
        final = self.rounds if self.rounds is not None else game.round_number
        if final < game.round_number:
            raise _fail(f"rounds is {final} but the actions reach round {game.round_number}")
        try:
            while game.round_number < final:
                game.next_round(deck=self.decks.get(game.round_number + 1))
                dealt.add(game.round_number)
        except (UnoError, GameFlowError) as err:
            raise _fail(f"rounds is {final} but round {game.round_number + 1} cannot be dealt: {err}") from None
        never = sorted(set(self.decks) - dealt)
        if never:
            raise _fail(f"decks: round(s) {short_list(list(map(str, never)))} are never dealt by this replay")


def _labels(value: Any, n: int) -> list[str]:
    if not isinstance(value, list) or len(value) != n or not all(isinstance(v, str) for v in value):
        raise _fail(f"agents must be a list of {n} strings (a label per seat)")
    if any(len(v) > MAX_LABEL for v in value):
        raise _fail(f"agent labels are at most {MAX_LABEL} characters")
    return list(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _actions(value: Any) -> list[int]:
    if not isinstance(value, list):
        raise _fail(f"actions must be a list of action ids, got {type(value).__name__}")
    if len(value) > MAX_ACTIONS:
        raise _fail(f"{len(value)} actions; a replay holds at most {MAX_ACTIONS}")
    for index, action in enumerate(value):
        if not _is_int(action) or not 0 <= action < NUM_ACTIONS:
            raise _fail(f"actions[{index}] must be an action id 0..{NUM_ACTIONS - 1}, got {short_repr(action)}")
    return list(value)


def _annotations(value: Any, count: int) -> list[dict[str, Any] | None]:
    if not isinstance(value, list) or len(value) != count:
        raise _fail(f"annotations must be a list with one entry (null or an object) per action ({count})")
    out: list[dict[str, Any] | None] = []
    for index, note in enumerate(value):
        where = f"annotations[{index}]"
        if note is None:
            out.append(None)
            continue
        if not isinstance(note, dict):
            raise _fail(f"{where} must be null or an object")
        unknown = sorted(str(k) for k in note if k not in _ANNOTATION_KEYS)
        if unknown:
            raise _fail(f"{where}: unknown key(s) {short_list(unknown)}; keys are agent, top")
        agent = note.get("agent")
        if agent is not None and (not isinstance(agent, str) or len(agent) > MAX_LABEL):
            raise _fail(f"{where}.agent must be a label of at most {MAX_LABEL} characters")
        top = note.get("top")
        if top is not None:
            _top(top, where)
        out.append(dict(note))
    return out


def _top(top: Any, where: str) -> None:
    if not isinstance(top, list) or len(top) > MAX_TOP:
        raise _fail(f"{where}.top must be a list of at most {MAX_TOP} [action id, probability] pairs")
    for pair in top:
        if (not isinstance(pair, list) or len(pair) != 2 or not _is_int(pair[0])
                or not 0 <= pair[0] < NUM_ACTIONS or isinstance(pair[1], bool)
                or not isinstance(pair[1], (int, float)) or not math.isfinite(pair[1]) or not 0 <= pair[1] <= 1):
            raise _fail(f"{where}.top: each entry is [action id 0..{NUM_ACTIONS - 1}, probability 0..1], got {short_repr(pair)}")


def _decks(value: Any) -> dict[int, list[str]]:
    if not isinstance(value, dict):
        raise _fail("decks must be an object: round number -> list of card codes, top first")
    decks: dict[int, list[str]] = {}
    for key, deck in value.items():
        if not isinstance(key, str) or not key.isdigit() or not 2 <= int(key) <= MAX_ACTIONS:
            raise _fail(f"decks: key {short_repr(key)} is not a round number (2 or more)")
        if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
            raise _fail(f"decks[{key}] must be a list of card codes")
        decks[int(key)] = list(deck)
    return decks


def _meta(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > MAX_META:
        raise _fail(f"meta must be an object of at most {MAX_META} entries")
    for key, item in value.items():
        if not isinstance(key, str) or len(key) > MAX_LABEL:
            raise _fail(f"meta keys are strings of at most {MAX_LABEL} characters")
        ok = item is None or isinstance(item, (bool, str)) or (
            isinstance(item, (int, float)) and math.isfinite(item) and abs(item) < 2**63)
        if not ok or (isinstance(item, str) and len(item) > MAX_LABEL):
            raise _fail(f"meta[{short_repr(key)}] must be null, a boolean, a finite number or a short string")
    return dict(value)


class Recorder:
    """Plays a game and records it: use ``step`` and ``next_round`` instead of the game's own."""

    def __init__(self, game: Game, agents: Sequence[str], meta: Mapping[str, Any] | None = None) -> None:
        if len(agents) != game.num_players:
            raise ValueError(f"agents needs a label per seat ({game.num_players}), got {len(agents)}")
        self.game = game
        self.start = game.to_dict()
        self.agents = [str(a) for a in agents]
        self.actions: list[int] = []
        self.annotations: list[dict[str, Any] | None] = []
        self.decks: dict[int, list[str]] = {}
        self.meta = dict(meta or {})

    @classmethod
    def resume(cls, replay: Replay, game: Game) -> Recorder:
        """Go on recording ``replay`` with ``game``, which must be at its last position (a saved game);
        raises ``ReplayError`` otherwise."""
        if replay.final_game().to_dict(include_log=False) != game.to_dict(include_log=False):
            raise _fail("its last position is not this game's position")
        recorder = cls(game, replay.agents, replay.meta)
        recorder.start = replay.start
        recorder.actions = list(replay.actions)
        recorder.annotations = list(replay.annotations)
        recorder.decks = dict(replay.decks)
        return recorder

    def step(self, action: Action | int | str, annotation: Mapping[str, Any] | None = None) -> None:
        """Apply one action to the game (raises what ``Game.step`` raises, recording nothing) and record it."""
        game = self.game
        chosen = game.parse_action(action) if isinstance(action, str) else game.action(action)
        game.step(chosen)
        self.actions.append(int(chosen))
        self.annotations.append(dict(annotation) if annotation else None)

    def next_round(self, deck: Sequence[str] | None = None) -> None:
        """Deal the next round (``Game.next_round``), recording the deck when one is given."""
        self.game.next_round(deck=deck)
        if deck is not None:
            self.decks[self.game.round_number] = list(deck)

    def replay(self) -> Replay:
        """The recording so far (a snapshot: later steps do not change it)."""
        return Replay(start=self.start, agents=list(self.agents), actions=list(self.actions),
                      annotations=list(self.annotations), decks=dict(self.decks), rounds=self.game.round_number,
                      meta=dict(self.meta))
