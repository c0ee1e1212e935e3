"""Replays of agent games, each PPO decision annotated with the policy's most probable actions.

``uno-env evaluate --replays DIR --replay-games 0,5,10-12`` plays the listed games of the
evaluation again (same seeds, so the same games) with a recorder and writes one
``uno_env.replay`` file per game, which the web app's Replay view opens (``uno-env serve``).
Games are numbered as the evaluation plays them: game ``i`` is deal ``i // players`` in seat
rotation ``i % players``. The web app's own games are annotated the same way (``top_actions``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from agents import Agent
from agents.base import agent_observation
from agents.ppo_agent import PPOAgent
from agents.registry import describe_agent
from agents.tournament import DEFAULT_MAX_DECISIONS, GameRecord, play_game
from uno_env.core import Game, Rules
from uno_env.core.actions import Action
from uno_env.replay import Recorder, Replay

TOP_ACTIONS = 3  # probabilities kept per PPO decision
MAX_REPLAY_GAMES = 10_000


def top_actions(agent: Agent, game: Game, seat: int) -> list[list[Any]] | None:
    """A PPO agent's most probable legal actions at ``seat`` as ``[[id, probability], ...]``; None for
    other agents and forced decisions."""
    if not isinstance(agent, PPOAgent):
        return None
    info = game.view(seat)
    legal = list(info["legal_action_ids"])
    if len(legal) < 2:
        return None
    obs = agent_observation(agent, game, seat, info)
    probs = agent.probabilities(obs["observation"], obs["action_mask"])[0][legal]
    order = np.argsort(-probs, kind="stable")[:TOP_ACTIONS]
    return [[legal[i], round(float(probs[i]), 4)] for i in order]


class AnnotatingRecorder(Recorder):
    """A ``Recorder`` that notes, for each PPO decision, the policy's most probable actions."""

    def __init__(self, game: Game, seat_agents: Sequence[Agent], meta: Mapping[str, Any] | None = None) -> None:
        super().__init__(game, [describe_agent(a) for a in seat_agents], meta)
        self.seat_agents = list(seat_agents)

    def step(self, action: Action | int | str, annotation: Mapping[str, Any] | None = None) -> None:
        """Record one step; a PPO seat's decision gets its ``top`` probabilities."""
        seat = self.game.current_player
        if annotation is None and seat is not None:
            top = top_actions(self.seat_agents[seat], self.game, seat)
            annotation = {"top": top} if top else None
        super().step(action, annotation)


def parse_games(text: str) -> list[int]:
    """Game numbers from ``0,5,10-12``; raises ValueError saying what is allowed."""
    games: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"--replay-games takes game numbers and ranges such as 0,5,10-12; got {part!r}")
        low, high = int(first), int(last) if dash else int(first)
        if high < low:
            raise ValueError(f"--replay-games: the range {part!r} runs backwards")
        games += range(low, high + 1)
        if len(games) > MAX_REPLAY_GAMES:
            raise ValueError(f"--replay-games lists more than {MAX_REPLAY_GAMES} games")
    if not games:
        raise ValueError("--replay-games lists no game")
    return sorted(set(games))


def record_games(lineup: Sequence[Agent], rules: Rules, games: Sequence[int], *, seed: int, unit: str,
                 max_decisions: int = DEFAULT_MAX_DECISIONS) -> Iterator[tuple[int, GameRecord, Replay]]:
    """Play the evaluation's games ``games`` again with a recorder: (game number, its record, its replay)."""
    n = rules.num_players
    for number in games:
        deal, rotation = divmod(number, n)
        recorders: list[AnnotatingRecorder] = []
        meta = {"seed": seed, "deal": deal, "rotation": rotation, "unit": unit, "game": number}
        result = play_game(lineup, rules, deal, rotation, seed=seed, unit=unit, max_decisions=max_decisions,
                           record=_collect(recorders, meta))
        yield number, result, recorders[0].replay()


def _collect(recorders: list[AnnotatingRecorder], meta: dict[str, Any]) -> Callable[[Game, list[Agent]], Recorder]:
    """A ``play_game`` ``record`` callback that keeps the recorder it makes."""

    def record(game: Game, seat_agents: list[Agent]) -> Recorder:
        recorders.append(AnnotatingRecorder(game, seat_agents, meta))
        return recorders[-1]

    return record
