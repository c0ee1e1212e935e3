"""An agent for the batched engine: one torch function that chooses for every table at once.

    python examples/batched_agent.py                           # 1,024 tables, 500 steps
    python examples/batched_agent.py --tables 4096 --device cuda

``BatchedUno`` steps thousands of tables together; an agent there is a function from the
batch's state (``action_mask`` (B, 80), ``observation`` (B, 1009), ``current_player`` (B,)) to
one action id per table. This one plays like RLCard's random agent (a random playable card when
it has one) against uniformly random play, half the tables with it at seat 0, half at seat 1.
"""

import argparse

import torch

from uno_env.batched import BatchedUno

PLAYS = 55  # action ids 0-54 play a card kind, 55 and up draw, keep, name a color... (uno_env.core.actions)


def uniform(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random legal action per table."""
    noise = torch.rand(mask.shape, generator=generator, device=mask.device)
    return torch.where(mask, noise, -1.0).argmax(1)


def play_first(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A random playable card where a table has one, else a random legal action."""
    plays = mask.clone()
    plays[:, PLAYS:] = False
    return uniform(torch.where(plays.any(1, keepdim=True), plays, mask), generator)


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--tables", type=int, default=1024)
parser.add_argument("--steps", type=int, default=500, help="batch steps (one decision per table each)")
parser.add_argument("--device", default="cpu")
args = parser.parse_args()

torch.set_num_threads(1)
env = BatchedUno(args.tables, edition="classic", num_players=2, episode="round", device=args.device, seed=0)
generator = torch.Generator(device=env.device).manual_seed(0)
ours = torch.arange(args.tables, device=env.device) % 2  # the seat play_first holds at each table
wins = torch.zeros(2, device=env.device)  # rounds won by play_first, by uniform play
state = env.reset()
for _ in range(args.steps):
    mine = state.current_player == ours
    state = env.step(torch.where(mine, play_first(state.action_mask, generator), uniform(state.action_mask, generator)))
    won = state.rewards[:, :2] > 0  # at a round's end the seat that went out gets +1
    seat = torch.arange(2, device=env.device)
    wins[0] += (won & (seat == ours[:, None])).sum()
    wins[1] += (won & (seat != ours[:, None])).sum()
rounds = int(wins.sum())
print(f"{rounds} rounds on {args.tables} tables: play_first won {100 * wins[0] / rounds:.1f}%, "
      f"uniform play {100 * wins[1] / rounds:.1f}%")
