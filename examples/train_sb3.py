"""Train sb3-contrib's MaskablePPO on the single-agent env, export it as a checkpoint, evaluate it.

    python examples/train_sb3.py                    # 32,768 learner steps
    python examples/train_sb3.py --seed 1           # another training seed (default 0)
    python examples/train_sb3.py --steps 200000     # longer
    uno-env play --opponents ppo:my_policy.safetensors

With the defaults (32,768 steps against the env's default opponent, RLCard-style random play)
each of seeds 0-7 trained a policy whose most likely action won 196-200 of 200 two-player rounds
against uniformly random play and 137-152 of 200 against RLCard-style random play (a playable
card before drawing); seed 0 won 198 and 150 (``tests/test_docs.py`` runs it), and the same seed
gives the same weights.
Fewer steps leave less margin: 16,384 won 196-199 of 200 against uniformly random play at
seeds 0-3, but 8,192 won 98 at seed 1 and the former default of 4,096 won 37 (seed 0) and 8
(seed 1): so short a run leaves the policy near its random start, and where its argmax ranks
``draw`` (always legal) above the playable cards it draws for thousands of decisions a round.
`uno-env train` is the project's own trainer (self-play against a pool, an imitation warm
start, a privileged critic).
"""

import argparse

import torch
from sb3_contrib import MaskablePPO

from agents import PPOAgent
from agents.tournament import evaluate
from training.sb3.policy import export_policy, policy_kwargs
from uno_env import SingleAgentEnv
from uno_env.core import Rules
from uno_env.observation import observation_size

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=32768, help="learner steps (default 32768)")
parser.add_argument("--seed", type=int, default=0, help="the training seed (default 0)")
parser.add_argument("--games", type=int, default=200, help="evaluation rounds per opponent (default 200)")
parser.add_argument("--out", default="my_policy.safetensors", help="the checkpoint to write")
args = parser.parse_args()

torch.set_num_threads(1)  # one torch thread per process: much faster on a few shared cores
HIDDEN, MAX_PLAYERS = [64, 64], 10
env = SingleAgentEnv(num_players=2, episode="round", seat="random", max_players=MAX_PLAYERS)
# Separate actor and critic MLPs over observations scaled to [-1, 1]: the network PPOAgent runs.
model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=args.seed, device="cpu",
                    policy_kwargs=policy_kwargs(HIDDEN, "tanh", MAX_PLAYERS))
model.learn(total_timesteps=args.steps)

export_policy(model.policy, args.out, {  # the actor only, as safetensors: no pickle
    "max_players": MAX_PLAYERS, "observation_size": observation_size(MAX_PLAYERS), "hidden": HIDDEN,
    "activation": "tanh", "editions": ["classic"], "num_players": [2], "steps": args.steps, "seed": args.seed})
agent = PPOAgent.load(args.out)  # runs in numpy: playing it needs no torch
for opponent in ("random-uniform", "random"):
    print(evaluate([agent, opponent], Rules(num_players=2), games=args.games, seed=1).to_markdown())
