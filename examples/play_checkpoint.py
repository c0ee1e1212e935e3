"""Play a PPO checkpoint in the PettingZoo loop: the shipped policy at seat 0 against rule agents.

    python examples/play_checkpoint.py                              # the shipped checkpoint for the table
    python examples/play_checkpoint.py --checkpoint runs/x/best.safetensors --edition angry_birds
"""

import argparse

import uno_env
from agents import PPOAgent, RuleAgent
from agents.registry import make_agent

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--checkpoint", help="a checkpoint file (default: the shipped one for the table)")
parser.add_argument("--edition", default="classic")
parser.add_argument("--players", type=int, default=4)
parser.add_argument("--seed", type=int, default=7)
args = parser.parse_args()

env = uno_env.env(edition=args.edition, num_players=args.players, target_score=200)
policy = (PPOAgent.load(args.checkpoint) if args.checkpoint
          else make_agent("ppo", edition=args.edition, num_players=args.players))  # ppo[classic_4p_points] here
seats = {agent: policy if i == 0 else RuleAgent() for i, agent in enumerate(env.possible_agents)}
labels = {agent: f"ppo[{policy.label}]" if i == 0 else "rule" for i, agent in enumerate(env.possible_agents)}

env.reset(seed=args.seed)
for name in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:  # what this seat may know: its observation dict and its view of the game
        action = seats[name].act(observation, env.view(name))
    env.step(action)
    if termination or truncation:
        print(f"{name} ({labels[name]}): final reward {reward:+.2f}")

game = env.unwrapped.game
print(f"scores {game.scores}, winners {game.winners}, {env.unwrapped.turns} decisions")
