"""How much an oracle-guided actor (``batched.oracle_steps``) leans on the hidden cards it reads.

    python -m training.tools.oracle_use RUN [RUN/resume/model_<steps>.safetensors ...] [--players 4]

``RUN`` is a batched run's directory: its ``config.yaml`` gives the network, and each model file (by default
the newest in ``RUN/resume``) its weights. Positions come from rounds on the batched engine played at
random (seeded, so every model is measured on the same positions), every third env step, decisions with
one legal action left out. For each, the actor reads the position twice: with the hidden cards of the
seat to move (the privileged critic's vector, ``training.batched.selfplay.privileged_features``) and with
zeros there (what it exports and plays). Reported: the share of decisions whose argmax differs, and the mean
KL divergence of the masked softmax read with the hidden cards from the one read without them. 0 means
the hidden cards change nothing.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from training.batched.networks import MASKED, Actor
from training.batched.selfplay import privileged_features
from training.run.config import ConfigError, TrainConfig, load_config
from training.run.resume import ResumeError, read_resume_model
from uno_env.batched import BatchedUno

__all__ = ["OracleUse", "oracle_actor", "oracle_use", "positions"]

PREFIX = "policy/actor."
MAX_TABLES = 4096  # positions are about tables x steps / 3: the work an option sets is bounded


@dataclass(frozen=True)
class OracleUse:
    """``decisions`` measured; ``changed``: the share whose argmax the hidden cards change; ``kl``: the mean
    KL divergence (nats) of the policy with them from the policy without them."""

    decisions: int
    changed: float
    kl: float


def positions(players: int, max_players: int, tables: int = 512, steps: int = 60,
              seed: int = 7) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(observations, hidden cards, masks)`` of the seat to move, every third env step of random play, where
    it has more than one legal action."""
    if not 1 <= tables <= MAX_TABLES or not 1 <= steps <= 1000:
        raise ValueError(f"tables must be 1 to {MAX_TABLES} and steps 1 to 1000, got {tables} and {steps}")
    env = BatchedUno(tables, num_players=players, max_players=max_players, episode="round", seed=seed)
    generator = torch.Generator().manual_seed(seed)
    rows = torch.arange(tables)
    kept: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
    state = env.reset()
    for t in range(steps):
        if t % 3 == 0:
            hidden = privileged_features(env.tables, rows, state.current_player, max_players)
            kept.append((state.observation.clone(), hidden, state.action_mask.clone()))
        noise = torch.rand(state.action_mask.shape, generator=generator)
        state = env.step(torch.where(state.action_mask, noise, -1.0).argmax(1))
    observations, hidden, masks = (torch.cat(part) for part in zip(*kept, strict=True))
    choice = masks.sum(1).gt(1)
    return observations[choice], hidden[choice], masks[choice]


def oracle_actor(config: TrainConfig, model: dict[str, torch.Tensor]) -> Actor:
    """The oracle-guided actor of ``config`` holding a resume model's ``policy/actor.*`` tensors."""
    if not config.batched.oracle_steps:
        raise ConfigError("batched.oracle_steps is 0 in this run's config: its actor never read the hidden cards")
    actor = Actor(config.env.max_players, config.ppo.hidden, config.ppo.activation, oracle=True)
    try:
        actor.load_state_dict({k.removeprefix(PREFIX): v for k, v in model.items() if k.startswith(PREFIX)})
    except RuntimeError as err:
        raise ResumeError(f"the model's actor does not match the run's config: {str(err)[:300]}") from None
    return actor


def oracle_use(actor: Actor, observations: torch.Tensor, hidden: torch.Tensor, masks: torch.Tensor) -> OracleUse:
    """What the hidden cards change in ``actor``'s choices at these positions (module docstring)."""
    with torch.no_grad():
        seen = actor(torch.cat([observations, hidden], 1)).masked_fill(~masks, MASKED)
        zeroed = actor(torch.cat([observations, torch.zeros_like(hidden)], 1)).masked_fill(~masks, MASKED)
    log_seen, log_zeroed = torch.log_softmax(seen, 1), torch.log_softmax(zeroed, 1)
    kl = (log_seen.exp() * (log_seen - log_zeroed)).sum(1).mean()
    changed = seen.argmax(1).ne(zeroed.argmax(1)).float().mean()
    return OracleUse(decisions=int(observations.shape[0]), changed=float(changed), kl=float(kl))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.tools.oracle_use", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the batched run's directory (its config.yaml)")
    parser.add_argument("models", type=Path, nargs="*", help="resume model files (default: the newest in RUN/resume)")
    parser.add_argument("--players", type=int, default=4, help="table size of the positions (2 to the run's max_players)")
    parser.add_argument("--tables", type=int, default=512, help=f"tables played at random (1 to {MAX_TABLES})")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        config = load_config(args.run / "config.yaml", resuming=True)
        if not 2 <= args.players <= config.env.max_players:
            raise ValueError(f"--players must be 2 to {config.env.max_players}, got {args.players}")
        models = args.models or sorted((args.run / "resume").glob("model_*.safetensors"),
                                       key=lambda p: int(p.stem.split("_")[-1]))[-1:]
        if not models:
            raise ResumeError(f"{args.run / 'resume'} holds no model_<steps>.safetensors")
        observations, hidden, masks = positions(args.players, config.env.max_players, args.tables)
        for path in models:
            use = oracle_use(oracle_actor(config, read_resume_model(path)), observations, hidden, masks)
            print(f"{path}: {use.decisions} decisions with a choice; the hidden cards change the choice in "
                  f"{100 * use.changed:.2f}% (mean KL {use.kl:.4f} nats)")
    except (ConfigError, ResumeError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
