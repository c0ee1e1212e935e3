"""Run a tournament: one agent against a table of baselines, then a round robin with ratings.

    python examples/tournament.py --games 400 --out results    # Markdown, CSV, JSON and a plot in results/
"""

import argparse
from pathlib import Path

from agents.tournament import evaluate, round_robin
from uno_env.core import Rules

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--games", type=int, default=400, help="rounds per lineup (each deal played at every seat)")
parser.add_argument("--out", type=Path, default=Path("results"), help="folder for the reports")
args = parser.parse_args()
args.out.mkdir(parents=True, exist_ok=True)

# The shipped PPO policy against three rule agents at 4 players, one round per game, 2 processes.
table = evaluate(["ppo", "rule", "rule", "rule"], Rules(edition="classic", num_players=4), games=args.games,
                 workers=2, seed=0)
print(table.to_markdown())
table.write(args.out / "ppo_vs_rule.md")
table.write(args.out / "ppo_vs_rule.json")
table.plot(args.out / "ppo_vs_rule.png")

# Every pair of agents at 2 players; OpenSkill ratings from the results.
ranking = round_robin(["ppo", "rule", "simple", "random"], Rules(num_players=2), games_per_match=args.games // 4,
                      seed=0)
print(ranking.to_markdown())
ranking.write(args.out / "round_robin.csv")
