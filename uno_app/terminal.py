"""``uno-env play``: one person against AI opponents in the terminal.

::

    uno-env play --edition monster_high --players 4 --opponents ppo,rule,rule

The human sits at ``--seat`` (default 0); the other seats, clockwise from the human's left,
are played by the agents named in ``--opponents`` (one spec for all, or one per opponent,
comma-separated; ``agents.registry`` documents specs): ``random``, ``rule``, ``simple``,
``ismcts``, ``guided`` (a search guided by a trained policy and critic, ``agents.guided``: at classic 2 players
the strongest per round, elsewhere level with its policy, docs/agents.md; ``guided:time_budget=0.5`` thinks
half a second a move)..., with options as ``rule:challenge=false``, ``ppo`` for the shipped checkpoint
for the table (the strongest its card measures: ``classic_2p_long_points`` for classic at 2 players,
``classic_4p_points`` at 4, ``classic_3to6`` at 3, 5 and 6, ``universal`` for every other table), ``ppo:NAME`` for a shipped one by name, ``ppo:PATH`` for a checkpoint file. The
default is ``ppo``; when no shipped checkpoint can be loaded, ``ppo`` falls back to ``rule``
with a one-line notice. Each opponent is labelled with what it is (``ppo[classic_2p_long_points]``).

Every decision the rules give is the human's: a play or a draw, play or keep a drawn card,
the color after a wild, the Urrrhhh give-away color, challenge or accept a Wild Draw Four,
catch a player who did not call UNO, whose hand to swap with (seven-zero), stack or draw.
Calling UNO is the human's to forget: type ``uno`` during the turn (alone, or with the play:
``play R7 uno``, ``3 uno``); a turn that leaves one card without it counts as not calling,
and the AI opponents may catch it (``--uno-prompt`` asks instead). Each prompt lists the legal
actions numbered; answer with the number or the action's text (``play R7``, ``R7``, ``draw``,
``blue``...). Commands: ``help``, ``show`` (the table again), ``save [FILE]``, ``quit``.

Only ``game.view(seat)`` and ``game.events(seat)`` of the human's seat are read for display,
so nothing hidden from the human is shown (cards of others appear only where the human saw
them); events are told by ``uno_env.render.Narrator``, the env's renderer's narrator. AI seats
are driven by ``agents.choose_action``. ``--seed`` reproduces a game; ``save`` writes the game
(``Game.to_dict``) with the table's settings as JSON (atomically: a failed write leaves the
old file), and ``--load FILE`` resumes it; a save is checked key by key (``read_save``) and
its opponents are built as data: registered agents and checkpoints only, never code.
``--no-color`` (or ``NO_COLOR``) prints plain text.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from rich.console import Console
from rich.text import Text

from agents import Agent, RuleAgent, choose_action
from agents.guided import GuidedAgent
from agents.human import InputEnded
from agents.registry import AgentSpecError, agent_label, expand_repeats, make_agent
from uno_env.core import EDITIONS, Game, Phase, Rules
from uno_env.core import actions as A
from uno_env.core.cards import KIND_COLOR, WILD, Edition, short_list, short_repr
from uno_env.core.errors import StateError, UnoError
from uno_env.core.saves import KEYS as GAME_KEYS
from uno_env.files import atomic_write, read_at_most
from uno_env.render import Line, Narrator, Part
from uno_env.replay import Replay

__all__ = ["ForgetfulAgent", "PlaySession", "SavedGame", "build_parser", "card_legend", "main", "make_console",
           "make_opponent", "read_save", "split_specs"]

SAVE_FORMAT = "uno_env.play"
SAVE_VERSION = 1
MAX_SAVE_BYTES = 20_000_000  # a save of a very long game is well under 1 MB
MAX_SEED = 2**63 - 1
DEFAULT_SAVE = "uno-save.json"
PROMPT = "your move> "
ROUND_PROMPT = "press Enter for the next round> "

COLOR_STYLES = {
    "red": "bold red", "yellow": "bold yellow", "green": "bold green", "blue": "bold bright_blue",
    "pink": "bold magenta", "purple": "bold purple",
}
WILD_STYLE = "bold black on white"
KIND_STYLES = {"flavour": "bold italic", "strong": "bold"}  # narrator part kinds besides card and color
HELP = """\
Answer a prompt with the number of an option or the action's text:
  play R7 (or just R7), draw, keep, color blue (or just blue), give pink, challenge, accept,
  catch, no-catch, swap +1 (seven-zero), uno, no-uno
