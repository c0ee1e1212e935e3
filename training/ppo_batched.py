"""On-device self-play PPO over the batched engine: ``uno-env train --config X`` with ``trainer: batched``.

Everything a rollout touches lives on one torch device (``batched.device``): the tables
(``uno_env.batched.BatchedUno``), the learner's actor and critic, every opponent, the
advantages and the updates. Nothing goes through PettingZoo, Gymnasium or SB3, and the module
imports torch, numpy, pyyaml and safetensors only (plus ``agents`` for the CPU evaluation), so
it runs from a working tree on a bare GPU machine.

It reads top to bottom, CleanRL style: the networks; the opponents; the hidden cards for the
privileged critic; the tables; then ``run_batched``: seeding, set-up (or resume), and the loop
(rollout -> advantages -> PPO epochs -> snapshots, evaluation, checkpoints).

What a run does, in the terms of ``training.config`` (the SB3 trainer's keys mean the same):

* **Tables.** ``batched.num_tables`` tables, each with an edition, table size and rule options
  drawn once from ``env`` (lists are weighted by repeats), so one batch mixes editions and sizes
  for a universal policy. ``env.episode``, ``env.reward``, ``env.max_turns`` as the engine's.
* **Seats.** At every episode start, per table, the learner's seat is drawn uniformly and every
  other seat gets an opponent from the pool: a baseline (``pool.baselines``; chance
  ``pool.baseline_share``, always before the first snapshot and for ``pool.baseline_only_steps``),
  else the newest snapshot (``pool.latest_share``), else an older one uniformly. Each env step,
  the seats to act are grouped by who plays them and every group is one forward pass (one per
  opponent kind); ``random`` and ``random-uniform`` are RandomAgent's two policies as tensor
  draws; ``rule`` is played by ``batched.rule``, a network fitted to RuleAgent (RuleAgent is
  Python); snapshots play their argmax when ``pool.deterministic`` else sample.
* **Learner steps.** A learner step is a decision of the learner's seat; with
  ``env.skip_forced`` one with a single legal action is taken inside the rollout and is not a
  step (its rewards go to the step before, as in ``training.pool.TrainingEnv``). Rewards are the
  engine's for the learner's seat times ``env.reward_scale``; rewards between two learner steps
  (opponents' moves) add up, and the discount ``ppo.gamma`` is per learner step. A truncated
  episode (``env.max_turns``) ends with ``env.truncation_reward`` when that is non-zero, else
  its last step is bootstrapped with the value of its final position seen from the learner's seat
  (the privileged part of that bootstrap is the position before the last decision: the engine
  has dealt the next game when it returns).
* **Privileged critic** (``ppo.privileged_critic``): the critic also reads every other hand and
  the next three cards of the draw pile, read from ``env.tables`` (``privileged_features``: the
  same vector as ``training.critic.privileged_features`` of the same position, tested); the
  actor reads the public observation only, and only the actor is exported.
* **Updates.** A rollout steps every table until at least ``ppo.n_envs * ppo.n_steps`` learner
  steps are stored (one env step adds up to one per table, so it overshoots by less than
  ``batched.num_tables``); GAE(``ppo.gae_lambda``) over each table's learner steps, bootstrapped at
  the rollout's end from the value of the learner's seat; then ``ppo.n_epochs`` passes of
  shuffled minibatches of about ``ppo.batch_size``: SB3's clipped PPO loss (advantages normalised
  per minibatch, unclipped value loss, entropy bonus, gradient clipping, Adam with eps 1e-5,
  orthogonal initialisation), so the settings of a config mean what they mean for MaskablePPO.
  ``batched.value_warmup_steps``: the first learner steps train the critic only.
* **Stopping.** A run stops after the update that reaches ``total_steps`` (so it may pass it by
  less than one rollout); checkpoints fall on update boundaries.

Outputs are the SB3 trainer's (``training.train``'s docstring): ``config.yaml``, ``last`` and
``best`` checkpoints in the ``agents.ppo_agent`` format with their cards, ``pool/snap_<steps>``,
``resume/`` (``training.resume``: safetensors + JSON, no pickle), ``evals.jsonl`` (periodic
evaluation of ``last`` with the tournament harness on CPU against the real RuleAgent and
RandomAgent, ``eval.matchups``, Wilson intervals; ``best`` maximises its score) and ``tb/``
(TensorBoard: ``train/*`` losses, ``rollout/*``, ``episodes/*``, ``pool/win_rate_vs/<name>``,
``eval/*``, ``time/steps_per_second``). Ctrl-C or SIGTERM stops at the next env step with a
checkpoint of the last update (the rollout in progress is dropped). ``--resume`` continues from
the last checkpoint with fresh tables (seeded from the seed and the step, as the SB3 trainer's
envs are), so an unbroken run and a resumed one differ after the resume point; a fixed seed
reproduces a run on the same device (tested).

Measured choices (``python -m training.bench``; 2 shared CPU cores, one torch thread):

* TorchRL 0.14.1 installs beside torch 2.13.0 without pulling another torch, and is not used
  (``python -m benchmarks.bench_torchrl``, one thread, shared machine). Its ``MaskedCategorical``
  took 32.6 ms for the log-probabilities and entropies of a 2,048-row minibatch against 1.7 ms
  for a masked ``log_softmax`` (24 minibatches per update: about 0.8 s of an update that takes
  about 3 s), and 0.27 ms against 0.07 ms to sample 128 rows. Its GAE is faster (0.3 ms against
  27 ms for 64 env steps x 256 tables) but wants each table's learner steps as one sequence,
  while the learner's steps come interleaved with the opponents' at irregular env steps;
  ``gae`` below works on that layout directly and costs about 1% of an update. Its
  ``ClipPPOLoss`` needs TensorDict modules around the networks. And the bare GPU machines this
  trainer targets have torch, numpy, pyyaml, safetensors and tensorboard only.
* On a CPU the network's own arithmetic bounds both trainers. An observation has about 4% non-zero
  entries (the hidden cards about 1.5%), so on a CPU the first layer of every network (71% of the
  actor's and 85% of the privileged critic's multiply-adds) reads its input as sparse
  (``sparse_linear``: an ``embedding_bag`` of the weight columns the non-zero entries select, the
  same function as the dense product, tested): about 3x faster per update in float32. A
  ``bfloat16`` autocast of the dense products (``batched.precision``) was 3x faster than dense
  float32, no faster than the sparse float32 layers, so float32 is the default; on a GPU the
  products stay dense. With it the trainer ran 3.4-4.5x the SB3 trainer at 2 players and 1.3x
  (256 tables) to 2.0x (1,024 tables) at 4, with 28-42% of its time in the networks' arithmetic
  (README). Two torch threads were 3-8x slower than one on the shared cores.
"""

