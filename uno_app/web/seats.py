"""AI seats: which opponents the web app offers, how they are built, and how one decides.

A browser names an opponent by one of ``OPPONENTS`` or ``ppo:NAME`` for a checkpoint shipped
with the package (``agents.registry.shipped_checkpoints()``); nothing else is accepted (no
module paths, no file paths, no options), so a page can never make the server import code or
read a file. The agent is then built by ``agents.registry.make_agent`` (with its default
``allow_import=False``); ``ppo`` alone plays the shipped checkpoint that fits the table.

``decide`` asks an agent for one action the one way agents are driven
(``agents.choose_action``: ``info = game.view(seat)`` and the observation dict). For a PPO
agent it also returns the policy's most probable legal actions (``uno_app.replays.top_actions``),
which replays show.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, choose_action
from agents.guided import GuidedAgent
from agents.registry import AgentSpecError, agent_label, make_agent, shipped_checkpoints
from uno_env.core import Game
from uno_env.core import actions as A

from ..replays import top_actions

OPPONENTS = ("ppo", "rule", "ismcts", "simple", "random", "guided")
# What the page says beside an opponent: what it is, how strong and how long it thinks (its default
# budget; the figures are the measurements kept in docs/experiments and shown in docs/agents.md, and
# tests/test_guided.py checks them against those files).
OPPONENT_NOTES = {
    "guided": f"searches {GuidedAgent.DEFAULT_PLAYOUTS} playouts a move with a trained policy and critic, "
              "about 0.24-0.42 s a move on one core of the machine measured in docs/agents.md; "
              "the strongest per round at classic 2 players (63% of rounds against rule)",
    "ismcts": "searches 200 playouts a move with a rule-agent prior",
    "ppo": "a trained policy, answers at once; the strongest over whole games at classic 2 players "
           "(72% of games to 500 against rule)",
}


class SpecError(ValueError):
    """An opponent the web app does not offer."""


def offered() -> list[str]:
    """Every opponent spec the page may name."""
    return [*OPPONENTS, *(f"ppo:{n}" for n in shipped_checkpoints())]


def check_spec(spec: Any) -> str:
    """The spec if the web app offers it (``offered()``); else ``SpecError`` naming what is."""
    if isinstance(spec, str) and spec.strip().lower() in offered():
        return spec.strip().lower()
    shown = spec if isinstance(spec, str) and len(spec) <= 80 else type(spec).__name__
    raise SpecError(f"unknown opponent {shown!r}; opponents are {', '.join(offered())}")


@dataclass
class Seat:
    """One AI seat: its agent, display label and how often it forgets to call UNO."""

    agent: Agent
    label: str
    forget: float = 0.0
    rng: random.Random = field(default_factory=random.Random)


def build_seat(spec: str, edition: str, num_players: int, seed: int, forget: float = 0.0) -> Seat:
    """An AI seat for an offered spec (``check_spec``), seeded and reset; raises ``SpecError``."""
    spec = check_spec(spec)
    try:
        agent = make_agent(spec, edition=edition, num_players=num_players)
    except AgentSpecError as err:
        raise SpecError(str(err)) from None
    agent.seed(seed)
    agent.reset()
    return Seat(agent=agent, label=agent_label(spec, agent), forget=forget, rng=random.Random(seed ^ 0x5EED))


def decide(ai: Seat, game: Game, seat: int) -> tuple[int, dict[str, Any] | None]:
    """One decision of an AI seat: the action id and, for PPO, ``{"top": [[id, probability], ...]}``."""
    info = game.view(seat)
    legal = list(info["legal_action_ids"])
    if ai.forget > 0 and A.NO_UNO in legal and ai.rng.random() < ai.forget:
        return A.NO_UNO, {"agent": f"{ai.label}, forgetting UNO"}
    action = choose_action(ai.agent, game, seat)
    top = top_actions(ai.agent, game, seat)
    return action, {"top": top} if top else None