Call UNO yourself: type `uno` during the turn that leaves you one card (alone first, or with
  the play: `play R7 uno`, `3 uno`). Forget it and an opponent may catch you (2 cards).
Commands: help, show (the table again), save [FILE] (default uno-save.json), quit"""
PPO_HELP = ("ppo: the shipped checkpoint for the table that its card measures strongest: classic_2p_long_points for "
            "classic at 2 players, classic_4p_points at 4, classic_3to6 at 3, 5 and 6, universal for every "
            "other table")


def card_legend() -> str:
    """How card codes read, from the editions' data (shown by ``uno-env play --help``)."""
    width = max(len(name) for name in EDITIONS) + 2
    colors = "\n".join(
        f"  {name:<{width}}" + ", ".join(f"{letter} {color}" for letter, color in zip(ed.letters, ed.colors, strict=True))
        for name, ed in EDITIONS.items())
    specials = "\n".join(f"  {ed.special_code:<4} {ed.special_name} ({name} only)" for name, ed in EDITIONS.items()
                         if ed.special_code)
    return ("card codes: a color letter first, then the rank (R first is red, R second is Reverse):\n"
            "  0-9  a number        R7 red 7, G0 green 0\n"
            "  S    Skip            GS green Skip\n"
            "  R    Reverse         RR red Reverse, BR blue Reverse\n"
            "  D    Draw Two        YD yellow Draw Two\n"
            "  W    Wild\n"
            "  W4   Wild Draw Four\n"
            f"{specials}\n"
            f"color letters by edition:\n{colors}")


# ---------------------------------------------------------------------- opponents
class ForgetfulAgent(Agent):
    """Wraps an agent: when calling UNO is offered it forgets (``no-uno``) with probability ``p``."""

    name = "forgetful"

    def __init__(self, inner: Agent, p: float, seed: int | None = None) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"forget probability must be in [0, 1], got {p}")
        self.inner = inner
        self.p = p
        self._rng = random.Random(seed)

    def observation_players(self) -> int | None:
        """The wrapped agent's observation size (the wrapper reads nothing itself)."""
        return self.inner.observation_players()

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """The wrapped agent's action, except that an UNO call is sometimes forgotten."""
        legal = info["legal_action_ids"]
        if A.NO_UNO in legal and self.p > 0 and self._rng.random() < self.p:
            return A.NO_UNO
        return int(self.inner.act(observation, info))

    def reset(self) -> None:
        """Reset the wrapped agent."""
        self.inner.reset()

    def seed(self, seed: int | None) -> None:
        """Reseed this wrapper and the wrapped agent."""
        self._rng = random.Random(seed)
        self.inner.seed(seed)

    def __repr__(self) -> str:
        return f"ForgetfulAgent({self.inner!r}, p={self.p})"


def split_specs(text: str) -> list[str]:
    """Opponent specs from a comma list; ``key=value`` pieces belong to the spec before them, ``x*3`` repeats."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if specs and "=" in piece and ":" not in piece.split("=", 1)[0]:
            specs[-1] += "," + piece
            continue
        specs.append(piece)
    return expand_repeats(specs)


def make_opponent(spec: str, checkpoints: Path | None, notices: list[str], edition: str | None = None,
                  num_players: int | None = None, *, allow_import: bool = False) -> tuple[Agent, str]:
    """An agent and its display label for one spec (``agents.registry.make_agent``, with
    ``allow_import`` only for specs typed on the command line); a bare ``ppo`` that cannot be
    built (no shipped checkpoint, a damaged one) falls back to ``rule`` with a notice."""
    try:
        agent = make_agent(spec, allow_import=allow_import, edition=edition, num_players=num_players,
                           checkpoints=checkpoints)
    except AgentSpecError as err:
        if spec.strip() != "ppo":
            raise
        notice = f"Notice: {err}; 'ppo' opponents play the rule agent instead."
        if notice not in notices:
            notices.append(notice)
        return RuleAgent(), "rule"
    return agent, agent_label(spec, agent)


# ---------------------------------------------------------------------- saves
@dataclass(frozen=True)
class SavedGame:
    """A save read by ``read_save``: the game, and the table's settings (None: not in the file)."""

    game: Game
    human_seat: int | None = None
    opponents: list[str] | None = None
    forgetful: float = 0.0
    seed: int = 0
    uno_prompt: bool = False
    replay: Replay | None = None  # the game from its start (``uno_env.replay``; the web app's saves hold one)


