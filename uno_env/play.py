"""``uno-env play``: one person against AI opponents in the terminal.

::

    uno-env play --edition monster_high --players 4 --opponents ppo,rule,rule

The human sits at ``--seat`` (default 0); the other seats, clockwise from the human's left,
are played by the agents named in ``--opponents`` (one spec for all, or one per opponent,
comma-separated): names from the agents registry (``random``, ``rule``, ``simple``, ...,
with options as ``rule:challenge=false``), ``ppo`` for the shipped checkpoint that fits the
table best (the most specialised one trained on its edition and table size, between equals
the one trained on round points, else the universal one) or ``ppo:PATH`` for a given one.
The default is ``ppo``; when ``checkpoints/`` (``--checkpoints``) holds no ``universal*``
checkpoint, or the PPO agent cannot be loaded, ``ppo`` falls back to ``rule`` with a one-line
notice.

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
them). ``--seed`` reproduces a game; ``save`` writes the game (``Game.to_dict``) with the
table's settings as JSON, and ``--load FILE`` resumes it. ``--no-color`` (or ``NO_COLOR``)
prints plain text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from uno_env.core import EDITIONS, Game, Rules
from uno_env.core import actions as A
from uno_env.core.cards import KIND_COLOR, WILD
from uno_env.core.errors import UnoError

SAVE_FORMAT = "uno_env.play"
SAVE_VERSION = 1
DEFAULT_SAVE = "uno-save.json"
PROMPT = "your move> "
ROUND_PROMPT = "press Enter for the next round> "

COLOR_STYLES = {
    "red": "bold red", "yellow": "bold yellow", "green": "bold green", "blue": "bold bright_blue",
    "pink": "bold magenta", "purple": "bold purple",
}
WILD_STYLE = "bold black on white"
FLAVOUR = {
    "WU": '"Urrrhhh!"',
    "WG": '"By the power of Greyskull... I have the power!"',
    "WK": "King Pig deals!",
}
DRAW_REASON_TEXT = {
    "turn": "", "draw_two": " (Draw Two)", "draw_four": " (Wild Draw Four)",
    "challenge_guilty": " (caught bluffing)", "challenge_innocent": " (lost the challenge)",
    "uno_penalty": " (UNO penalty)", "greyskull": " (by the power of Greyskull)",
    "start_draw_two": " (first card Draw Two)",
}
HELP = """\
Answer a prompt with the number of an option or the action's text:
  play R7 (or just R7), draw, keep, color blue (or just blue), give pink, challenge, accept,
  catch, no-catch, swap +1 (seven-zero), uno, no-uno
Call UNO yourself: type `uno` during the turn that leaves you one card (alone first, or with
  the play: `play R7 uno`, `3 uno`). Forget it and an opponent may catch you (2 cards).
