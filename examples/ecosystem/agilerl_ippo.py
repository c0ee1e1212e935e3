"""AgileRL as its multi-agent docs show: IPPO on a PettingZoo parallel env, the masks read from the infos.

Run (``eco`` extra; ``pip install torch==2.13.0`` first)::

    python examples/ecosystem/agilerl_ippo.py --updates 12

AgileRL's multi-agent algorithms drive the PettingZoo *parallel* API and read each agent's legal
actions from ``infos[agent]["action_mask"]``; the observations they get must not hold the mask.
So the env is ``uno_env.env(infos="mask")`` (every agent's mask in its infos), turned into a
``ParallelEnv`` by PettingZoo's ``turn_based_aec_to_parallel`` (every agent gets an observation,
reward and done at every step, so each seat's own rewards, the final one included, reach its own
transitions; the agent that does not decide has an all-zero mask and its action is ignored) and
reduced to the observation vector by SuperSuit's ``observation_lambda_v0``, as AgileRL's
tutorials preprocess observations; AgileRL's ``PzDummyVecEnv`` batches it. ``player_0`` and
``player_1`` share one actor and one critic (AgileRL groups agents by name prefix): self-play.
The script prints the shared policy's round win rate against uniformly random legal play
before and after training.

Not shown to learn: measured here (2 shared cores, load 6-7), 12 updates of 1,024 steps (136 s)
left the policy winning 5, 3, 4 and 1 of 30 rounds against random play after 3, 6, 9 and 12 updates
(400-decision cap; uniformly random play in seat 0 wins about as few, most rounds being cut off).
``tests/test_ecosystem_agilerl.py`` tests that the masks reach IPPO through the infos (no illegal
action in a rollout) and that ``learn`` updates the shared networks.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import supersuit
import torch
from agilerl.algorithms.ippo import IPPO
from agilerl.vector.dummy_vec_env import PzDummyVecEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import uno_env

NUM_PLAYERS = 2


@dataclass
class Args:
    """The run's settings."""

    updates: int = 12
    """IPPO updates (each after ``learn_step`` env steps)."""
    learn_step: int = 1_024
    """Env steps per rollout (one decision each; every agent stores a transition per step)."""
    hidden: int = 64
    """Width of the actor's and the critic's two hidden layers."""
    lr: float = 1e-3
    """Adam's learning rate."""
    batch_size: int = 256
    """Minibatch size of IPPO's epochs."""
    max_turns: int = 400
    """Decisions per round before it is cut off (a truncated round is won by nobody)."""
    eval_rounds: int = 100
    """Rounds for each win-rate measurement against random play."""
    seed: int = 0
    """Seeds torch, numpy and the deals."""


def make_parallel_env(max_turns: int = 400) -> Any:
    """The env AgileRL reads: a ``ParallelEnv`` of observation vectors, the masks in the infos."""
    aec = uno_env.env(num_players=NUM_PLAYERS, max_players=NUM_PLAYERS, episode="round", max_turns=max_turns,
                      infos="mask")
    parallel = turn_based_aec_to_parallel(aec)
    return supersuit.observation_lambda_v0(parallel, lambda obs, space: obs["observation"],
                                           lambda space: space["observation"])


def scaled(obs: Mapping[str, np.ndarray], scale: np.ndarray) -> dict[str, np.ndarray]:
    """Observations over their bound (counts reach 112), as AgileRL's MLPs want inputs near [0, 1]."""
    return {agent: o / scale for agent, o in obs.items()}


