"""Self-play on the batched engine: the opponents, the hidden cards for the privileged critic (and the
oracle-guided actor), the tables, who sits where (the pool's draw rule) and the rollout."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from training.batched.networks import (
    Actor,
    ActorCritic,
    actor_from_tensors,
    fair_actor,
    matmul_precision,
    sample_actions,
)
from training.run.config import BatchedConfig, ConfigError, TrainConfig
from training.run.critic import NEXT_DRAWS, privileged_size
from training.run.interrupt import StopRequests
from training.run.pool import Result, draw_opponents, update_ratings
from uno_env.batched import BatchedUno
from uno_env.batched.tables import Tables
from uno_env.core.actions import DRAW, NUM_ACTIONS, NUM_PLAY_ACTIONS
from uno_env.core.cards import NUM_KINDS
from uno_env.observation import observation_size


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
    """``training.run.critic.privileged_features`` at the tables ``rows`` for ``seat`` (one per row):
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


def oracle_keep(batched: BatchedConfig, steps: int) -> float:
    """The chance that each of the oracle's entries reaches the actor at learner step ``steps``
    (``batched.oracle_steps``): 1 until ``oracle_decay_from``, then falling linearly to 0 at ``oracle_steps``."""
    end, start = batched.oracle_steps, batched.oracle_decay_from  # the config keeps start <= end
    if steps >= end:
        return 0.0
    if steps < start:
        return 1.0
    return 1.0 - (steps - start) / (end - start)