from __future__ import annotations

import copy
import math
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from uno_env.batched import BatchedUno
from uno_env.batched.tables import Tables
from uno_env.core.actions import DRAW, NUM_ACTIONS, NUM_PLAY_ACTIONS
from uno_env.core.cards import NUM_KINDS
from uno_env.observation import observation_bounds, observation_size

from .config import ConfigError, TrainConfig
from .critic import NEXT_DRAWS, critic_bounds, privileged_size
from .interrupt import StopRequests, TrainingInterrupted
from .progress import Progress

__all__ = ["Actor", "ActorCritic", "Critic", "Learner", "Opponent", "Rollout", "SelfPlay", "Steps", "actor_from_tensors",
           "actor_tensors", "gae", "load_opponent", "matmul_precision", "ppo_update", "privileged_features", "run_batched",
           "sample_actions", "sparse_linear", "table_options"]

SPARSE_SHARE = 0.25  # a first layer's input with at most this share of non-zero entries is read as sparse
MASKED = -1e9  # an illegal action's logit: finite, so the softmax and entropy stay NaN-free
LOG_EVERY_SECONDS = 60.0  # a progress line with the rollout's statistics at most this often
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


# ====================================================================== the networks
def input_scale(low: np.ndarray, high: np.ndarray) -> torch.Tensor:
    """``1 / max(|low|, |high|)`` per entry: every scaled input lies in [-1, 1] (``training.policy``'s scaling)."""
    return torch.as_tensor(1.0 / np.maximum(np.maximum(np.abs(low), np.abs(high)), 1e-6), dtype=torch.float32)