def as_lists(info: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The infos with each mask as a list: AgileRL 2.58's IPPO tests ``None in masks``, which a list of
    numpy arrays cannot answer (``ValueError: The truth value of an array ... is ambiguous``)."""
    return {agent: {**i, "action_mask": np.asarray(i["action_mask"]).tolist()} for agent, i in info.items()}


def build_agent(env: Any, args: Args) -> IPPO:
    """IPPO with one shared actor-critic for both seats (AgileRL groups ``player_*``)."""
    agents = env.possible_agents
    return IPPO(observation_spaces=[env.observation_space(a) for a in agents],
                action_spaces=[env.action_space(a) for a in agents], agent_ids=list(agents),
                net_config={"encoder_config": {"hidden_size": [args.hidden, args.hidden]}},
                lr=args.lr, learn_step=args.learn_step, batch_size=args.batch_size, update_epochs=4,
                gamma=0.99, gae_lambda=0.95, ent_coef=0.01)


def train(agent: IPPO, args: Args) -> list[int]:
    """Collect ``learn_step`` steps, learn, repeat ``updates`` times; the count of illegal actions taken."""
    env = PzDummyVecEnv(make_parallel_env(args.max_turns))
    scale = np.maximum(env.observation_space(env.possible_agents[0]).high, 1.0)
    illegal = []
    obs, info = env.reset(seed=args.seed)
    for _ in range(args.updates):
        rollout: dict[str, dict[str, list[Any]]] = {key: {a: [] for a in env.possible_agents} for key in
                                                    ("states", "actions", "log_probs", "rewards", "dones", "values")}
        done = {a: np.zeros(1) for a in env.possible_agents}
        bad = 0
        for _ in range(args.learn_step):
            state = scaled(obs, scale)
            action, log_prob, _, value = agent.get_action(obs=state, infos=as_lists(info))
            acting = [a for a in env.possible_agents if info[a]["action_mask"].any()]
            bad += sum(not info[a]["action_mask"][int(action[a][0])] for a in acting)
            next_obs, reward, termination, truncation, info = env.step(action)
            for key, per_agent in (("states", state), ("actions", action), ("log_probs", log_prob),
                                   ("rewards", reward), ("dones", done), ("values", value)):
                for a in env.possible_agents:
                    rollout[key][a].append(per_agent[a])
            done = {a: np.logical_or(termination[a], truncation[a]).astype(float) for a in env.possible_agents}
            obs = next_obs
            if all(bool(d[0]) for d in done.values()):
                # PzDummyVecEnv reset already, but hands back the finished round's infos (all masks
                # zero); reset again to read the new round's masks.
                obs, info = env.reset(seed=int(np.random.randint(2**31)))
        agent.learn((rollout["states"], rollout["actions"], rollout["log_probs"], rollout["rewards"],
                     rollout["dones"], rollout["values"], scaled(obs, scale), done))
        illegal.append(bad)
    return illegal


def win_rate(agent: IPPO, rounds: int, max_turns: int, seed: int) -> tuple[int, int]:
    """(rounds won, rounds played) by the policy (``get_action``, as AgileRL's ``test`` plays) in seat 0
    against uniformly random legal play in seat 1, on ``rounds`` deals from ``seed``."""
    env = PzDummyVecEnv(make_parallel_env(max_turns))
    scale = np.maximum(env.observation_space(env.possible_agents[0]).high, 1.0)
    rng = np.random.default_rng(seed)
    won = 0
    for episode in range(rounds):
        obs, info = env.reset(seed=seed + episode)
        while True:
            action, *_ = agent.get_action(obs=scaled(obs, scale), infos=as_lists(info))
            mask = info["player_1"]["action_mask"]
            if mask.any():
                action["player_1"] = np.array([rng.choice(np.flatnonzero(mask))])
            obs, reward, termination, truncation, info = env.step(action)
            if all(bool(t[0]) or bool(u[0]) for t, u in zip(termination.values(), truncation.values(), strict=True)):
                won += int(reward["player_0"][0] > 0)
                break
    return won, rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    defaults = Args()
    for name, value in vars(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(parser.parse_args()))
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    agent = build_agent(make_parallel_env(args.max_turns), args)
    won, played = win_rate(agent, args.eval_rounds, args.max_turns, seed=10_000)
    print(f"untrained IPPO policy: won {won} of {played} rounds against random play")
    illegal = train(agent, args)
    won, played = win_rate(agent, args.eval_rounds, args.max_turns, seed=10_000)
    print(f"trained IPPO policy: won {won} of {played} rounds against random play ({sum(illegal)} illegal actions)")


if __name__ == "__main__":
    main()
