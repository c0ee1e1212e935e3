"""The WebSocket protocol: every message a browser may send, validated before anything acts on it.

Each client message is one JSON object with a ``type``; unknown types, unknown or missing
fields, wrong types (``"4"`` for a number, ``1.0`` for a seat) and out-of-range values raise
``ProtocolError`` with a message naming the field and what is allowed. The server answers
``{"type": "error", "message": ..., "request": <type>}`` and changes nothing.

==================  ==========================================================================
type                fields
==================  ==========================================================================
``new_game``        ``settings``: a ``PlaySettings`` object (edition, players, seat, opponents...)
``watch``           ``settings``: a ``WatchSettings`` object (agents at every seat, delay)
``act``             ``action``: action text (``"play R7"``, ``"color blue"``) or an action id
``uno``             call UNO during your turn (before or as you play your second-to-last card)
``next_round``      deal the next round once a round is over
``save``            answer with the whole game as JSON (``Game.to_dict`` inside a save)
``load``            ``data``: a save (this app's, ``uno-env play``'s, or a bare ``Game.to_dict``);
                    optional ``seat`` and ``opponents`` for saves that do not name them
``watch_control``   optional ``delay`` (seconds between moves) and ``paused``
``replay_open``     ``source``: ``"game"`` (the finished game of this connection) or ``data``:
                    a replay file, or a saved game
``replay_seek``     ``index``: the position to show (0 .. number of actions)
``replay_download`` answer with the replay of the finished game or the open replay
``resume``          ``session`` and ``token``: take over a session after a reconnect
``leave``           end this connection's session
``ping``            answered with ``pong``
==================  ==========================================================================
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from uno_env.core.cards import EDITIONS
from uno_env.core.rules import SCORING_MODES, UNO_CALL_MODES, EditionName, ScoringMode, UnoCallMode

MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # a saved game with its replay is far smaller; larger messages are refused
MAX_TARGET = 100_000
Edition = EditionName  # the core's one list of edition names


class ProtocolError(ValueError):
    """A client message that is not valid JSON, has an unknown type, or has bad fields."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class TableSettings(_Strict):
    """Rule options of a new table (``uno_env.core.Rules``) and the AI's habits."""

    edition: Edition = "classic"
    players: Annotated[int, Field(ge=2, le=10, description="table size")] = 4
    target_score: Annotated[int, Field(ge=1, le=MAX_TARGET)] = 500
    uno_call: UnoCallMode = "explicit"
    allow_bluff: bool = True
    scoring: ScoringMode = "standard"
    teams: bool = False
    elimination: bool = False
    stacking: bool = False
    seven_zero: bool = False
    draw_until_playable: bool = False
    first_dealer: Annotated[int | None, Field(ge=0, le=9)] = None
    seed: Annotated[int | None, Field(ge=0, lt=2**63, description="same seed, same deals")] = None
    forgetful: Annotated[float, Field(ge=0.0, le=1.0, description="chance an AI forgets to call UNO")] = 0.1

    def rule_options(self) -> dict[str, Any]:
        """Keyword arguments for ``Rules``."""
        return {"edition": self.edition, "num_players": self.players, "target_score": self.target_score,
                "uno_call": self.uno_call, "allow_bluff": self.allow_bluff, "scoring": self.scoring,
                "teams": self.teams, "elimination": self.elimination, "stacking": self.stacking,
                "seven_zero": self.seven_zero, "draw_until_playable": self.draw_until_playable,
                "first_dealer": self.first_dealer}


class PlaySettings(TableSettings):
    """A game against AI opponents: your seat, the opponents clockwise from your left, the UNO timer."""

    seat: Annotated[int, Field(ge=0, le=9)] = 0
    opponents: Annotated[list[str], Field(min_length=1, max_length=9,
                                          description="one spec for every opponent, or one per opponent")] = ["ppo"]
    uno_time: Annotated[float, Field(ge=0.0, le=60.0, description="seconds to call UNO; 0 waits for uno / no-uno")] = 4.0