def _int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def read_save(path: str | os.PathLike[str]) -> SavedGame:
    """Read a file written by ``save`` (or a bare ``Game.to_dict`` JSON); raises ``StateError``.

    Every key present is checked: ``human_seat`` a seat of the game, ``opponents`` a non-empty
    list of agent specs (text; built later as data, ``make_agent`` without imports), ``forgetful``
    a number in [0, 1], ``seed`` an int in 0..2**63-1, ``uno_prompt`` true or false; unknown
    keys are refused. Nothing is changed when a file is refused.
    """
    where = os.fspath(path)
    try:
        raw = read_at_most(path, MAX_SAVE_BYTES)
    except OSError as err:
        raise StateError(f"cannot read {where}: {err.strerror or err}") from None
    if raw is None:
        raise StateError(f"{where} is larger than {MAX_SAVE_BYTES} bytes: not a saved game")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise StateError(f"{where} is not a saved game: not JSON ({str(err)[:80]})") from None
    return saved_game(data, where)


def saved_game(data: object, where: str = "the save") -> SavedGame:
    """Check a save's parsed JSON as ``read_save`` does (``where`` names it in errors); raises ``StateError``."""
    if not isinstance(data, dict):
        raise StateError(f"{where} is not a saved game: expected a JSON object")
    if data.get("format") != SAVE_FORMAT:  # a bare Game.to_dict()
        return SavedGame(_game(data, where))
    if data.get("version") != SAVE_VERSION:
        raise StateError(f"{where}: save version {short_repr(data.get('version'))}, this uno-env reads version "
                         f"{SAVE_VERSION}")
    known = {"format", "version", "human_seat", "opponents", "forgetful", "seed", "uno_prompt", "game", "replay"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise StateError(f"{where}: unknown key(s) {short_list(list(map(repr, unknown)))}; a save has "
                         f"{', '.join(sorted(known))}")
    if "game" not in data:
        raise StateError(f"{where}: no 'game' (the saved Game.to_dict())")
    game = _game(data["game"], where)
    human = data.get("human_seat")
    if "human_seat" in data and not (_int(human) and 0 <= human < game.num_players):
        raise StateError(f"{where}: human_seat must be a seat 0..{game.num_players - 1}, got {json.dumps(human)[:80]}")
    opponents = data.get("opponents")
    if "opponents" in data and not (isinstance(opponents, list) and opponents
                                    and all(isinstance(s, str) for s in opponents)):
        raise StateError(f"{where}: opponents must be a list of agent specs (text such as \"rule\"), "
                         f"got {json.dumps(opponents)[:80]}")
    forgetful = data.get("forgetful", 0.0)
    # the range first: math.isfinite raises OverflowError on an int past a float's range (10**400)
    if not (isinstance(forgetful, int | float) and not isinstance(forgetful, bool) and 0.0 <= forgetful <= 1.0
            and math.isfinite(forgetful)):
        raise StateError(f"{where}: forgetful must be a number in [0, 1], got {json.dumps(forgetful)[:80]}")
    seed = data.get("seed", 0)
    if not (_int(seed) and 0 <= seed <= MAX_SEED):
        raise StateError(f"{where}: seed must be an int in 0..{MAX_SEED}, got {json.dumps(seed)[:80]}")
    uno_prompt = data.get("uno_prompt", False)
    if not isinstance(uno_prompt, bool):
        raise StateError(f"{where}: uno_prompt must be true or false, got {json.dumps(uno_prompt)[:80]}")
    replay = None
    if "replay" in data:
        try:
            replay = Replay.from_dict(data["replay"])
        except StateError as err:
            raise StateError(f"{where}: replay: {err}") from None
    return SavedGame(game, human, opponents, float(forgetful), seed, uno_prompt, replay)


def _game(data: object, where: str) -> Game:
    if isinstance(data, dict):
        _check_game_keys(data, where)
    try:
        return Game.from_dict(data)
    except (UnoError, ValueError, TypeError, KeyError, IndexError, RecursionError) as err:
        raise StateError(f"{where} is not a saved game: {err}") from None


def _check_game_keys(data: dict[Any, Any], where: str) -> None:
    """A short refusal for a file that is not a ``Game.to_dict()``: the problem on the first line,
    then the keys a saved game has, wrapped, once."""
    missing = [key for key in GAME_KEYS if key not in data]
    unknown = [key for key in data if key not in GAME_KEYS and key != "log"]
    if not missing and not unknown:
        return
    problems = []
    if missing:
        problems.append(f"{len(missing)} of its {len(GAME_KEYS)} keys missing"
                        + (f" ({', '.join(missing)})" if len(missing) <= 3 else ""))
    if unknown:
        shown = ", ".join(repr(key)[:40] for key in unknown[:3])
        problems.append(f"unknown key{'s' if len(unknown) > 1 else ''} {shown}"
                        + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""))
    allowed = textwrap.fill(", ".join(GAME_KEYS) + " (and optional log)", width=76,
                            initial_indent="  ", subsequent_indent="  ")
    raise StateError(f"{where} is not a saved game: {'; '.join(problems)}.\n"
                     f"A saved game (Game.to_dict) has the keys:\n{allowed}")