@dataclass
class Rollout:
    """A rollout's learner steps (rows) and, per env step, each table's learner-step slot and reward.
    ``hidden``: the privileged critic's hidden cards; ``oracle``: what of them the actor read (zero columns
    unless oracle-guided)."""

    observations: torch.Tensor
    hidden: torch.Tensor
    oracle: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    size: int = 0

    @classmethod
    def empty(cls, capacity: int, obs_size: int, hidden_size: int, device: torch.device, oracle: bool = False) -> Rollout:
        """Buffers for ``capacity`` learner steps."""
        def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
            return torch.zeros(*shape, dtype=dtype, device=device)

        return cls(zeros(capacity, obs_size), zeros(capacity, hidden_size), zeros(capacity, hidden_size if oracle else 0),
                   zeros(capacity, NUM_ACTIONS, dtype=torch.bool),
                   zeros(capacity, dtype=torch.int64), zeros(capacity), zeros(capacity))

    def add(self, observations: torch.Tensor, hidden: torch.Tensor, oracle: torch.Tensor, masks: torch.Tensor,
            actions: torch.Tensor, log_probs: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Store rows; returns their slots."""
        k = observations.shape[0]
        part = slice(self.size, self.size + k)
        self.observations[part], self.hidden[part], self.masks[part] = observations, hidden, masks
        self.oracle[part] = oracle
        self.actions[part], self.log_probs[part], self.values[part] = actions, log_probs, values
        self.size += k
        return torch.arange(part.start, part.stop, device=observations.device)



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
        # per table's edition and size (``pool/win_rate_table/<edition>_<n>p``, as the SB3 trainer logs)
        labels = [f"{edition}_{n}p" for edition, n in zip(options["edition"], options["num_players"], strict=True)]
        self.table_labels = sorted(set(labels))
        self._table_label = torch.tensor([self.table_labels.index(label) for label in labels], device=device)
        self._label_games = torch.zeros(len(self.table_labels), device=device)
        self._label_wins = torch.zeros(len(self.table_labels), device=device)
        self._ended: list[torch.Tensor] = []  # per env step with ended episodes: who sat where, who won (``rate``)

    # ---------------------------------------------------------------- the pool
    def add_snapshot(self, name: str, actor: Actor, limit: int) -> None:
        """A frozen copy of ``actor`` (an oracle-guided one's ``fair_actor``) joins the pool as the newest snapshot
        (the oldest leaves past ``limit``)."""
        frozen = copy.deepcopy(fair_actor(actor)).eval().requires_grad_(False)
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

    def draw_seats(self, m: torch.Tensor) -> None:
        """At the tables ``m`` (a new episode): the learner's seat, and every other seat's opponent by the pool's
        draw rule (``training.run.pool.draw_opponents``, three uniforms per seat)."""
        pool = self.config.pool
        seat = (self._uniform(self.num_tables) * self.num_players).long().clamp(max=self.num_players - 1)
        snapshots = len(self.snapshot_ids) if self.steps() >= pool.baseline_only_steps else 0
        member = draw_opponents(self._uniform(self.num_tables, self.seats, 3), len(self.baseline_ids), snapshots,
                                pool.baseline_share, pool.latest_share)
        kind = torch.tensor(self.baseline_ids + self.snapshot_ids, device=self.device)[member.long()]
        self.learner_seat = torch.where(m, seat, self.learner_seat)
        self.seat_kind = torch.where(m[:, None], kind, self.seat_kind)

    def new_buffer(self, size: int) -> Rollout:
        """A rollout buffer for ``size`` learner steps and the overshoot of one env step (a row per table)."""
        return Rollout.empty(size + self.num_tables, self.obs_size, self.hidden_size, self.device,
                             oracle=self.config.batched.oracle_steps > 0)

    # ---------------------------------------------------------------- inputs of the critic
    def critic_input(self, observations: torch.Tensor, rows: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """The observations, followed by the hidden cards when the critic is privileged."""
        if not self.hidden_size:
            return observations
        return torch.cat([observations, privileged_features(self.env.tables, rows, seat, self.config.env.max_players)], 1)

    def actor_input(self, critic_rows: torch.Tensor) -> torch.Tensor:
        """The learner's actor input from its critic's: the observations, then for an oracle-guided actor the hidden
        cards, each entry kept with the chance ``oracle_keep`` gives now (else zero)."""
        if not self.config.batched.oracle_steps:
            return critic_rows[:, :self.obs_size]
        observations, hidden = critic_rows[:, :self.obs_size], critic_rows[:, self.obs_size:]
        keep = oracle_keep(self.config.batched, self.steps())
        if keep <= 0:
            hidden = torch.zeros_like(hidden)
        elif keep < 1:
            hidden = hidden * torch.rand(hidden.shape, generator=self.generator, device=hidden.device).lt(keep)
        return torch.cat([observations, hidden], 1)

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
                critic_rows = self.critic_input(obs_rows, rows, self.learner_seat[rows])
                actor_rows = self.actor_input(critic_rows)
                chosen, log_prob = sample_actions(model.actor(actor_rows), mask_rows, self.generator)
                value = model.critic(critic_rows)
            actions[rows] = chosen
            slot[rows] = buffer.add(obs_rows, critic_rows[:, self.obs_size:], actor_rows[:, self.obs_size:], mask_rows,
                                    chosen, log_prob, value)
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
        self._label_games.index_add_(0, self._table_label, ended.float())
        self._label_wins.index_add_(0, self._table_label, won.float())
        self._stats += torch.stack([ended.sum(), won.sum(), state.truncated.sum(),
                                    (self._episode_turns * ended).sum()]).float()
        self._episode_turns = torch.where(ended, 0.0, self._episode_turns)
        if state.ended_tables.numel():
            t = state.ended_tables  # columns: learner seat, seat kinds, winners, truncated, table size
            winners = state.rewards[t, :self.seats].gt(0) & state.terminated[t, None]
            self._ended.append(torch.cat([self.learner_seat[t, None], self.seat_kind[t], winners.long(),
                                          state.truncated[t, None].long(), self.num_players[t, None]], 1))
        self.draw_seats(ended)

    def rate(self, elo: dict[str, float]) -> dict[str, float]:
        """Update the ratings ``elo`` from the episodes ended since the last call, in the order they ended, by the
        SB3 trainer's rule (``training.run.pool.update_ratings``); returns the ``pool/elo/<name>`` scalars.

        A seat won when its reward was positive as its episode ended: with ``env.reward: win`` the round's
        winner (``episode: round``) or the game's winners (``game``), partners sharing a win; with ``score``
        the seats the engine paid for the last round."""
        s = self.seats
        for row in torch.cat(self._ended).tolist() if self._ended else []:
            seat, kinds, winners, truncated, n = row[0], row[1:1 + s], row[1 + s:1 + 2 * s], row[1 + 2 * s], row[-1]
            opponents = {other: self.kinds[kind].name for other, kind in enumerate(kinds[:n])
                         if other != seat and kind in self.kinds}  # a kind gone from the pool: a dropped snapshot
            update_ratings(elo, Result(won=bool(winners[seat]), truncated=bool(truncated), opponents=opponents,
                                       winners=[w for w in range(n) if winners[w]]), self.config.pool.baselines)
        self._ended = []
        return {f"pool/elo/{name}": rating for name, rating in elo.items()}

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
        for label, played, won_there in zip(self.table_labels, self._label_games.tolist(), self._label_wins.tolist(),
                                            strict=True):
            if played:
                scalars[f"pool/win_rate_table/{label}"] = won_there / played
        self._stats.zero_()
        self._label_games.zero_()
        self._label_wins.zero_()
        self._kind_games.zero_()
        self._kind_wins.zero_()
        return scalars