Commands: help, show (the table again), save [FILE] (default uno-save.json), quit"""

Part = str | tuple[str, str]  # plain text, or (text, style)


# ---------------------------------------------------------------------- opponents
class ForgetfulAgent:
    """Wraps an agent: when calling UNO is offered it forgets (``no-uno``) with probability ``p``."""

    name = "forgetful"

    def __init__(self, inner: Any, p: float, seed: int | None = None) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"forget probability must be in [0, 1], got {p}")
        self.inner = inner
        self.p = p
        self._rng = random.Random(seed)

    @property
    def needs_observation(self) -> bool:
        """Whether the wrapped agent reads the observation vector."""
        return bool(getattr(self.inner, "needs_observation", False))

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
        name, star, count = piece.rpartition("*")
        if star and count.isdigit() and name:
            specs += [name] * int(count)
        else:
            specs.append(piece)
    return specs


def make_opponent(spec: str, checkpoints: Path | None, notices: list[str], edition: str | None = None,
                  num_players: int | None = None, *, allow_import: bool = False) -> tuple[Any, str]:
    """An agent and its display label for one spec (``agents.registry.make_agent``, with
    ``allow_import`` only for specs typed on the command line); a bare ``ppo`` that cannot be
    built (no shipped checkpoint, a damaged one) falls back to ``rule`` with a notice."""
    from agents import RuleAgent
    from agents.registry import AgentSpecError, agent_label, make_agent

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


# ---------------------------------------------------------------------- the session
class Quit(Exception):
    """The human asked to leave."""


class PlaySession:
    """Runs one game: AI seats act through their agents, the human's seat through prompts."""

    def __init__(self, game: Game, human: int, agents: dict[int, Any], labels: dict[int, str], *,
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
        self.shown = 0  # events printed so far (index into game.events)
        self.precalled = False  # the human said "uno" this turn
        self.last_color = ""  # the color last named (King Pig's deal stops on it)
        self.last_played = ""  # the card last played (what an "accept" accepts)
        self.summarized = -1  # the round whose summary was printed

    # ---------------------------------------------------------------- output helpers
    def card(self, code: str | None) -> Part:
        """A card code styled in its color."""
        if code is None:
            return "a card"
        kind = self.edition.kind(code)
        if kind >= WILD:
            return (code, WILD_STYLE)
        return (code, COLOR_STYLES.get(self.edition.colors[KIND_COLOR[kind]], "bold"))

    def color(self, name: str | None) -> Part:
        """A color name styled in that color."""
        if name is None:
            return "(not named yet)"
        return (name, COLOR_STYLES.get(name, "bold"))

    def cards(self, codes: Sequence[str]) -> list[Part]:
        parts: list[Part] = []
        for i, code in enumerate(codes):
            if i:
                parts.append(" ")
            parts.append(self.card(code))
        return parts or ["-"]

    def say(self, *parts: Part | list[Part]) -> None:
        text = Text()
        for part in parts:
            items = part if isinstance(part, list) else [part]
            for item in items:
                if isinstance(item, tuple):
                    text.append(item[0], style=item[1])
                else:
                    text.append(item)
        self.console.print(text)

    def who(self, seat: int | None) -> str:
        if seat is None:
            return "nobody"
        return "you" if seat == self.human else f"player {seat}"

    def verb(self, seat: int | None, base: str, third: str | None = None) -> str:
        return base if seat == self.human else (third or base + "s")

    def subject(self, seat: int | None, base: str, third: str | None = None) -> str:
        who = self.who(seat)
        return f"{who[0].upper()}{who[1:]} {self.verb(seat, base, third)}"

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
        self.say(("== " + title + " ==", "bold"))
        direction = "clockwise" if view["direction"] > 0 else "counter-clockwise"
        line: list[Part] = ["Top card: ", self.card(view["top_card"]), "   color: ", self.color(view["active_color"]),
                            f"   direction: {direction}   draw pile: {view['draw_pile_size']}"]
        if view["penalty"]:
            line.append(f"   penalty: {view['penalty']} cards")
        self.say(line)
        known = {o["seat"]: o["known_cards"] for o in view["opponents"]}
        for seat in range(view["num_players"]):
            name = f"player {seat}"
            label = "you" if seat == self.human else self.labels.get(seat, "?")
            marks = []
            if view["teams"][seat] is not None:
                marks.append(f"team {'AB'[view['teams'][seat]]}")
            if seat == view["dealer"]:
                marks.append("dealer")
            if view["eliminated"][seat]:
                marks.append("eliminated")
            n = view["hand_sizes"][seat]
            row: list[Part] = [f"  {name:<9} {label:<8} {n:>2} card{'s' if n != 1 else ' '}  "
                               f"{view['scores'][seat]:>4} points"]
            if marks:
                row.append("  " + ", ".join(marks))
            if view["uno_called"][seat]:
                row.append(("  UNO!", "bold red"))
            if known.get(seat):
                row += ["  you know: ", *self.cards(sorted(known[seat], key=self.edition.kind))]
            self.say(row)
        self.say("Your hand: ", self.cards(view["hand"]))

    def action_label(self, action: A.Action, view: Mapping[str, Any]) -> list[Part]:
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
        """Print the events the human may see since the last call, one line each."""
        events = self.game.events(self.human)
        new = events[self.shown:]
        self.shown = len(events)
        i = 0
        while i < len(new):
            e = new[i]
            if e["type"] == "draw" and not (e["reason"] == "greyskull" and e["seat"] != self.human):
                j = i + 1
                while (j < len(new) and new[j]["type"] == "draw" and new[j]["seat"] == e["seat"]
                       and new[j]["reason"] == e["reason"]):
                    j += 1
                self.say_draws(new[i:j])
                i = j
                continue
            if e["type"] == "show":
                j = i + 1
                while j < len(new) and new[j]["type"] == "show" and new[j]["seat"] == e["seat"]:
                    j += 1
                self.say(f"Player {e['seat']} shows you their hand: ", self.cards([x["card"] for x in new[i:j]]))
                i = j
                continue
            self.say_event(e)
            if e["type"] == "king_pig":
                self.pause()
            i += 1

    def say_draws(self, draws: list[dict[str, Any]]) -> None:
        seat = draws[0]["seat"]
        reason = DRAW_REASON_TEXT.get(draws[0]["reason"], "")
        if seat == self.human:
            self.say("You draw ", self.cards([d["card"] for d in draws]), reason)
        else:
            n = len(draws)
            self.say(f"Player {seat} draws {'a card' if n == 1 else f'{n} cards'}{reason}")

    def say_event(self, e: dict[str, Any]) -> None:
        kind, seat, card, other = e["type"], e["seat"], e["card"], e["other"]
        if kind == "play":
            self.last_played = card or ""
            parts: list[Part] = [self.subject(seat, "play"), " ", self.card(card)]
            if card in FLAVOUR:
                parts += [" - ", (FLAVOUR[card], "bold italic")]
            self.say(parts)
        elif kind == "give":
            giver = self.subject(seat, "give")
            if card is None:
                self.say(('  "Urrrhhh!" ', "italic"), f"{giver} a card to {self.who(other)}")
            else:
                self.say(('  "Urrrhhh!" ', "italic"), f"{giver} ", self.card(card), f" to {self.who(other)}")
        elif kind == "king_pig":
            parts = ["  King Pig deals ", self.card(card), f" to {self.who(seat)}"]
            kind_ = self.edition.kind(card)
            if kind_ < WILD and self.edition.colors[KIND_COLOR[kind_]] == self.last_color:
                parts.append(f" - {self.last_color}: the deal stops")
            self.say(parts)
        elif kind == "greyskull":
            self.say(f"  By the power of Greyskull, {self.who(seat)} {self.verb(seat, 'draw')} 3 cards")
        elif kind == "color":
            self.last_color = e["color"]
            self.say(self.subject(seat, "name"), " ", self.color(e["color"]))
        elif kind == "reverse":
            self.say("Play reverses: now " + ("clockwise" if (other or 0) > 0 else "counter-clockwise"))
        elif kind == "dealer":
            self.say((f"-- Round {other}: {self.who(seat)} {'deal' if seat == self.human else 'deals'} "
                      f"seven cards each --", "bold"))
        elif kind == "start":
            self.say("The first card is ", self.card(card))
        elif kind == "return_w4":
            self.say("A Wild Draw Four turned first goes back into the deck")
        elif kind == "round_end":
            self.say((f"{self.subject(seat, 'go', 'goes')} out!", "bold"))
        elif kind == "game_end":
            pass  # the game-over line says it
        else:
            text = {
                "pass": f"{self.subject(seat, 'have', 'has')} to draw but no card is left",
                "keep": f"{self.subject(seat, 'keep')} the drawn card",
                "uno": f"{self.subject(seat, 'call')} UNO!",
                "no_uno": f"{self.subject(seat, 'do', 'does')} not call UNO!",
                "catch": f"{self.subject(seat, 'catch', 'catches')} {self.who(other)} not calling UNO: 2 cards",
                "no_catch": f"{self.subject(seat, 'let')} it pass",
                "challenge": f"{self.subject(seat, 'challenge')} the Wild Draw Four of {self.who(other)}",
                "guilty": f"{self.subject(seat, 'was', 'was')} bluffing!",
                "innocent": f"{self.subject(seat, 'was', 'was')} not bluffing",
                "accept": f"{self.subject(seat, 'accept')} "
                          + ("the Wild Draw Four" if self.last_played == "W4" else "the draws"),
                "skip": f"{self.subject(seat, 'are', 'is')} skipped",
                "swap": f"{self.subject(seat, 'swap')} hands with {self.who(other)}",
                "rotate": "Every hand passes one seat " + ("clockwise" if (other or 0) > 0 else "counter-clockwise"),
                "eliminated": f"{self.subject(seat, 'are', 'is')} eliminated with {other} points",
                "reshuffle": "The discard pile is reshuffled into the draw pile",
            }.get(kind)
            if text:
                self.say(text)

    def round_summary(self) -> None:
        view = self.game.view(self.human)
        self.summarized = view["round"]
        self.say((f"== Round {view['round']} over: {self.who(view['round_winner'])} went out ==", "bold"))
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
        agent = self.agents[seat]
        info = self.game.view(seat)
        obs: dict[str, Any] = {"action_mask": _mask(info["legal_action_ids"])}
        if getattr(agent, "needs_observation", False):
            from uno_env.observation import observe

            max_players = getattr(agent, "max_players", None) or getattr(
                getattr(agent, "inner", None), "max_players", None) or 10
            obs["observation"] = observe(self.game, seat, max_players=int(max_players))
        action = agent.act(obs, info)
        self.game.step(int(action))
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
                Path(path).write_text(json.dumps(self.save_data()))
            except OSError as err:
                self.say(f"Could not save to {path}: {err}")
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
        options: list[Part] = ["Options:"]
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
            return

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


def _mask(legal: Sequence[int]) -> Any:
    import numpy as np

    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
    mask[list(legal)] = 1
    return mask


# ---------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="uno-env play", description="Play UNO in the terminal against AI opponents.",
        epilog="In the game: answer with an option's number or its text (play R7, draw, uno, ...); "
               "commands help, show, save [FILE], quit.")
    parser.add_argument("--edition", default="classic", choices=list(EDITIONS))
    parser.add_argument("--players", type=int, default=4, help="table size, 2-10 (default 4)")
    parser.add_argument("--opponents", default=None,
                        help="agent specs, one for all or one per opponent, comma-separated, clockwise from "
                             "your left: random, rule, simple, ppo, ppo:PATH, rule:challenge=false, ... "
                             "(default ppo: the shipped universal checkpoint, else rule)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="reproduce a game (default: random, printed)")
    parser.add_argument("--load", metavar="FILE", help="resume a game saved with `save`")
    parser.add_argument("--target", type=int, default=500, help="target score (default 500)")
    parser.add_argument("--uno-call", choices=["explicit", "auto"], default="explicit")
    parser.add_argument("--no-bluff", action="store_true", help="forbid bluffing a Wild Draw Four")
    parser.add_argument("--scoring", choices=["standard", "lowest"], default="standard")
    parser.add_argument("--teams", action="store_true", help="partners by alternating seats")
    parser.add_argument("--elimination", action="store_true", help="Challenge UNO (elimination)")
    parser.add_argument("--stacking", action="store_true", help="house rule: stack Draw Twos / Draw Fours")
    parser.add_argument("--seven-zero", action="store_true", help="house rule: 7 swaps hands, 0 rotates them")
    parser.add_argument("--draw-until-playable", action="store_true", help="house rule")
    parser.add_argument("--forgetful", type=float, default=0.0, metavar="P",
                        help="AI opponents forget to call UNO with probability P (default 0)")
    parser.add_argument("--uno-prompt", action="store_true",
                        help="ask whether to call UNO instead of leaving it to you to say it")
    parser.add_argument("--delay", type=float, default=0.3, metavar="SECONDS",
                        help="pause after each AI move and each card King Pig deals (default 0.3; 0 for none)")
    parser.add_argument("--no-color", action="store_true", help="plain text, no colors")
    parser.add_argument("--checkpoints", type=Path, default=None,
                        help="where the shipped checkpoints live (default: the repository's checkpoints/)")
    parser.add_argument("--save-file", default=DEFAULT_SAVE, help="default file for `save` (uno-save.json)")
    return parser


def make_console(no_color: bool) -> Console:
    """Rich console; plain text when ``no_color`` (or NO_COLOR is set)."""
    plain = no_color or bool(os.environ.get("NO_COLOR"))
    return Console(color_system=None if plain else "auto", no_color=plain, highlight=False, markup=False,
                   emoji=False, soft_wrap=True)


def setup(args: argparse.Namespace, console: Console) -> PlaySession:
    """Build the game and the opponents from the arguments (or a save); raises ValueError."""
    saved: dict[str, Any] = {}
    if args.load:
        try:
            data = json.loads(Path(args.load).read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"cannot read {args.load}: {err}") from None
        if isinstance(data, dict) and data.get("format") == SAVE_FORMAT:
            saved = data
            game_data = data.get("game")
        else:
            game_data = data  # a bare Game.to_dict()
        try:
            game = Game.from_dict(game_data)
        except UnoError as err:
            raise ValueError(f"{args.load} is not a saved game: {err}") from None
        human = int(saved.get("human_seat", args.seat))
        seed = int(saved.get("seed", 0)) * 1_000_003 + len(game.log)
        saved_specs = saved.get("opponents") or ["ppo"]
        if not isinstance(saved_specs, list) or not all(isinstance(x, str) for x in saved_specs):
            raise ValueError(f"{args.load}: 'opponents' must be a list of agent specs (text)")
        specs_text = args.opponents or ",".join(saved_specs)
        from_file = args.opponents is None
        forgetful = args.forgetful or float(saved.get("forgetful", 0.0))
        uno_prompt = args.uno_prompt or bool(saved.get("uno_prompt", False))
    else:
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
        try:
            rules = Rules(edition=args.edition, num_players=args.players, target_score=args.target,
                          uno_call=args.uno_call, allow_bluff=not args.no_bluff, scoring=args.scoring,
                          teams=args.teams, elimination=args.elimination, stacking=args.stacking,
                          seven_zero=args.seven_zero, draw_until_playable=args.draw_until_playable)
        except UnoError as err:
            raise ValueError(str(err)) from None
        game = Game(rules, seed=seed)
        human = args.seat
        specs_text = args.opponents or "ppo"
        from_file = False
        forgetful = args.forgetful
        uno_prompt = args.uno_prompt
        console.print(f"Seed {seed} (replay this game with --seed {seed})")
    n = game.num_players
    if not 0 <= human < n:
        raise ValueError(f"--seat must be 0..{n - 1}, got {human}")
    specs = saved_specs if from_file else split_specs(specs_text)
    if len(specs) == 1:
        specs *= n - 1
    if len(specs) != n - 1:
        raise ValueError(f"--opponents needs 1 or {n - 1} specs for {n} players, got {len(specs)}")
    if not 0.0 <= forgetful <= 1.0:
        raise ValueError(f"--forgetful must be in [0, 1], got {forgetful}")
    notices: list[str] = []
    agents: dict[int, Any] = {}
    labels: dict[int, str] = {}
    seeder = random.Random(seed)
    for offset, spec in enumerate(specs, 1):
        seat = (human + offset) % n
        agent, label = make_opponent(spec, args.checkpoints, notices, game.rules.edition, n,
                                     allow_import=not from_file)
        if forgetful > 0:
            agent = ForgetfulAgent(agent, forgetful)
        agent_seed = seeder.getrandbits(63)
        if hasattr(agent, "seed"):
            agent.seed(agent_seed)
        if hasattr(agent, "reset"):
            agent.reset()
        agents[seat] = agent
        labels[seat] = label
    for notice in notices:
        console.print(notice)
    names = ", ".join(f"player {s}: {labels[s]}" for s in sorted(agents))
    console.print(f"{game.edition.title}, {n} players; you are player {human}; {names}. Type help for help.")
    return PlaySession(game, human, agents, labels, console=console, delay=args.delay, uno_prompt=uno_prompt,
                       seed=seed, specs=specs, forgetful=forgetful, save_path=args.save_file)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``uno-env play``."""
    args = build_parser().parse_args(argv)
    console = make_console(args.no_color)
    try:
        try:
            session = setup(args, console)
        except ValueError as err:
            print(f"uno-env play: error: {err}", file=sys.stderr)
            raise SystemExit(2) from None
        code = session.run()
    except KeyboardInterrupt:
        print("\nInterrupted: goodbye (the game was not saved).", flush=True)
        raise SystemExit(130) from None
    raise SystemExit(code)


if __name__ == "__main__":
    main()