# ---------------------------------------------------------------------- styling
def styled(parts: Sequence[Part | Sequence[Part]], edition: Edition) -> Text:
    """Rich text from narrator parts: cards in their color, color names in theirs."""
    text = Text()
    for part in parts:
        items = [part] if isinstance(part, str | tuple) else part
        for item in items:
            if isinstance(item, str):
                text.append(item)
                continue
            body, kind = item
            if kind == "card":
                text.append(body, style=card_style(body, edition))
            elif kind == "color":
                text.append(body, style=COLOR_STYLES.get(body, "bold"))
            else:
                text.append(body, style=KIND_STYLES.get(kind, kind))
    return text


def card_style(code: str, edition: Edition) -> str:
    """The rich style of a card code: its color, or black on white for wilds."""
    kind = edition.kind(code)
    if kind >= WILD:
        return WILD_STYLE
    return COLOR_STYLES.get(edition.colors[KIND_COLOR[kind]], "bold")


def make_console(no_color: bool) -> Console:
    """Rich console; plain text when ``no_color`` (or NO_COLOR is set)."""
    plain = no_color or bool(os.environ.get("NO_COLOR"))
    return Console(color_system=None if plain else "auto", no_color=plain, highlight=False, markup=False,
                   emoji=False, soft_wrap=True)


# ---------------------------------------------------------------------- the session
class Quit(Exception):
    """The human asked to leave."""


