"""Distil an all-seeing search into a fair policy: the oracle's action values on the policy's own positions.

    python -m training.tools.oracle_distil label --policy P.safetensors --seed S --rounds R --out L.safetensors
    python -m training.tools.oracle_distil fit --policy P.safetensors --out NEW.safetensors L.safetensors [...]

``label`` plays classic rounds, one seat (rotated round by round) played greedily by the policy against
RuleAgents, and at each of that seat's decisions with a choice (not an UNO call or a catch) runs
``OracleSearch``: the ISMCTS machinery given the true position, every hand seen, the draw pile reshuffled
in each determinization (``pile="shuffled"``, issue 24's 42% probe) or kept in its order (``"known"``,
the 64% probe). The paired root plays every legal action on each determinization, so each gets a mean
outcome (its chance of winning the round, the rollouts' heuristic playing on). Because the position is
the real one, its hidden cards are a draw from the true posterior given what the seat saw: over many
positions, the mean outcome of an action is an unbiased estimate of its value to a fair player (who plays
the heuristic afterwards), which a uniform determinization is not. The file holds, per decision, the
seat's observation vector, its action mask, the policy's action and the oracle's mean outcome per legal
action (NaN elsewhere): safetensors, float32, read with its header checked first.

``fit`` fine-tunes the policy on those values. The best policy for the expected advantage ``A`` (the mean
outcome less the legal actions' average) with a KL penalty of weight ``temperature`` to the policy it
started from is ``pi_old * exp(A / temperature)``; the fit minimises the cross-entropy from that target
(maximising ``sum_a pi(a) A(a)`` directly barely moves a policy as sure of its choices as a trained one: its
gradient vanishes with the probabilities of the other actions). One tenth of the decisions is held out and
the mean advantage of the greedy choice reported on it per epoch.
The docs' training report (run T) has what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import agent_observation
from agents.belief import Move
from agents.ismcts import ISMCTSAgent
from agents.ppo_agent import CheckpointError, PPOAgent, read_checkpoint, read_safetensors, write_checkpoint
from agents.rule_agent import RuleAgent
from uno_env.core import Game, Rules
from uno_env.core import actions as A
from uno_env.core.determinize import InfoSet
from uno_env.core.state import GameState
from uno_env.observation import NUM_ACTIONS, observation_size

__all__ = ["LABELS_FORMAT", "Labels", "OracleSearch", "advantages", "fit", "label", "main", "read_labels", "write_labels"]

LABELS_FORMAT = "uno_env.oracle_labels"
PILES = ("shuffled", "known")
MAX_ROUNDS = 10_000  # each option that sets work is bounded
MAX_PLAYOUTS = 5_000
MAX_EPOCHS = 100
MAX_DECISIONS = 3_000  # a round still going after this many decisions is cut (it counts as lost)
MAX_ROWS = 200_000  # decisions in one labels file: labelling stops there; fit reads several files
MAX_OBSERVATION = observation_size(10)  # the widest observation vector (10 seats)
MAX_LABELS_BYTES = 1 << 30  # MAX_ROWS rows of the widest observation, mask, values and action fit in it


class OracleSearch(ISMCTSAgent):
    """ISMCTS that plays out the true position (``truth``, set before each ``search``) instead of a deal of
    the hidden cards: every hand as it is, the draw pile reshuffled per determinization or kept."""

    def __init__(self, iterations: int, seed: int | None = None, pile: str = "shuffled") -> None:
        if pile not in PILES:
            raise ValueError(f"pile must be one of {', '.join(PILES)}, got {pile!r}")
        super().__init__(iterations=iterations, seed=seed, prior=None)
        self.pile = pile
        self.truth: Game | None = None

    def _determinization(self, infoset: InfoSet, rng: random.Random,
                         lacks: dict[int, tuple[frozenset[int], int]] | None, moves: list[Move]) -> GameState:
        if self.truth is None:
            raise RuntimeError("OracleSearch needs .truth, the game being played, before it searches")
        state = self.truth.state.copy()
        if self.pile == "shuffled":
            rng.shuffle(state.draw_pile)
            state.rng = random.Random(rng.getrandbits(64))
        return state

    def action_values(self, game: Game, seat: int) -> np.ndarray:
        """Search ``game`` (whose decision is ``seat``'s): the mean outcome of each legal action, NaN elsewhere."""
        info = game.view(seat)
        self.truth = game
        try:
            self.search(info, list(info["legal_action_ids"]), None)
        finally:
            self.truth = None
        values = np.full(NUM_ACTIONS, np.nan, np.float32)
        assert self.last_root is not None
        for a, child in self.last_root.children.items():
            if child.outcomes:
                values[a] = sum(child.outcomes) / len(child.outcomes)
        return values


@dataclass(frozen=True)
class Labels:
    """Per decision: ``observation`` (rows x size), ``mask`` (rows x NUM_ACTIONS, 0/1), ``policy`` (its action id),
    ``values`` (the oracle's mean outcome per legal action, NaN elsewhere); ``meta`` says how they were made
    (its ``wins``: how many of its ``rounds`` the policy's seat won)."""

    observation: np.ndarray
    mask: np.ndarray
    policy: np.ndarray
    values: np.ndarray
    meta: dict[str, Any]


def label(policy_path: str, seed: int, rounds: int, playouts: int = 200, players: int = 4,
          pile: str = "shuffled", progress: bool = False) -> Labels:
    """Play ``rounds`` rounds (the policy's seat rotated, RuleAgents elsewhere) and label each of its choices;
    at ``MAX_ROWS`` decisions labelling stops (the round under way is played out; ``meta["rounds"]`` says how
    many were played): label more in further files, ``fit`` reads several."""
    if not 1 <= rounds <= MAX_ROUNDS or not 1 <= playouts <= MAX_PLAYOUTS or not 2 <= players <= 10:
        raise ValueError(f"rounds must be 1 to {MAX_ROUNDS}, playouts 1 to {MAX_PLAYOUTS} and players 2 to 10; "
                         f"got {rounds}, {playouts} and {players}")
    policy = PPOAgent.load(policy_path)
    oracle = OracleSearch(playouts, seed=seed, pile=pile)
    rules = Rules(num_players=players)
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    values: list[np.ndarray] = []
    wins = 0
    played = 0
    for r in range(rounds):
        if len(actions) >= MAX_ROWS:
            break
        played += 1
        game = Game(rules, seed=seed * 100_003 + r)
        me = r % players
        others = {s: RuleAgent() for s in range(players) if s != me}
        for _ in range(MAX_DECISIONS):
            if game.is_round_over:
                break
            seat = game.current_player
            assert seat is not None
            info = game.view(seat)
            agent = others.get(seat, policy)
            obs = agent_observation(agent, game, seat, info)
            action = agent.act(obs, info)
            legal = info["legal_action_ids"]
            if seat == me and len(legal) > 1 and A.UNO not in legal and A.CATCH not in legal \
                    and len(actions) < MAX_ROWS:
                observations.append(np.asarray(obs["observation"], np.float32))
                masks.append(np.asarray(obs["action_mask"], np.float32))
                actions.append(action)
                values.append(oracle.action_values(game, seat))
            game.step(action)
        wins += game.round_winner == me
        if progress and (r + 1) % 100 == 0:
            print(f"{r + 1} rounds, {len(actions)} decisions, the policy's seat won {wins / (r + 1):.3f}",
                  file=sys.stderr, flush=True)
    size = observation_size(policy.max_players)  # the vector the policy reads (PPOAgent.act checks it)
    meta = {"format": LABELS_FORMAT, "policy": os.path.basename(policy_path), "seed": seed, "rounds": played,
            "playouts": playouts, "players": players, "pile": pile, "wins": int(wins), "rows": len(actions),
            "observation_size": size, "num_actions": NUM_ACTIONS}
    return Labels(np.array(observations, np.float32).reshape(-1, size), np.array(masks, np.float32).reshape(-1, NUM_ACTIONS),
                  np.array(actions, np.float32), np.array(values, np.float32).reshape(-1, NUM_ACTIONS), meta)


def write_labels(labels: Labels, path: str | os.PathLike[str]) -> None:
    """Write ``labels`` as safetensors (float32 tensors, the meta as JSON under ``uno_env``), atomically."""
    from safetensors.numpy import save_file

    from uno_env.files import atomic_path

    tensors = {"observation": labels.observation, "mask": labels.mask, "policy": labels.policy, "values": labels.values}
    with atomic_path(path) as tmp:
        save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(tmp),
                  metadata={"uno_env": json.dumps(labels.meta, sort_keys=True)})