class WatchSettings(TableSettings):
    """AI against AI: an agent per seat and the pause between moves."""

    agents: Annotated[list[str], Field(min_length=1, max_length=10,
                                       description="one spec for every seat, or one per seat")] = ["rule"]
    delay: Annotated[float, Field(ge=0.0, le=10.0)] = 0.8
    forgetful: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0


class NewGame(_Strict):
    type: Literal["new_game"]
    settings: PlaySettings = PlaySettings()


class Watch(_Strict):
    type: Literal["watch"]
    settings: WatchSettings = WatchSettings()


class Act(_Strict):
    type: Literal["act"]
    action: Annotated[str, Field(max_length=40)] | StrictInt


class CallUno(_Strict):
    type: Literal["uno"]


class NextRound(_Strict):
    type: Literal["next_round"]


class Save(_Strict):
    type: Literal["save"]


class Load(_Strict):
    type: Literal["load"]
    data: dict[str, Any]
    seat: Annotated[int | None, Field(ge=0, le=9)] = None
    opponents: Annotated[list[str] | None, Field(min_length=1, max_length=9)] = None
    uno_time: Annotated[float, Field(ge=0.0, le=60.0)] = 4.0


class WatchControl(_Strict):
    type: Literal["watch_control"]
    delay: Annotated[float | None, Field(ge=0.0, le=10.0)] = None
    paused: bool | None = None


class ReplayOpen(_Strict):
    type: Literal["replay_open"]
    source: Literal["game", "data"] = "data"
    data: dict[str, Any] | None = None


class ReplaySeek(_Strict):
    type: Literal["replay_seek"]
    index: Annotated[int, Field(ge=0)]


class ReplayDownload(_Strict):
    type: Literal["replay_download"]


class Resume(_Strict):
    type: Literal["resume"]
    session: Annotated[str, Field(max_length=64)]
    token: Annotated[str, Field(max_length=64)]


class Leave(_Strict):
    type: Literal["leave"]


class Ping(_Strict):
    type: Literal["ping"]


MESSAGES: dict[str, type[_Strict]] = {
    model.model_fields["type"].annotation.__args__[0]: model  # type: ignore[union-attr]
    for model in (NewGame, Watch, Act, CallUno, NextRound, Save, Load, WatchControl, ReplayOpen, ReplaySeek,
                  ReplayDownload, Resume, Leave, Ping)
}


def _where(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("int", "str", "float", "bool", "constrained-str")]
    return ".".join(parts) or "message"


def parse_message(text: str | bytes) -> BaseModel:
    """A validated client message; raises ``ProtocolError`` saying what is wrong and what is allowed."""
    if len(text) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {len(text)} bytes; messages are at most {MAX_MESSAGE_BYTES}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise ProtocolError(f"a message is one JSON object ({type(err).__name__}: {str(err)[:120]})") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"a message is one JSON object with a 'type', got {type(data).__name__}")
    kind = data.get("type")
    model = MESSAGES.get(kind) if isinstance(kind, str) else None
    if "type" not in data:
        raise ProtocolError(f"the message has no 'type'; types are {', '.join(MESSAGES)}")
    if model is None:
        shown = kind if isinstance(kind, str) and len(kind) <= 40 else type(kind).__name__
        raise ProtocolError(f"unknown message type {shown!r}; types are {', '.join(MESSAGES)}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in err.errors()[:5])
        raise ProtocolError(f"bad {kind!r} message: {problems}") from None
    except RecursionError:
        raise ProtocolError(f"bad {kind!r} message: nested too deeply") from None


def rule_choices() -> dict[str, Any]:
    """The choices of every rule option, for the page's settings form."""
    return {"uno_call": list(UNO_CALL_MODES), "scoring": list(SCORING_MODES), "editions": list(EDITIONS),
            "players": [2, 10], "target_score": [1, MAX_TARGET]}