class PlaySession:
    """Runs one game: AI seats act through their agents, the human's seat through prompts."""

    def __init__(self, game: Game, human: int, agents: dict[int, Agent], labels: dict[int, str], *,
                 console: Console, input_fn: Callable[[str], str] = input, delay: float = 0.0,
                 uno_prompt: bool = False, seed: int = 0, specs: Sequence[str] = (), forgetful: float = 0.0,
                 save_path: str = DEFAULT_SAVE) -> None:
        self.game = game
        self.human = human
        self.agents = agents
        self.labels = labels
        self.console = console
        self.input_fn = input_fn
        self.delay = delay
        self.uno_prompt = uno_prompt
        self.seed = seed
        self.specs = list(specs)
        self.forgetful = forgetful
        self.save_path = save_path
        self.edition = game.edition
        self.narrator = Narrator(game.edition, human)
        self.shown = 0  # events printed so far (a cursor counted like game.log_length)
        self.precalled = False  # the human said "uno" this turn
        self.summarized = -1  # the round whose summary was printed
        self.kept_unplayable = False  # the human's drawn card was just kept without asking (rule 3.4)

    # ---------------------------------------------------------------- output helpers
    def card(self, code: str | None) -> Part:
        """A card code as a styled part."""
        return "a card" if code is None else (code, "card")

    def color(self, name: str | None) -> Part:
        """A color name as a styled part."""
        return "(not named yet)" if name is None else (name, "color")

    def cards(self, codes: Sequence[str]) -> Line:
        parts: Line = []
        for i, code in enumerate(codes):
            if i:
                parts.append(" ")
            parts.append(self.card(code))
        return parts or ["-"]

    def say(self, *parts: Part | Sequence[Part]) -> None:
        self.console.print(styled(parts, self.edition))

    def who(self, seat: int | None) -> str:
        return self.narrator.who(seat)

    def pause(self) -> None:
        if self.delay > 0:
            time.sleep(self.delay)

    # ---------------------------------------------------------------- the table
    def show_table(self) -> None:
        """The table as the human sees it (from ``game.view(human)`` only)."""
        view = self.game.view(self.human)
        rules = view["rules"]
        title = f"{self.edition.title} - round {view['round']} - first to {view['target_score']} points"
        if rules["scoring"] == "lowest":
            title += " (lowest total wins)"
        if rules["elimination"]:
            title += " (elimination)"
        self.say(("== " + title + " ==", "strong"))
        direction = "clockwise" if view["direction"] > 0 else "counter-clockwise"
        line: Line = ["Top card: ", self.card(view["top_card"]), "   color: ", self.color(view["active_color"]),
                      f"   direction: {direction}   draw pile: {view['draw_pile_size']}"]
        if view["penalty"]:
            line.append(f"   penalty: {view['penalty']} cards")
        self.say(line)
        known = {o["seat"]: o["known_cards"] for o in view["opponents"]}
        width = max(8, *(len(label) for label in self.labels.values()))
        for seat in range(view["num_players"]):
            label = "you" if seat == self.human else self.labels.get(seat, "?")
            marks = []
            team = view["teams"][seat]
            if team is not None:
                marks.append(f"team {'AB'[team]}")
            if seat == view["dealer"]:
                marks.append("dealer")
            if view["eliminated"][seat]:
                marks.append("eliminated")
            n = view["hand_sizes"][seat]
            row: Line = [f"  {f'player {seat}':<9} {label:<{width}} {n:>2} card{'s' if n != 1 else ' '}  "
                         f"{view['scores'][seat]:>4} points"]
            if marks:
                row.append("  " + ", ".join(marks))
            if view["uno_called"][seat]:
                row.append(("  UNO!", "bold red"))
            if known.get(seat):
                row += ["  you know: ", *self.cards(sorted(known[seat], key=self.edition.kind))]
            self.say(row)
        self.say("Your hand: ", self.cards(view["hand"]))

    def action_label(self, action: A.Action, view: Mapping[str, Any]) -> Line:
        """An option's text, with context (whose W4, how many cards, whose hand)."""
        text = action.text
        aid = int(action)
        if aid < A.NUM_PLAY_ACTIONS:
            return ["play ", self.card(text.split()[1])]
        if A.COLOR_BASE <= aid < A.COLOR_BASE + 4:
            return ["color ", self.color(self.edition.colors[aid - A.COLOR_BASE])]
        if A.GIVE_BASE <= aid < A.GIVE_BASE + 4:
            slot = aid - A.GIVE_BASE
            n = sum(1 for c in view["hand"] if self.edition.kind(c) < WILD
                    and KIND_COLOR[self.edition.kind(c)] == slot)
            return ["give ", self.color(self.edition.colors[slot]), f" ({n} card{'s' if n != 1 else ''})"]
        if aid > A.SWAP_BASE:
            k = aid - A.SWAP_BASE
            target = (self.human + k) % view["num_players"]
            return [f"swap +{k} (player {target}, {view['hand_sizes'][target]} cards)"]
        extra = {
            A.DRAW: f" ({view['penalty']} cards)" if view["penalty"] else "",
            A.ACCEPT: f" (draw {view['penalty'] or 4})",
            A.CHALLENGE: f" (player {view['pending_player']} played W4 on {view['w4_prev_color']})",
            A.CATCH: f" (player {view['pending_player']} did not call UNO: 2 cards)",
        }.get(aid, "")
        return [text + extra]

    # ---------------------------------------------------------------- events
    def show_events(self) -> None:
        """Print the events the human may see since the last call (``uno_env.render.Narrator``)."""
        told = self.narrator.tell_game(self.game, self.shown)
        self.shown = self.game.log_length
        if self.kept_unplayable:  # the keep is told on the draw's line
            self.kept_unplayable = False
            keep = max((i for i, (kind, _) in enumerate(told) if kind == "keep"), default=None)
            draw = max((i for i, (kind, _) in enumerate(told[:keep or 0]) if kind == "draw"), default=None)
            if keep is not None:
                if draw is not None:
                    told[draw] = ("draw", [*told[draw][1], ": it cannot be played, so you keep it."])
                    del told[keep]
                else:
                    told[keep] = ("keep", ["You keep the drawn card: it cannot be played."])
        for kind, line in told:
            if kind == "game_end":
                continue  # the game-over line says it, with the scores
            self.say(line)
            if kind == "king_pig":
                self.pause()

    def round_summary(self) -> None:
        view = self.game.view(self.human)
        self.summarized = view["round"]
        self.say((f"== Round {view['round']} over: {self.who(view['round_winner'])} went out ==", "strong"))
        lowest = view["rules"]["scoring"] == "lowest" or view["rules"]["elimination"]
        for seat in range(view["num_players"]):
            label = "you" if seat == self.human else self.labels.get(seat, "?")
            n = view["hand_sizes"][seat]
            self.say(f"  player {seat} ({label}): {n} card{'s' if n != 1 else ''} left, "
                     f"{'+' if view['round_points'][seat] else ' '}{view['round_points'][seat]} this round, "
                     f"total {view['scores'][seat]}")
        if lowest:
            self.say(f"  (points left in each hand count against it; the game ends at {view['target_score']})")

    def game_over(self) -> None:
        winners = self.game.winners
        names = " and ".join(self.who(s) for s in winners)
        if self.game.rules.teams and winners:
            names = f"team {'AB'[winners[0] % 2]} ({names})"
        won = self.human in winners
        singular = self.game.rules.teams or (len(winners) == 1 and not won)
        scores = ", ".join(f"player {s} {p}" for s, p in enumerate(self.game.scores))
        self.say((f"GAME OVER: {names} {'wins' if singular else 'win'} the game. Final scores: {scores}",
                  "bold green" if won else "bold"))

    # ---------------------------------------------------------------- loop
    def run(self) -> int:
        """Play until the game is over (0) or the human quits (0)."""
        try:
            self.show_events()
            while True:
                game = self.game
                if game.is_round_over:
                    if self.summarized != game.round_number:
                        self.round_summary()
                    if game.is_game_over:
                        self.game_over()
                        return 0
                    self.between_rounds()
                    game.next_round()
                    self.show_events()
                    continue
                seat = game.current_player
                assert seat is not None
                if seat == self.human:
                    self.human_decision()
                else:
                    self.ai_decision(seat)
                if game.current_player != self.human:
                    self.precalled = False
                self.show_events()
        except Quit:
            self.say("Goodbye.")
            return 0

    def ai_decision(self, seat: int) -> None:
        """The agent at ``seat`` decides (``agents.choose_action``)."""
        self.game.step(choose_action(self.agents[seat], self.game, seat))
        self.pause()

    def between_rounds(self) -> None:
        while True:
            line = self.read(ROUND_PROMPT)
            if not line.strip() or line.strip().lower() in ("1", "next", "n", "y", "yes"):
                return
            if not self.command(line):
                self.say("Press Enter to deal the next round (or: save [FILE], quit, help).")

    def read(self, prompt: str) -> str:
        try:
            return self.input_fn(prompt)
        except EOFError:
            self.console.print()
            raise Quit from None

    def command(self, line: str) -> bool:
        """Handle help/show/save/quit; False when the line is not a command."""
        words = line.strip().split(maxsplit=1)
        head = words[0].lower() if words else ""
        if head in ("help", "?", "h"):
            self.say(HELP)
        elif head in ("show", "table", "hand"):
            self.show_table()
        elif head == "save":
            path = words[1].strip() if len(words) > 1 else self.save_path
            try:
                atomic_write(path, json.dumps(self.save_data()))
            except OSError as err:
                self.say(f"Could not save to {path}: {err.strerror or err}; nothing was written")
            else:
                self.say(f"Saved to {path}. Resume with: uno-env play --load {path}")
        elif head in ("quit", "exit", "q"):
            raise Quit
        else:
            return False
        return True

    def save_data(self) -> dict[str, Any]:
        return {
            "format": SAVE_FORMAT, "version": SAVE_VERSION, "human_seat": self.human,
            "opponents": self.specs, "forgetful": self.forgetful, "seed": self.seed,
            "uno_prompt": self.uno_prompt, "game": self.game.to_dict(),
        }

    def human_decision(self) -> None:
        game = self.game
        view = game.view(self.human)
        legal = game.legal_actions()
        phase = view["phase"]
        if phase == "uno" and not self.uno_prompt:  # the call was made during the turn, or forgotten
            game.step(A.UNO if self.precalled else A.NO_UNO)
            self.precalled = False
            return
        if self.keep_if_unplayable():
            return
        if phase in ("play", "stack"):
            self.show_table()
        elif phase == "play_drawn":
            self.say("You drew ", self.card(view["drawn_card"]), ": play it or keep it?")
        elif phase == "challenge":
            self.say(f"Player {view['pending_player']} played a Wild Draw Four on you "
                     f"(the color before it was {view['w4_prev_color']}). Your hand: ", self.cards(view["hand"]))
        elif phase == "catch":
            self.say(f"Player {view['pending_player']} has one card and did not call UNO!")
        elif phase in ("choose_color", "give_away", "swap"):
            self.say("Your hand: ", self.cards(view["hand"]))
        options: Line = ["Options:"]
        for i, option in enumerate(legal, 1):
            options += [f"  {i}) ", *self.action_label(option, view)]
        self.say(options)
        while True:
            line = self.read(PROMPT)
            try:
                if self.command(line):
                    continue
                action, call = self.parse(line, legal, phase)
            except ValueError as err:
                self.say((f"{err}", "bold red"),
                         f" - type 1-{len(legal)} or an action's text (help for more); nothing was changed.")
                continue
            if call:
                self.precalled = True
            if action is None:
                self.say("UNO! (it counts if this turn leaves you with one card)")
                continue
            game.step(action)
            self.keep_if_unplayable()
            return

    def keep_if_unplayable(self) -> bool:
        """Rule 3.4: keep the human's unplayable drawn card without asking; ``show_events`` says so
        on the draw's line (one line, not a draw, a notice and a keep)."""
        game = self.game
        if not (game.current_player == self.human and game.phase == Phase.PLAY_DRAWN
                and [int(a) for a in game.legal_actions()] == [A.KEEP]):
            return False
        game.step(A.KEEP)
        self.kept_unplayable = True
        return True

    def parse(self, line: str, legal: Sequence[A.Action], phase: str) -> tuple[A.Action | None, bool]:
        """The chosen legal action (None for a bare ``uno``) and whether ``uno`` was said."""
        words = line.strip().lower().split()
        if not words:
            raise ValueError("Empty input")
        call = False
        if phase != "uno" and "uno" in words:
            words = [w for w in words if w != "uno"]
            call = True
            if not words:
                return None, True
        text = " ".join(words)
        if text.isdigit():
            number = int(text)
            if not 1 <= number <= len(legal):
                raise ValueError(f"There is no option {number}")
            return legal[number - 1], call
        candidates = [text]
        if len(words) == 1:
            candidates += [f"play {text}", f"color {text}", f"give {text}", f"swap {text}"]
        action: A.Action | None = None
        for candidate in candidates:
            try:
                action = self.game.parse_action(candidate)
            except UnoError:
                continue
            if action in legal:
                return action, call
        if action is None:
            raise ValueError(f"Cannot read {line.strip()!r}")
        raise ValueError(f"{line.strip()!r} is not one of your options now")


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    """The ``uno-env play`` argument parser (every flag has a help line)."""
    parser = argparse.ArgumentParser(
        prog="uno-env play", description="Play UNO in the terminal against AI opponents.",
        epilog="In the game: answer with an option's number or its text (play R7, draw, uno, ...);\n"
               "commands: help, show, save [FILE], quit.\n\n" + card_legend(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edition", default="classic", choices=list(EDITIONS), help="which deck (default classic)")
    parser.add_argument("--players", type=int, default=4, help="table size, 2-10 (default 4)")
    parser.add_argument("--opponents", default=None, metavar="SPECS",
                        help="agent specs, one for all or one per opponent, comma-separated, clockwise from "
                             "your left: random, rule, simple, ismcts, ppo, ppo:NAME, ppo:PATH, guided ("
                             f"a search of {GuidedAgent.DEFAULT_PLAYOUTS} playouts a move guided by a "
                             "trained policy and critic, the strongest per round at classic 2 players, about "
                             "0.24-0.42 s a move on one core (docs/agents.md); guided:time_budget=0.5 "
                             "stops each search after about half a second), "
                             "rule:challenge=false, package.module:Class... (default ppo; " + PPO_HELP
                             + "; rule when none can be loaded)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="reproduce a game (default: random, printed)")
    parser.add_argument("--load", metavar="FILE", help="resume a game saved with `save`")
    parser.add_argument("--target", type=int, default=500, help="target score (default 500)")
    parser.add_argument("--uno-call", choices=["explicit", "auto"], default="explicit",
                        help="explicit: players call UNO and can be caught (default); auto: calls are automatic")
    parser.add_argument("--no-bluff", action="store_true", help="forbid bluffing a Wild Draw Four")
    parser.add_argument("--scoring", choices=["standard", "lowest"], default="standard",
                        help="standard: the round's winner scores the others' cards (default); lowest: "
                             "each scores their own hand, lowest total wins")
    parser.add_argument("--teams", action="store_true", help="partners by alternating seats")
    parser.add_argument("--elimination", action="store_true", help="Challenge UNO (elimination)")
    parser.add_argument("--stacking", action="store_true", help="house rule: stack Draw Twos / Draw Fours")
    parser.add_argument("--seven-zero", action="store_true", help="house rule: 7 swaps hands, 0 rotates them")
    parser.add_argument("--draw-until-playable", action="store_true",
                        help="house rule: draw until a playable card comes, then play it")
    parser.add_argument("--forgetful", type=float, default=0.0, metavar="P",
                        help="AI opponents forget to call UNO with probability P (default 0)")
    parser.add_argument("--uno-prompt", action="store_true",
                        help="ask whether to call UNO instead of leaving it to you to say it")
    parser.add_argument("--delay", type=float, default=0.3, metavar="SECONDS",
                        help="pause after each AI move and each card King Pig deals (default 0.3; 0 for none)")
    parser.add_argument("--no-color", action="store_true", help="plain text, no colors (also: NO_COLOR=1)")
    parser.add_argument("--checkpoints", type=Path, default=None, metavar="DIR",
                        help="where ppo and ppo:NAME look for checkpoints (default: those shipped with the package)")
    parser.add_argument("--save-file", default=DEFAULT_SAVE, metavar="FILE",
                        help="default file for `save` (default uno-save.json)")
    return parser


def setup(args: argparse.Namespace, console: Console) -> PlaySession:
    """Build the game and the opponents from the arguments (or a save); raises ValueError."""
    saved: SavedGame | None = None
    if args.load:
        saved = read_save(args.load)
        game = saved.game
        human = saved.human_seat if saved.human_seat is not None else args.seat
        seed = saved.seed * 1_000_003 + game.log_length
        forgetful = args.forgetful or saved.forgetful
        uno_prompt = args.uno_prompt or saved.uno_prompt
    else:
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
        try:
            rules = Rules(edition=args.edition, num_players=args.players, target_score=args.target,
                          uno_call=args.uno_call, allow_bluff=not args.no_bluff, scoring=args.scoring,
                          teams=args.teams, elimination=args.elimination, stacking=args.stacking,
                          seven_zero=args.seven_zero, draw_until_playable=args.draw_until_playable)
            game = Game(rules, seed=seed)
        except UnoError as err:
            raise ValueError(str(err)) from None
        human = args.seat
        forgetful = args.forgetful
        uno_prompt = args.uno_prompt
        console.print(f"Seed {seed} (replay this game with --seed {seed})")
    n = game.num_players
    if not 0 <= human < n:
        raise ValueError(f"--seat must be 0..{n - 1}, got {human}")
    from_file = args.opponents is None and saved is not None and saved.opponents is not None
    if from_file:
        assert saved is not None and saved.opponents is not None
        specs = list(saved.opponents)
    else:
        specs = split_specs(args.opponents or "ppo")
    if len(specs) == 1:
        specs *= n - 1
    if len(specs) != n - 1:
        raise ValueError(f"--opponents needs 1 or {n - 1} specs for {n} players, got {len(specs)}")
    if not 0.0 <= forgetful <= 1.0:
        raise ValueError(f"--forgetful must be in [0, 1], got {forgetful}")
    notices: list[str] = []
    agents: dict[int, Agent] = {}
    labels: dict[int, str] = {}
    seeder = random.Random(seed)
    for offset, spec in enumerate(specs, 1):
        seat = (human + offset) % n
        # Specs typed on the command line may import an agent class; specs from a save are data.
        agent, label = make_opponent(spec, args.checkpoints, notices, game.rules.edition, n,
                                     allow_import=not from_file)
        if forgetful > 0:
            agent = ForgetfulAgent(agent, forgetful)
        agent.seed(seeder.getrandbits(63))
        agent.reset()
        agents[seat] = agent
        labels[seat] = label
    for notice in notices:
        console.print(notice)
    names = ", ".join(f"player {s}: {labels[s]}" for s in sorted(agents))
    console.print(f"{game.edition.title}, {n} players; you are player {human}; {names}. Type help for help.")
    return PlaySession(game, human, agents, labels, console=console, delay=args.delay, uno_prompt=uno_prompt,
                       seed=seed, specs=specs, forgetful=forgetful, save_path=args.save_file)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``uno-env play``; returns the exit status (2 for bad options or a bad save, 1 when a
    human opponent's input ends)."""
    args = build_parser().parse_args(argv)
    console = make_console(args.no_color)
    try:
        try:
            session = setup(args, console)
        except ValueError as err:  # AgentSpecError, StateError, bad options: all say what is allowed
            print(f"uno-env play: error: {err}", file=sys.stderr)
            return 2
        return session.run()
    except InputEnded as ended:  # a human opponent (from a save or --opponents) whose input closed
        print(f"uno-env play: {ended}; the game stops here (it was not saved)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nInterrupted: goodbye (the game was not saved).", flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
