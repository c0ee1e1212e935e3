"""AI seats: which opponents the web app offers, how they are built, and how one decides.

A browser names an opponent by one of ``OPPONENTS`` or ``ppo:NAME`` for a checkpoint shipped
in ``checkpoints/`` (``shipped_checkpoints()``); nothing else is accepted (no module paths,
no file paths, no options), so a page can never make the server import code or read a file.
``ppo`` alone plays the shipped checkpoint that fits the table best (``default_checkpoint``).

``decide`` asks an agent for one action with exactly what the tournament harness gives it:
``info = game.view(seat)`` and an observation dict holding the action mask (and the
observation vector when the agent needs one). For a PPO agent it also returns the policy's
most probable legal actions, which replays show.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents import Agent, make_agent
from agents.ppo_agent import SHIPPED_DIR, CheckpointError, PPOAgent
from uno_env.core import Game
from uno_env.core import actions as A

OPPONENTS = ("ppo", "rule", "ismcts", "simple", "random")
TOP_ACTIONS = 3  # probabilities kept per PPO decision


class SpecError(ValueError):
    """An opponent the web app does not offer."""


def shipped_checkpoints() -> list[str]:
    """Names of the checkpoints shipped in ``checkpoints/`` (``ppo:NAME`` plays one)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.safetensors"))


def check_spec(spec: Any) -> str:
    """The spec if the web app offers it (``OPPONENTS`` or ``ppo:NAME`` of a shipped checkpoint); else ``SpecError``."""
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text in OPPONENTS:
            return text
        head, _, name = text.partition(":")
        if head == "ppo" and name in shipped_checkpoints():
            return text
    allowed = ", ".join([*OPPONENTS, *(f"ppo:{n}" for n in shipped_checkpoints())])
    shown = spec if isinstance(spec, str) and len(spec) <= 80 else type(spec).__name__
    raise SpecError(f"unknown opponent {shown!r}; opponents are {allowed}")


def default_checkpoint(edition: str, num_players: int) -> Path:
    """The shipped checkpoint for a table: the most specialised one trained on its edition and size
    (between equals, one trained on round points), else ``universal``."""
    from uno_env.play import default_checkpoint as choose

    path = choose(SHIPPED_DIR, edition, num_players)
    if path is None:
        raise SpecError(f"no shipped PPO checkpoint in {SHIPPED_DIR}")
    return path


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
    if spec.startswith("ppo"):
        name = spec.partition(":")[2]
        path = SHIPPED_DIR / f"{name}.safetensors" if name else default_checkpoint(edition, num_players)
        try:
            agent: Agent = PPOAgent.load(path)
        except (CheckpointError, OSError) as err:
            raise SpecError(f"cannot load the shipped checkpoint {path.name}: {err}") from None
        label = f"ppo ({path.stem})"
    else:
        agent = make_agent(spec)
        label = spec
    agent.seed(seed)
    agent.reset()
    return Seat(agent=agent, label=label, forget=forget, rng=random.Random(seed ^ 0x5EED))


def observation_for(agent: Agent, game: Game, seat: int, legal: list[int]) -> dict[str, Any]:
    """The observation dict an agent gets: the action mask, and the vector when it needs one."""
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
    mask[legal] = 1
    obs: dict[str, Any] = {"action_mask": mask}
    if agent.needs_observation:
        from uno_env.observation import observe

        max_players = getattr(agent, "observation_max_players", None) or getattr(agent, "max_players", None)
        obs["observation"] = observe(game, seat) if max_players is None else observe(game, seat, int(max_players))
    return obs


def decide(ai: Seat, game: Game, seat: int) -> tuple[int, dict[str, Any] | None]:
    """One decision of an AI seat: the action id and, for PPO, ``{"top": [[id, probability], ...]}``."""
    info = game.view(seat)
    legal = list(info["legal_action_ids"])
    if ai.forget > 0 and A.NO_UNO in legal and ai.rng.random() < ai.forget:
        return A.NO_UNO, {"agent": f"{ai.label}, forgetting UNO"}
    obs = observation_for(ai.agent, game, seat, legal)
    action = int(ai.agent.act(obs, info))
    note = None
    if isinstance(ai.agent, PPOAgent) and len(legal) > 1:
        logits = ai.agent.logits(obs["observation"])[legal].astype(np.float64)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        order = np.argsort(-probs, kind="stable")[:TOP_ACTIONS]
        note = {"top": [[legal[i], round(float(probs[i]), 4)] for i in order]}
    return action, note