class Mlp(nn.Module):
    """Scale the input entrywise, hidden layers with an activation, a linear head (orthogonal init as SB3's)."""

    def __init__(self, scale: torch.Tensor, hidden: Sequence[int], outputs: int, activation: str,
                 head_gain: float) -> None:
        super().__init__()
        self.scale: torch.Tensor
        self.register_buffer("scale", scale.clone())
        layers: list[nn.Module] = []
        width = scale.numel()
        for h in hidden:
            layer = nn.Linear(width, h)
            nn.init.orthogonal_(layer.weight, math.sqrt(2))
            nn.init.zeros_(layer.bias)
            layers += [layer, ACTIVATIONS[activation]()]
            width = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, outputs)
        nn.init.orthogonal_(self.head.weight, head_gain)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The head's outputs (float32, also under a bfloat16 autocast) for a batch of raw inputs.

        On a CPU the first layer reads its input as sparse (``sparse_linear``): the same function."""
        first, *rest = self.body
        hidden = sparse_linear(first, x, self.scale)  # type: ignore[arg-type]
        for layer in rest:
            hidden = layer(hidden)
        return self.head(hidden).float()  # type: ignore[no-any-return]

    def linears(self) -> list[nn.Linear]:
        """The hidden layers, then the head."""
        return [m for m in self.body if isinstance(m, nn.Linear)] + [self.head]


def sparse_linear(layer: nn.Linear, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """``layer(x * scale)`` computed from ``x``'s non-zero entries: per row, the sum of the weight columns they
    select, each times its scaled value (``embedding_bag``). An observation has about 4% non-zero entries, so on a CPU this
    is about 2.5x faster than the dense product, forward and backward, for the same function. Dense inputs
    (more than ``SPARSE_SHARE`` non-zero) and other devices use the dense product."""
    if x.device.type != "cpu" or x.shape[0] == 0 or int(torch.count_nonzero(x)) > SPARSE_SHARE * x.numel():
        return layer(x * scale)  # type: ignore[no-any-return]
    rows, cols = x.nonzero(as_tuple=True)
    counts = torch.bincount(rows, minlength=x.shape[0])
    offsets = torch.cat([counts.new_zeros(1), counts.cumsum(0)[:-1]])
    return torch.nn.functional.embedding_bag(cols, _columns(layer.weight), offsets, mode="sum",
                                             per_sample_weights=x[rows, cols] * scale[cols]) + layer.bias


_TRANSPOSED: dict[int, tuple[int, torch.Tensor]] = {}  # id(weight) -> (its version, its transpose)


def _columns(weight: torch.Tensor) -> torch.Tensor:
    """``weight.t()`` as a contiguous tensor; without autograd, kept until the weight changes (a rollout
    makes hundreds of forward passes with the same weights)."""
    if torch.is_grad_enabled() and weight.requires_grad:
        return weight.t().contiguous()
    cached = _TRANSPOSED.get(id(weight))
    if cached is None or cached[0] != weight._version or cached[1].shape != weight.t().shape:
        if len(_TRANSPOSED) > 256:  # weights of networks long gone
            _TRANSPOSED.clear()
        cached = _TRANSPOSED[id(weight)] = (weight._version, weight.detach().t().contiguous())
    return cached[1]


class Actor(Mlp):
    """The policy: public observation -> 80 action logits (exactly ``agents.PPOAgent``'s network)."""

    def __init__(self, max_players: int, hidden: Sequence[int], activation: str) -> None:
        super().__init__(input_scale(*observation_bounds(max_players)), hidden, NUM_ACTIONS, activation, 0.01)
        self.max_players, self.hidden, self.activation = max_players, list(hidden), activation


class Critic(Mlp):
    """The value: the public observation, then (privileged) the hidden cards -> one value."""

    def __init__(self, max_players: int, hidden: Sequence[int], activation: str, privileged: bool) -> None:
        bounds = critic_bounds(max_players) if privileged else observation_bounds(max_players)
        super().__init__(input_scale(*bounds), hidden, 1, activation, 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B,) values."""
        return super().forward(x)[:, 0]


class ActorCritic(nn.Module):
    """The learner's two networks and their Adam (``optimizer``, the attribute ``training.resume`` reads)."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        p, e = config.ppo, config.env
        self.actor = Actor(e.max_players, p.hidden, p.activation)
        self.critic = Critic(e.max_players, p.hidden, p.activation, p.privileged_critic)
        self.optimizer: torch.optim.Optimizer = torch.optim.Adam(self.parameters(), lr=p.learning_rate, eps=1e-5)


def actor_tensors(actor: Actor) -> dict[str, np.ndarray]:
    """The actor in the checkpoint layout of ``agents.ppo_agent`` (``obs_scale``, ``hidden.<i>.*``, ``action.*``)."""
    *hidden, head = actor.linears()
    tensors = {"obs_scale": actor.scale.detach().cpu().numpy()}
    for i, layer in enumerate(hidden):
        tensors[f"hidden.{i}.weight"] = layer.weight.detach().cpu().numpy()
        tensors[f"hidden.{i}.bias"] = layer.bias.detach().cpu().numpy()
    tensors["action.weight"] = head.weight.detach().cpu().numpy()
    tensors["action.bias"] = head.bias.detach().cpu().numpy()
    return tensors


def actor_from_tensors(tensors: dict[str, np.ndarray], metadata: dict[str, Any], device: torch.device) -> Actor:
    """An ``Actor`` holding a checkpoint's tensors (``agents.ppo_agent.read_checkpoint``'s output)."""
    actor = Actor(int(metadata["max_players"]), [int(h) for h in metadata["hidden"]], metadata["activation"])
    load_actor_tensors(actor, tensors)
    return actor.to(device)


def load_actor_tensors(actor: Actor, tensors: dict[str, np.ndarray]) -> None:
    """Copy checkpoint tensors into ``actor`` (the same shapes; ``obs_scale`` included)."""
    *hidden, head = actor.linears()
    with torch.no_grad():
        actor.scale.copy_(torch.as_tensor(tensors["obs_scale"]))
        for i, layer in enumerate(hidden):
            layer.weight.copy_(torch.as_tensor(tensors[f"hidden.{i}.weight"]))
            layer.bias.copy_(torch.as_tensor(tensors[f"hidden.{i}.bias"]))
        head.weight.copy_(torch.as_tensor(tensors["action.weight"]))
        head.bias.copy_(torch.as_tensor(tensors["action.bias"]))


def matmul_precision(config: TrainConfig, device: torch.device) -> Any:
    """The autocast context of ``batched.precision`` (a no-op for float32)."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=config.batched.precision == "bfloat16")


def sample_actions(logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator | None,
                   deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``(actions, log_probs)`` from the masked softmax: argmax, or a Gumbel-max draw from ``generator``."""
    masked = logits.masked_fill(~mask, MASKED)
    log_probs = torch.log_softmax(masked, dim=1)
    if deterministic:
        actions = masked.argmax(1)
    else:
        uniform = torch.rand(masked.shape, generator=generator, device=masked.device).clamp_(1e-20, 1.0)
        actions = (masked - torch.log(-torch.log(uniform))).argmax(1)
    return actions, log_probs.gather(1, actions[:, None])[:, 0]


# ====================================================================== opponents
@dataclass
class Opponent:
    """One kind of opponent: ``actor`` is a network (None: RandomAgent's policy, ``uniform`` or not)."""

    name: str
    actor: Actor | None = None
    deterministic: bool = True
    uniform: bool = False

    def act(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """One legal action per row."""
        if self.actor is not None:
            with torch.no_grad():
                logits = self.actor(observation)
            return sample_actions(logits, mask, generator, self.deterministic)[0]
        legal = mask
        if not self.uniform:  # RandomAgent: a playable card rather than a draw when it holds one
            plays = torch.zeros_like(mask)
            plays[:, :NUM_PLAY_ACTIONS] = mask[:, :NUM_PLAY_ACTIONS]
            prefer = plays.any(1) & mask[:, DRAW]
            legal = torch.where(prefer[:, None], plays, mask)
        noise = torch.rand(mask.shape, generator=generator, device=mask.device)
        return torch.where(legal, noise, -1.0).argmax(1)


def load_opponent(spec: str, config: TrainConfig, device: torch.device, name: str | None = None) -> Opponent:
    """A batched opponent for a baseline spec: ``random``, ``random-uniform``, ``rule`` (``batched.rule``) or a checkpoint."""
    from agents import PPOAgent
    from agents.registry import make_agent

    if spec in ("random", "random-uniform"):
        return Opponent(name or spec, uniform=spec == "random-uniform")
    agent = make_agent(config.batched.rule if spec == "rule" else spec, allow_import=False)
    if not isinstance(agent, PPOAgent):  # pragma: no cover (the config check allows checkpoints only)
        raise ConfigError(f"pool.baselines: {spec!r} is not a network the batched trainer can run")
    if agent.max_players != config.env.max_players:
        raise ConfigError(f"{'batched.rule' if spec == 'rule' else 'pool.baselines'}: {spec} reads max_players "
                          f"{agent.max_players}, this run's env.max_players is {config.env.max_players}")
    return Opponent(name or spec, actor_from_tensors(agent.tensors(), agent.metadata, device).eval())


# ====================================================================== the hidden cards
def privileged_features(tables: Tables, rows: torch.Tensor, seat: torch.Tensor, max_players: int) -> torch.Tensor:
    """``training.critic.privileged_features`` at the tables ``rows`` for ``seat`` (one per row):
    every other hand by offset from the seat, then the next draws one-hot, as float32."""
    n = tables.num_players[rows]
    offsets = torch.arange(1, max_players, device=rows.device)
    other = (seat[:, None] + offsets[None, :]) % n[:, None]
    hands = tables.hands[rows[:, None], other].float()  # (R, M-1, 55)
    hands = hands * offsets[None, :, None].lt(n[:, None, None])
    depth = tables.draw_len[rows][:, None] - 1 - torch.arange(NEXT_DRAWS, device=rows.device)[None, :]
    kinds = tables.draw[rows[:, None], depth.clamp(min=0)].long()
    draws = torch.nn.functional.one_hot(kinds, NUM_KINDS).float() * depth.ge(0)[..., None]
    return torch.cat([hands.flatten(1), draws.flatten(1)], 1)


# ====================================================================== the tables
def table_options(config: TrainConfig, num_tables: int, seed: int) -> dict[str, list[Any]]:
    """Per table: edition, table size and each rule option, drawn uniformly from the config's lists."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3]))
    e = config.env

    def column(values: Any) -> list[Any]:
        values = values if isinstance(values, list) else [values]
        return [values[int(i)] for i in rng.integers(len(values), size=num_tables)]

    options = {"edition": column(e.editions()), "num_players": [int(n) for n in column(e.num_players)]}
    options.update({key: column(value) for key, value in e.rules.items()})
    return options


# ====================================================================== the learner's state
class Learner:
    """The duck type ``training.resume`` and ``training.train.save_checkpoint`` read: ``policy`` (the
    networks, with ``optimizer``), ``num_timesteps``, ``_n_updates``, ``_episode_num``."""

    def __init__(self, config: TrainConfig, device: torch.device) -> None:
        self.policy = ActorCritic(config).to(device)  # (moves the parameters Adam holds, in place)
        self.num_timesteps = 0
        self._n_updates = 0
        self._episode_num = 0


@dataclass
class Rollout:
    """A rollout's learner steps (rows) and, per env step, each table's learner-step slot and reward."""

    observations: torch.Tensor
    hidden: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    size: int = 0

    @classmethod
    def empty(cls, capacity: int, obs_size: int, hidden_size: int, device: torch.device) -> Rollout:
        """Buffers for ``capacity`` learner steps."""
        def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
            return torch.zeros(*shape, dtype=dtype, device=device)

        return cls(zeros(capacity, obs_size), zeros(capacity, hidden_size), zeros(capacity, NUM_ACTIONS, dtype=torch.bool),
                   zeros(capacity, dtype=torch.int64), zeros(capacity), zeros(capacity))

    def add(self, observations: torch.Tensor, hidden: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor,
            log_probs: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Store rows; returns their slots."""
        k = observations.shape[0]
        part = slice(self.size, self.size + k)
        self.observations[part], self.hidden[part], self.masks[part] = observations, hidden, masks
        self.actions[part], self.log_probs[part], self.values[part] = actions, log_probs, values
        self.size += k
        return torch.arange(part.start, part.stop, device=observations.device)


def gae(slots: torch.Tensor, rewards: torch.Tensor, dones: torch.Tensor, bootstraps: torch.Tensor,
        values: torch.Tensor, last_values: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """GAE over each table's learner steps, interleaved with other seats' env steps.

    ``slots`` (T, B): the rollout row of the learner step taken at env step t of table b, or -1;
    ``rewards`` (T, B): the learner's reward from env step t; ``dones`` (T, B): its episode ended at t,
    ``bootstraps`` (T, B) then the value to bootstrap with (0 for an outcome); ``values`` (N,): the
    rows' values; ``last_values`` (B,): the value of each table's position after the last env step.
    Rewards between two learner steps add up undiscounted (the discount is per learner step).
    Returns the (N,) advantages.
    """
    advantages = torch.zeros_like(values)
    next_value = last_values.clone()
    next_advantage = torch.zeros_like(last_values)
    reward = torch.zeros_like(last_values)
    for t in range(slots.shape[0] - 1, -1, -1):
        done = dones[t]
        reward = torch.where(done, rewards[t], reward + rewards[t])
        next_value = torch.where(done, bootstraps[t], next_value)
        next_advantage = torch.where(done, 0.0, next_advantage)
        acted = slots[t].ge(0)
        slot = slots[t].clamp(min=0)
        value = values[slot]
        advantage = reward + gamma * next_value - value + gamma * lam * next_advantage
        advantages[slot[acted]] = advantage[acted]
        next_value = torch.where(acted, value, next_value)
        next_advantage = torch.where(acted, advantage, next_advantage)
        reward = torch.where(acted, 0.0, reward)
    return advantages


# ====================================================================== self-play: tables, seats, pool, rollouts
@dataclass
class Steps:
    """Per env step of a rollout, per table: the learner step's row in the rollout (-1: none), the
    learner's reward, whether its episode ended, and the value to bootstrap an ended episode with."""

    slots: list[torch.Tensor]
    rewards: list[torch.Tensor]
    dones: list[torch.Tensor]
    bootstraps: list[torch.Tensor]


class SelfPlay:
    """The tables, who sits where, the opponent pool, and the rollout (see the module docstring)."""

    def __init__(self, config: TrainConfig, device: torch.device, seed: int, generator: torch.Generator,
                 steps: Callable[[], int]) -> None:
        self.config, self.device, self.generator, self.steps = config, device, generator, steps
        e, b = config.env, config.batched
        options: dict[str, Any] = table_options(config, b.num_tables, config.seed)
        self.env = BatchedUno(b.num_tables, max_players=e.max_players, episode=e.episode, reward=e.reward,
                              max_turns=e.max_turns, device=device, seed=seed % 2**31, **options)
        self.num_tables, self.seats = b.num_tables, self.env.num_seats
        self.num_players = self.env.tables.num_players
        self.obs_size = observation_size(e.max_players)
        self.hidden_size = privileged_size(e.max_players) if config.ppo.privileged_critic else 0
        # The pool: kind ids index ``kinds``; they only grow, and a kind no seat uses any more is dropped.
        self.kinds: dict[int, Opponent] = {}
        self.baseline_ids: list[int] = []
        for spec in config.pool.baselines:
            found = next((i for i, k in self.kinds.items() if k.name == spec), None)
            if found is None:
                found = len(self.kinds)
                self.kinds[found] = load_opponent(spec, config, device)
            self.baseline_ids.append(found)
        self.snapshot_ids: list[int] = []  # the pool's snapshots, oldest first
        self._next_kind = len(self.kinds)
        everyone = torch.ones(self.num_tables, dtype=torch.bool, device=device)
        self.learner_seat = torch.zeros(self.num_tables, dtype=torch.int64, device=device)
        self.seat_kind = torch.zeros(self.num_tables, self.seats, dtype=torch.int64, device=device)
        self.draw_seats(everyone)
        self.state = self.env.reset()
        self._episode_turns = torch.zeros(self.num_tables, device=device)
        self._stats = torch.zeros(4, device=device)  # episodes, learner wins, truncated, decisions
        self._kind_games = torch.zeros(0, device=device)
        self._kind_wins = torch.zeros(0, device=device)

    # ---------------------------------------------------------------- the pool
    def add_snapshot(self, name: str, actor: Actor, limit: int) -> None:
        """A frozen copy of ``actor`` joins the pool as the newest snapshot (the oldest leaves past ``limit``)."""
        frozen = copy.deepcopy(actor).eval().requires_grad_(False)
        self.kinds[self._next_kind] = Opponent(name, frozen, deterministic=self.config.pool.deterministic)
        self.snapshot_ids.append(self._next_kind)
        self._next_kind += 1
        del self.snapshot_ids[:-limit]

    def drop_unused_kinds(self) -> None:
        """Forget kinds out of the pool that no seat plays any more."""
        in_use = set(torch.unique(self.seat_kind).tolist()) | set(self.baseline_ids) | set(self.snapshot_ids)
        for kind_id in [k for k in self.kinds if k not in in_use]:
            del self.kinds[kind_id]

    def _uniform(self, *shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=self.generator, device=self.device)

    def _pick(self, ids: list[int], shape: tuple[int, ...]) -> torch.Tensor:
        """Uniform draws from ``ids``."""
        index = (self._uniform(*shape) * len(ids)).long().clamp(max=len(ids) - 1)
        return torch.tensor(ids, device=self.device)[index]

    def draw_seats(self, m: torch.Tensor) -> None:
        """At the tables ``m`` (a new episode): the learner's seat and every other seat's opponent."""
        pool = self.config.pool
        shape = (self.num_tables, self.seats)
        seat = (self._uniform(self.num_tables) * self.num_players).long().clamp(max=self.num_players - 1)
        kind = self._pick(self.baseline_ids, shape)
        if self.snapshot_ids and self.steps() >= pool.baseline_only_steps:
            older = self._pick(self.snapshot_ids[:-1] or self.snapshot_ids, shape)
            snapshot = torch.where(self._uniform(*shape).lt(pool.latest_share), self.snapshot_ids[-1], older)
            kind = torch.where(self._uniform(*shape).lt(pool.baseline_share), kind, snapshot)
        self.learner_seat = torch.where(m, seat, self.learner_seat)
        self.seat_kind = torch.where(m[:, None], kind, self.seat_kind)

    # ---------------------------------------------------------------- inputs of the critic
    def critic_input(self, observations: torch.Tensor, rows: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """The observations, followed by the hidden cards when the critic is privileged."""
        if not self.hidden_size:
            return observations
        return torch.cat([observations, privileged_features(self.env.tables, rows, seat, self.config.env.max_players)], 1)

    def last_values(self, model: ActorCritic) -> torch.Tensor:
        """(B,) the critic's value of every table's position, from the learner's seat."""
        rows = torch.arange(self.num_tables, device=self.device)
        with torch.no_grad(), matmul_precision(self.config, self.device):
            values: torch.Tensor = model.critic(self.critic_input(self.env.observe(self.learner_seat), rows,
                                                                  self.learner_seat))
        return values

    # ---------------------------------------------------------------- the rollout
    def rollout(self, model: ActorCritic, buffer: Rollout, size: int, stop: StopRequests | None = None) -> Steps | None:
        """Step every table until ``buffer`` holds at least ``size`` learner steps; None if a stop was requested."""
        device = self.device
        buffer.size = 0
        steps = Steps([], [], [], [])
        kinds = max(self.kinds) + 1
        if self._kind_games.numel() < kinds:
            grow = torch.zeros(kinds - self._kind_games.numel(), device=device)
            self._kind_games, self._kind_wins = torch.cat([self._kind_games, grow]), torch.cat([self._kind_wins, grow])
        seat_numbers = torch.arange(self.seats, device=device)[None, :]
        present = seat_numbers.lt(self.num_players[:, None])
        while buffer.size < size:
            if stop is not None and stop.requested:
                return None
            with matmul_precision(self.config, device):
                self._step(model, buffer, steps, kinds, present, seat_numbers)
        return steps

    def _step(self, model: ActorCritic, buffer: Rollout, steps: Steps, kinds: int, present: torch.Tensor,
              seat_numbers: torch.Tensor) -> None:
        """One env step of every table: the learner's rows stored, opponents batched per kind."""
        e = self.config.env
        b = self.num_tables
        device = self.device
        state = self.state
        current, mask, observation = state.current_player, state.action_mask, state.observation
        forced = mask.sum(1).eq(1)
        actions = mask.to(torch.uint8).argmax(1)  # the single legal action where forced
        at_learner = current.eq(self.learner_seat)
        learns = at_learner & ~forced if e.skip_forced else at_learner
        slot = torch.full((b,), -1, dtype=torch.int64, device=device)
        rows = learns.nonzero()[:, 0]
        if rows.numel():
            with torch.no_grad():
                obs_rows, mask_rows = observation[rows], mask[rows]
                chosen, log_prob = sample_actions(model.actor(obs_rows), mask_rows, self.generator)
                critic_rows = self.critic_input(obs_rows, rows, self.learner_seat[rows])
                value = model.critic(critic_rows)
            actions[rows] = chosen
            slot[rows] = buffer.add(obs_rows, critic_rows[:, self.obs_size:], mask_rows, chosen, log_prob, value)
        kind_now = self.seat_kind.gather(1, current[:, None])[:, 0]
        kind_now = torch.where(~at_learner & ~forced, kind_now, -1)
        for kind_id, opponent in self.kinds.items():  # one forward pass per kind of opponent
            their = (kind_now == kind_id).nonzero()[:, 0]
            if their.numel():
                actions[their] = opponent.act(observation[their], mask[their], self.generator)
        truncating = torch.zeros(0, dtype=torch.int64, device=device)
        hidden_before = torch.zeros(0, self.hidden_size, device=device)
        if self.hidden_size and e.truncation_reward == 0:
            truncating = self.env.tables.turns.ge(e.max_turns - 1).nonzero()[:, 0]
            if truncating.numel():
                hidden_before = privileged_features(self.env.tables, truncating, self.learner_seat[truncating],
                                                    e.max_players)
        self.state = state = self.env.step(actions, final_observer=self.learner_seat)
        reward = state.rewards.gather(1, self.learner_seat[:, None])[:, 0] * e.reward_scale
        ended = state.terminated | state.truncated
        bootstrap = torch.zeros(b, device=device)
        if e.truncation_reward != 0:
            reward = torch.where(state.truncated, e.truncation_reward, reward)
        elif state.ended_tables.numel():
            cut = state.truncated[state.ended_tables]
            if bool(cut.any()):
                tables = state.ended_tables[cut]
                final = state.ended_observation[cut]
                if self.hidden_size:
                    where = (truncating[:, None] == tables[None, :]).float().argmax(0)
                    final = torch.cat([final, hidden_before[where]], 1)
                with torch.no_grad():
                    bootstrap[tables] = model.critic(final)
        steps.slots.append(slot)
        steps.rewards.append(reward)
        steps.dones.append(ended)
        steps.bootstraps.append(bootstrap)
        # episode statistics, then new seats where a new episode was dealt
        self._episode_turns += 1
        won = (reward > 0) & state.terminated
        opponent_seats = present & seat_numbers.ne(self.learner_seat[:, None])
        sat = torch.nn.functional.one_hot(self.seat_kind, kinds).mul(opponent_seats[..., None]).amax(1)
        sat = sat.float() * ended[:, None]
        self._kind_games += sat.sum(0)
        self._kind_wins += (sat * won[:, None]).sum(0)
        self._stats += torch.stack([ended.sum(), won.sum(), state.truncated.sum(),
                                    (self._episode_turns * ended).sum()]).float()
        self._episode_turns = torch.where(ended, 0.0, self._episode_turns)
        self.draw_seats(ended)

    def statistics(self) -> dict[str, float]:
        """The episodes ended since the last call: TensorBoard scalars (``episodes/count`` among them)."""
        episodes, wins, truncated, decisions = self._stats.tolist()
        scalars = {"episodes/count": episodes}
        if episodes:
            scalars.update({"rollout/learner_win_rate": wins / episodes, "episodes/length": decisions / episodes,
                            "episodes/truncated_share": truncated / episodes})
        games, won = self._kind_games.tolist(), self._kind_wins.tolist()
        for kind_id, opponent in self.kinds.items():
            if kind_id < len(games) and games[kind_id]:
                scalars[f"pool/win_rate_vs/{opponent.name}"] = won[kind_id] / games[kind_id]
        self._stats.zero_()
        self._kind_games.zero_()
        self._kind_wins.zero_()
        return scalars


# ====================================================================== the run
def run_batched(config: TrainConfig, run_dir: Path, saved: tuple[dict[str, Any], dict[str, Any]] | None,
                stop: StopRequests, show: bool) -> None:
    """Train (or resume) ``config`` into ``run_dir`` (called by ``training.train.train``); raises
    ``TrainingInterrupted`` after a Ctrl-C or SIGTERM, once the checkpoint is written."""
    from agents.ppo_agent import read_checkpoint, write_checkpoint

    from .resume import restore
    from .train import (
        _restore_files,
        _write_config,
        checkpoint_metadata,
        evaluate_checkpoint,
        record_evaluation,
        save_checkpoint,
        snapshot_path,
    )

    p, pool = config.ppo, config.pool
    # ---- seeding: everything random derives from config.seed (a resume reseeds from the seed and the step)
    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    device = torch.device(config.batched.device)
    learner = Learner(config, device)
    model = learner.policy
    if saved is not None:
        state, tensors = saved
        restore(learner, tensors, state, source=str(run_dir / "resume"))
        _write_config(run_dir, config)
        _restore_files(run_dir, state)
        if state["steps"] < config.total_steps:
            if state["steps"] > 0:
                state["resumed_at"].append(int(state["steps"]))
            state["complete"] = False
    else:
        state = {"snapshots": [], "elo": {"learner": 1000.0}, "best": None, "last_eval_step": None, "evals": 0,
                 "steps": 0, "next_snapshot": max(pool.snapshot_every, pool.baseline_only_steps),
                 "next_eval": config.eval.every or config.total_steps, "next_checkpoint": config.checkpoint_every,
                 "resumed_at": [], "imitation": {}, "complete": False}
        if p.init_from:  # the actor starts from a checkpoint's weights; the critic starts fresh
            load_actor_tensors(model.actor, read_checkpoint(p.init_from)[0])
    run_seed = int(np.random.SeedSequence([config.seed, int(state["steps"])]).generate_state(1)[0])
    generator = torch.Generator(device=device).manual_seed(run_seed)
    play = SelfPlay(config, device, run_seed, generator, lambda: learner.num_timesteps)
    for name in state["snapshots"]:
        tensors_, meta_ = read_checkpoint(snapshot_path(run_dir, name))
        play.add_snapshot(name, actor_from_tensors(tensors_, meta_, device), pool.size)

    def export(path: Path) -> None:
        write_checkpoint(path, actor_tensors(model.actor), checkpoint_metadata(config, learner.num_timesteps))

    last_evaluation: dict[str, Any] | None = None

    def save(complete: bool = False) -> None:
        evaluated = state.get("last_eval_step") == learner.num_timesteps
        save_checkpoint(learner, config, run_dir, state, last_evaluation if evaluated else None, complete=complete,
                        export=export)

    writer = None
    if config.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir / "tb"))

    def log_scalars(scalars: dict[str, float]) -> None:
        if writer is not None:
            for key, value in scalars.items():
                writer.add_scalar(key, value, learner.num_timesteps)

    def evaluate(progress: Progress) -> bool:
        """Evaluate ``last`` on CPU with the tournament harness; False if a stop request came."""
        nonlocal last_evaluation
        last = run_dir / "last.safetensors"
        export(last)
        started = time.perf_counter()
        progress.log(f"[eval @ {learner.num_timesteps} steps] {len(config.eval.matchups)} matchups, "
                     f"{config.eval.games} games each")
        try:
            result = evaluate_checkpoint(last, config, log=progress.log, check=stop.check)
        except TrainingInterrupted:
            save()
            return False
        result["eval_seconds"] = round(time.perf_counter() - started, 1)
        log_scalars(record_evaluation(run_dir, state, result, learner.num_timesteps, progress.log))
        last_evaluation = result
        return True

    # ---- the loop: rollout -> advantages -> PPO epochs -> snapshots, evaluation, checkpoints
    rollout_size = p.n_envs * p.n_steps
    buffer = Rollout.empty(rollout_size + config.batched.num_tables, play.obs_size, play.hidden_size, device)
    interrupted = False
    last_line = time.perf_counter()
    if saved is None:
        save()
    with Progress("[train]", config.total_steps, "steps", enabled=show) as progress:
        progress.update(learner.num_timesteps)
        while learner.num_timesteps < config.total_steps:
            started = time.perf_counter()
            steps = play.rollout(model, buffer, rollout_size, stop)
            if steps is None:  # a stop request: the rollout in progress is dropped
                interrupted = True
                break
            n = buffer.size
            with torch.no_grad():
                advantages = gae(torch.stack(steps.slots), torch.stack(steps.rewards), torch.stack(steps.dones),
                                 torch.stack(steps.bootstraps), buffer.values[:n], play.last_values(model),
                                 p.gamma, p.gae_lambda)
                returns = advantages + buffer.values[:n]
            rollout_seconds = time.perf_counter() - started
            learner.num_timesteps += n
            metrics = ppo_update(model, buffer, advantages, returns, n, config, generator,
                                 policy_on=learner.num_timesteps > config.batched.value_warmup_steps)
            learner._n_updates += p.n_epochs
            elapsed = time.perf_counter() - started
            scalars = {**metrics, **play.statistics(), "time/steps_per_second": n / elapsed,
                       "time/rollout_share": rollout_seconds / elapsed, "pool/snapshots": len(state["snapshots"])}
            learner._episode_num += int(scalars["episodes/count"])
            log_scalars(scalars)
            if time.perf_counter() - last_line >= LOG_EVERY_SECONDS:
                last_line = time.perf_counter()
                won = scalars.get("rollout/learner_win_rate")
                won_text = "" if won is None else f"learner won {100 * won:.1f}% of {scalars['episodes/count']:.0f} episodes, "
                progress.log(f"[train] step {learner.num_timesteps:,}: {scalars['time/steps_per_second']:.0f} steps/s, "
                             f"{won_text}entropy {metrics['train/entropy']:.3f}, explained variance "
                             f"{metrics['train/explained_variance']:.2f}")
            # ---- snapshots, evaluation, checkpoints
            steps_now = learner.num_timesteps
            if steps_now >= state["next_snapshot"]:
                if steps_now >= pool.baseline_only_steps:
                    name = f"snap_{steps_now}"
                    path = snapshot_path(run_dir, name)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    export(path)
                    state["snapshots"] = (state["snapshots"] + [name])[-pool.size:]
                    play.add_snapshot(name, model.actor, pool.size)
                state["next_snapshot"] = steps_now + pool.snapshot_every
            play.drop_unused_kinds()
            if config.eval.every and steps_now >= state["next_eval"]:
                if not evaluate(progress):
                    interrupted = True
                    break
                state["next_eval"] = steps_now + config.eval.every
            if steps_now >= state["next_checkpoint"]:
                save()
                state["next_checkpoint"] = steps_now + config.checkpoint_every
            progress.update(steps_now)
        if interrupted:
            if state["steps"] != learner.num_timesteps:
                save()
        else:
            if state.get("last_eval_step") != learner.num_timesteps:
                if state["steps"] != learner.num_timesteps:
                    save()  # a run stopped during its final evaluation resumes with no step lost
                interrupted = not evaluate(progress)
            if not interrupted:
                save(complete=True)
    if writer is not None:
        writer.close()
    if interrupted:
        raise TrainingInterrupted(stop.signum or signal.SIGINT)


def ppo_update(model: ActorCritic, buffer: Rollout, advantages: torch.Tensor, returns: torch.Tensor, n: int,
               config: TrainConfig, generator: torch.Generator, policy_on: bool = True) -> dict[str, float]:
    """``ppo.n_epochs`` passes of SB3's clipped PPO loss over shuffled minibatches; returns the mean statistics."""
    p = config.ppo
    minibatches = max(1, round(n / p.batch_size))
    totals = torch.zeros(6, device=advantages.device)
    count = 0
    for _ in range(p.n_epochs):
        order = torch.randperm(n, generator=generator, device=advantages.device)
        for index in order.chunk(minibatches):
            observations = buffer.observations[index]
            with matmul_precision(config, observations.device):
                logits = model.actor(observations).masked_fill(~buffer.masks[index], MASKED)
                critic_in = torch.cat([observations, buffer.hidden[index]], 1) if p.privileged_critic else observations
                value = model.critic(critic_in)
            log_probs = torch.log_softmax(logits, dim=1)
            new_log_prob = log_probs.gather(1, buffer.actions[index][:, None])[:, 0]
            entropy = -(log_probs.exp() * log_probs).sum(1).mean()
            advantage = advantages[index]
            if advantage.numel() > 1:
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
            log_ratio = new_log_prob - buffer.log_probs[index]
            ratio = log_ratio.exp()
            policy_loss = torch.max(-advantage * ratio,
                                    -advantage * ratio.clamp(1 - p.clip_range, 1 + p.clip_range)).mean()
            value_loss = torch.nn.functional.mse_loss(value, returns[index])
            loss = p.vf_coef * value_loss
            if policy_on:
                loss = loss + policy_loss - p.ent_coef * entropy
            model.optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            nn.utils.clip_grad_norm_(model.parameters(), p.max_grad_norm)
            model.optimizer.step()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                clipped = (ratio - 1).abs().gt(p.clip_range).float().mean()
                totals += torch.stack([policy_loss.detach(), value_loss.detach(), entropy.detach(), approx_kl,
                                       clipped, loss.detach()])
            count += 1
    values = buffer.values[:n]
    variance = returns.var()
    explained = 1 - (returns - values).var() / variance if variance > 0 else torch.zeros(())
    means = (totals / count).tolist()
    return {"train/policy_loss": means[0], "train/value_loss": means[1], "train/entropy": means[2],
            "train/approx_kl": means[3], "train/clip_fraction": means[4], "train/loss": means[5],
            "train/explained_variance": float(explained)}