def _layout(meta: Mapping[str, Any], source: str) -> dict[str, tuple[int, ...]]:
    rows, size, actions = meta.get("rows"), meta.get("observation_size"), meta.get("num_actions")
    if meta.get("format") != LABELS_FORMAT:
        raise CheckpointError(f"{source} is not an oracle labels file (format {meta.get('format')!r})")
    for name, value, top in (("rows", rows, MAX_ROWS), ("observation_size", size, MAX_OBSERVATION)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
            raise CheckpointError(f"{source}: {name} must be an int 0 to {top}, got {value!r}")
    if actions != NUM_ACTIONS:
        raise CheckpointError(f"{source} has {actions!r} actions; this version has {NUM_ACTIONS}")
    assert isinstance(rows, int) and isinstance(size, int)
    return {"observation": (rows, size), "mask": (rows, NUM_ACTIONS), "policy": (rows,), "values": (rows, NUM_ACTIONS)}


def read_labels(path: str | os.PathLike[str]) -> Labels:
    """Read a labels file, its header checked before a tensor is read; ``CheckpointError`` if it is not one."""
    tensors, meta = read_safetensors(path, "oracle labels file", layout=_layout, max_bytes=MAX_LABELS_BYTES)
    mask = tensors["mask"]
    if not np.isin(mask, (0.0, 1.0)).all() or (mask.shape[0] and not mask.any(axis=1).all()):
        raise CheckpointError(f"{os.fspath(path)}: a mask entry is not 0 or 1, or a row has no legal action")
    policy = tensors["policy"]
    if not np.isfinite(tensors["values"][mask == 1]).all() or not np.isfinite(tensors["observation"]).all():
        raise CheckpointError(f"{os.fspath(path)}: a legal action's value or an observation is not finite")
    ids = policy.astype(np.int64)
    if (ids != policy).any() or (ids < 0).any() or (ids >= NUM_ACTIONS).any() or \
            not mask[np.arange(len(ids)), ids].all():
        raise CheckpointError(f"{os.fspath(path)}: a policy action is not one of its row's legal ids")
    return Labels(tensors["observation"], mask, policy, tensors["values"], meta)


def advantages(labels: Labels) -> np.ndarray:
    """Each legal action's value less the mean over its row's legal actions; 0 where illegal."""
    legal = labels.mask == 1
    values = np.where(legal, labels.values, 0.0)
    mean = values.sum(axis=1, keepdims=True) / legal.sum(axis=1, keepdims=True)
    return np.where(legal, values - mean, 0.0).astype(np.float32)


def fit(policy_path: str, labels: Sequence[Labels], temperature: float = 0.005, epochs: int = 4, lr: float = 3e-4,
        seed: int = 0, log: Any = None) -> dict[str, np.ndarray]:
    """The policy's tensors fine-tuned on ``labels`` (the module docstring's objective); ``log(line)`` per epoch."""
    import torch

    if not (math.isfinite(temperature) and temperature > 0) or not 0 <= epochs <= MAX_EPOCHS \
            or not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"temperature must be > 0, epochs 0 to {MAX_EPOCHS} and lr > 0; got {temperature}, "
                         f"{epochs} and {lr}")
    tensors, meta = read_checkpoint(policy_path)
    torch.manual_seed(seed)
    obs = torch.tensor(np.concatenate([x.observation for x in labels]))
    if obs.shape[1] != tensors["obs_scale"].shape[0]:
        raise ValueError(f"the labels hold observations of size {obs.shape[1]}, the policy reads "
                         f"{tensors['obs_scale'].shape[0]}")
    legal = torch.tensor(np.concatenate([x.mask for x in labels]) == 1)
    adv = torch.tensor(np.concatenate([advantages(x) for x in labels]))
    scale = torch.tensor(tensors["obs_scale"])
    params = {k: torch.nn.Parameter(torch.tensor(v)) for k, v in tensors.items() if k != "obs_scale"}
    relu = meta["activation"] == "relu"

    def log_probs(rows: torch.Tensor) -> torch.Tensor:
        h = obs[rows] * scale
        for i in range(len(meta["hidden"])):
            h = h @ params[f"hidden.{i}.weight"].T + params[f"hidden.{i}.bias"]
            h = torch.relu(h) if relu else torch.tanh(h)
        logits = h @ params["action.weight"].T + params["action.bias"]
        return torch.log_softmax(logits.masked_fill(~legal[rows], -1e9), dim=1)

    n = len(obs)
    order = torch.randperm(n)
    held, train = order[: n // 10], order[n // 10:]
    with torch.no_grad():
        target = torch.softmax((log_probs(torch.arange(n)) + adv / temperature).masked_fill(~legal, -1e9), dim=1)

    def greedy(rows: torch.Tensor) -> float:
        with torch.no_grad():
            return float(adv[rows].gather(1, log_probs(rows).argmax(1, keepdim=True)).mean()) if len(rows) else 0.0

    if log is not None:
        log(f"decisions {n}: the policy's greedy advantage on the held-out tenth {greedy(held):+.4f}")
    optimizer = torch.optim.Adam(params.values(), lr=lr)
    for epoch in range(epochs):
        shuffled = train[torch.randperm(len(train))]
        for start in range(0, len(shuffled), 512):
            rows = shuffled[start:start + 512]
            loss = -(target[rows] * log_probs(rows)).sum(1).mean()
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
        if log is not None:
            log(f"epoch {epoch + 1}: greedy advantage, trained rows {greedy(train):+.4f}, held out {greedy(held):+.4f}")
    return {"obs_scale": tensors["obs_scale"], **{k: v.detach().numpy() for k, v in params.items()}}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.tools.oracle_distil", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="label the policy's decisions with the oracle's action values")
    lab.add_argument("--policy", required=True)
    lab.add_argument("--seed", type=int, required=True)
    lab.add_argument("--rounds", type=int, required=True)
    lab.add_argument("--playouts", type=int, default=200)
    lab.add_argument("--players", type=int, default=4)
    lab.add_argument("--pile", choices=PILES, default="shuffled")
    lab.add_argument("--out", required=True)
    fits = sub.add_parser("fit", help="fine-tune the policy on labels files")
    fits.add_argument("--policy", required=True)
    fits.add_argument("--out", required=True)
    fits.add_argument("--temperature", type=float, default=0.005)
    fits.add_argument("--epochs", type=int, default=4)
    fits.add_argument("--lr", type=float, default=3e-4)
    fits.add_argument("labels", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "label":
            made = label(args.policy, args.seed, args.rounds, args.playouts, args.players, args.pile, progress=True)
            write_labels(made, args.out)
            print(f"{args.out}: {made.meta['rows']} decisions; the policy's seat won {made.meta['wins']} of "
                  f"{made.meta['rounds']} rounds")
            return 0
        import torch

        torch.set_num_threads(1)  # one thread a process, as everywhere in training here
        tensors = fit(args.policy, [read_labels(p) for p in args.labels], args.temperature, args.epochs, args.lr,
                      log=print)
        _, meta = read_checkpoint(args.policy)
        write_checkpoint(args.out, tensors, {**meta, "name": os.path.splitext(os.path.basename(args.out))[0]})
        print(f"wrote {args.out}")
        return 0
    except (ValueError, OSError) as err:  # CheckpointError is a ValueError
        print(f"oracle_distil: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
