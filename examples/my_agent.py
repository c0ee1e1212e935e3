"""Write an agent: subclass ``agents.Agent`` and implement ``act(observation, info) -> int``.

    python examples/my_agent.py                        # plays it against random and rule agents
    PYTHONPATH=examples uno-env evaluate --agents my_agent:ColorHoarder rule --games 200

``info`` is what the seat may know (``game.view(seat)``: hand, top card, legal actions as text
and ids, other seats' hand sizes...); ``observation["action_mask"]`` marks the legal ids. The
harness gives each seat its own copy, calls ``seed(s)`` and ``reset()`` before each game.
"""

import random
from collections import Counter

from agents import Agent
from agents.tournament import evaluate
from uno_env.core import EDITIONS, Rules


class ColorHoarder(Agent):
    """Sheds its most-held color first, keeps wilds for last, names its most-held color, always calls UNO."""

    name = "color-hoarder"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def seed(self, seed: int | None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation, info):
        legal = dict(zip(info["legal_actions"], info["legal_action_ids"], strict=True))
        letters = EDITIONS[info["edition"]].letters  # a card's code starts with its color letter; wilds with W
        held = Counter(card[0] for card in info["hand"] if card[0] in letters)
        best_color = max(info["colors"], key=lambda color: held[letters[info["colors"].index(color)]])

        def preference(text: str) -> tuple[int, int]:
            if text in ("uno", "catch"):
                return (0, 0)
            if text.startswith("play ") and not text.startswith("play W"):
                return (1, -held[text[5]])  # a colored card, of the color held most
            if text in (f"color {best_color}", f"give {best_color}"):
                return (1, 0)
            if text.startswith("play W"):
                return (2, 0)
            return (3, 0)

        ranked = sorted(legal, key=preference)
        ties = [text for text in ranked if preference(text) == preference(ranked[0])]
        return legal[self.rng.choice(ties)]


if __name__ == "__main__":
    for opponent in ("random", "rule"):
        result = evaluate([ColorHoarder(), opponent], Rules(num_players=2), games=400, seed=0)
        print(result.to_markdown())
