"""On-device self-play PPO over the batched engine: ``uno-env train --config X`` with ``trainer: batched``.

Everything a rollout touches lives on one torch device (``batched.device``): the tables
(``uno_env.batched.BatchedUno``), the learner's actor and critic, every opponent, the
advantages and the updates. Nothing goes through PettingZoo, Gymnasium or SB3, and the module
imports torch, numpy, pyyaml and safetensors only (plus ``agents`` for the CPU evaluation), so
it runs from a working tree on a bare GPU machine.

It reads top to bottom, CleanRL style: the networks; the opponents; the hidden cards for the
privileged critic; the tables (``training.batched.selfplay``); then ``Learner``, whose ``learn_until``
is the loop (rollout -> advantages -> PPO epochs) and ``run_batched``: seeding, set-up (or resume), and the
run's schedule (``training.run.schedule``), which calls ``learn_until`` up to each snapshot, evaluation and
checkpoint.

What a run does, in the terms of ``training.run.config`` (the SB3 trainer's keys mean the same):

* **Tables.** ``batched.num_tables`` tables, each with an edition, table size and rule options
  drawn once from ``env`` (lists are weighted by repeats), so one batch mixes editions and sizes
  for a universal policy. ``env.episode``, ``env.reward``, ``env.max_turns`` as the engine's.
* **Seats.** At every episode start, per table, the learner's seat is drawn uniformly and every
  other seat gets an opponent from the pool by the SB3 trainer's draw rule (``training.run.pool.draw_opponents``):
  a baseline (``pool.baselines``; chance ``pool.baseline_share``, always before the first snapshot and
  for ``pool.baseline_only_steps``), else the newest snapshot (``pool.latest_share``), else an older one
  uniformly. Each env step,
  the seats to act are grouped by who plays them and every group is one forward pass (one per
  opponent kind); ``random`` and ``random-uniform`` are RandomAgent's two policies as tensor
  draws; ``rule`` is played by ``batched.rule``, a network fitted to RuleAgent (RuleAgent is
  Python); snapshots play their argmax when ``pool.deterministic`` else sample.
* **Learner steps.** A learner step is a decision of the learner's seat; with
  ``env.skip_forced`` one with a single legal action is taken inside the rollout and is not a
  step (its rewards go to the step before, as in ``training.sb3.pool.TrainingEnv``). Rewards are the
  engine's for the learner's seat times ``env.reward_scale``; rewards between two learner steps
  (opponents' moves) add up, and the discount ``ppo.gamma`` is per learner step. A truncated
  episode (``env.max_turns``) ends with ``env.truncation_reward`` when that is non-zero, else
  its last step is bootstrapped with the value of its final position seen from the learner's seat
  (the privileged part of that bootstrap is the position before the last decision: the engine
  has dealt the next game when it returns).
* **Privileged critic** (``ppo.privileged_critic``): the critic also reads every other hand and
  the next three cards of the draw pile, read from ``env.tables`` (``privileged_features``: the
  same vector as ``training.run.critic.privileged_features`` of the same position, tested); the
  actor reads the public observation only, and only the actor is exported.
* **Oracle guiding** (``batched.oracle_steps``, Suphx's): the actor also reads the critic's hidden cards,
  each entry kept with a chance of 1 until ``batched.oracle_decay_from``, falling linearly to 0 at
  ``oracle_steps`` (``selfplay.oracle_keep``; the entries it read are stored with the step, so the update
  replays them); past that it reads zeros there. Exports and the pool's snapshots are its ``fair_actor``
  (the public columns only: the same function with the hidden cards zeroed), so evaluation and self-play
  opponents never see a hidden card.
* **Updates.** A rollout steps every table until at least ``ppo.n_envs * ppo.n_steps`` learner
  steps are stored (one env step adds up to one per table, so it overshoots by less than
  ``batched.num_tables``); GAE(``ppo.gae_lambda``) over each table's learner steps, bootstrapped at
  the rollout's end from the value of the learner's seat; then ``ppo.n_epochs`` passes of
  shuffled minibatches of about ``ppo.batch_size``: SB3's clipped PPO loss (advantages normalised
  per minibatch, unclipped value loss, entropy bonus, gradient clipping, Adam with eps 1e-5,
  orthogonal initialisation), so the settings of a config mean what they mean for MaskablePPO.
  ``batched.value_warmup_steps``: the first learner steps train the critic only.
* **Stopping.** A run stops after the update that reaches ``total_steps`` (so it may pass it by
  less than one rollout); snapshots, evaluations and checkpoints fall on update boundaries (the first
  at or after their step).

Outputs are the SB3 trainer's (``training.cli``'s docstring): ``config.yaml``, ``last`` and
``best`` checkpoints in the ``agents.ppo_agent`` format with their cards, ``pool/snap_<steps>``,
``resume/`` (``training.run.resume``: safetensors + JSON, no pickle), ``evals.jsonl`` (periodic
evaluation of ``last`` with the tournament harness on CPU against the real RuleAgent and
RandomAgent, ``eval.matchups``, Wilson intervals; ``best`` maximises its score) and ``tb/``
(TensorBoard: ``train/*`` losses, ``rollout/*``, ``episodes/*``, ``pool/win_rate_vs/<name>``,
``pool/win_rate_table/<edition>_<n>p``, ``pool/elo/<name>`` (the pool's ratings, updated once per rollout),
``eval/*``, ``time/steps_per_second``; docs/training.md lists them beside the SB3 trainer's). Ctrl-C or SIGTERM stops at the next env step with a
checkpoint of the last update (the rollout in progress is dropped). ``--resume`` continues from
the last checkpoint with fresh tables (seeded from the seed and the step, as the SB3 trainer's
envs are), so an unbroken run and a resumed one differ after the resume point; a fixed seed
reproduces a run on the same device (tested).

Why it is built this way (TorchRL not used, sparse first layers on a CPU, float32 by default) and
what was measured: ``docs/speed.md`` ("The batched trainer's design choices") and ``docs/training.md``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from training.batched.networks import (
    MASKED,
    ActorCritic,
    actor_from_tensors,
    actor_tensors,
    load_actor_tensors,
    matmul_precision,
)
from training.batched.selfplay import Rollout, SelfPlay, oracle_keep
from training.run.config import TrainConfig
from training.run.interrupt import StopRequests
from training.run.launch import Saved, starting_state
from training.run.resume import capture, restore
from training.run.rundir import export_checkpoint, snapshot_path
from training.run.schedule import drive
from training.run.state import Counters, JsonObject, RunState
from uno_env.progress import Progress

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

LOG_EVERY_SECONDS = 60.0  # a progress line with the rollout's statistics at most this often


# ====================================================================== the learner
class Learner:
    """``training.run.schedule.Trainer`` over the batched trainer's networks, optimizer and self-play tables.

    ``learn_until`` runs rollout -> advantages -> PPO epochs until the step count reaches its target; a stop
    request drops the rollout in progress.
    """

    def __init__(self, config: TrainConfig, device: torch.device, run_dir: Path) -> None:
        self.config, self.run_dir, self.device = config, run_dir, device
        self.model = ActorCritic(config).to(device)  # (moves the parameters Adam holds, in place)
        self.num_timesteps = 0
        self.updates = 0
        self.episodes = 0
        self.play: SelfPlay | None = None
        self.generator: torch.Generator | None = None
        self.buffer: Rollout | None = None
        self.writer: SummaryWriter | None = None
        self._last_line = time.perf_counter()
        self.elo: dict[str, float] = {}

    def start(self, state: RunState) -> None:
        """Set up the tables and the pool for a run at ``state``: seeded from the seed and the step, snapshots
        read back from the run directory."""
        from agents.ppo_agent import read_checkpoint

        config, device = self.config, self.device
        self.elo = state.elo  # the run's ratings (the schedule's RunState): updated once per rollout
        run_seed = int(np.random.SeedSequence([config.seed, state.steps]).generate_state(1)[0])
        self.generator = torch.Generator(device=device).manual_seed(run_seed)
        play = self.play = SelfPlay(config, device, run_seed, self.generator, lambda: self.num_timesteps)
        for name in state.snapshots:
            tensors, meta = read_checkpoint(snapshot_path(self.run_dir, name))
            play.add_snapshot(name, actor_from_tensors(tensors, meta, device), config.pool.size)
        self.buffer = play.new_buffer(config.ppo.n_envs * config.ppo.n_steps)
        if config.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.run_dir / "tb"))

    def close(self) -> None:
        """Flush and close TensorBoard's writer."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    @property
    def steps(self) -> int:
        return self.num_timesteps

    def learn_until(self, target: int, stop: StopRequests, progress: Progress) -> None:
        assert self.play is not None and self.generator is not None and self.buffer is not None, "start() first"
        p, play, model, buffer = self.config.ppo, self.play, self.model, self.buffer
        while self.num_timesteps < target:
            play.drop_unused_kinds()
            started = time.perf_counter()
            steps = play.rollout(model, buffer, p.n_envs * p.n_steps, stop)
            if steps is None:  # a stop request: the rollout in progress is dropped
                return
            n = buffer.size
            with torch.no_grad():
                advantages = gae(torch.stack(steps.slots), torch.stack(steps.rewards), torch.stack(steps.dones),
                                 torch.stack(steps.bootstraps), buffer.values[:n], play.last_values(model),
                                 p.gamma, p.gae_lambda)
                returns = advantages + buffer.values[:n]
            rollout_seconds = time.perf_counter() - started
            self.num_timesteps += n
            metrics = ppo_update(model, buffer, advantages, returns, n, self.config, self.generator,
                                 policy_on=self.num_timesteps > self.config.batched.value_warmup_steps)
            self.updates += p.n_epochs
            elapsed = time.perf_counter() - started
            scalars = {**metrics, **play.statistics(), **play.rate(self.elo), "time/steps_per_second": n / elapsed,
                       "time/rollout_share": rollout_seconds / elapsed, "pool/snapshots": len(play.snapshot_ids),
                       "train/learning_rate": p.learning_rate, "train/clip_range": p.clip_range}
            if self.config.batched.oracle_steps:
                scalars["train/oracle_keep"] = oracle_keep(self.config.batched, self.num_timesteps - n)
            self.episodes += int(scalars["episodes/count"])
            self.log_scalars(scalars)
            progress.update(self.num_timesteps)
            if time.perf_counter() - self._last_line >= LOG_EVERY_SECONDS:
                self._last_line = time.perf_counter()
                progress.log(_line(self.num_timesteps, scalars))

    def export(self, path: Path) -> None:
        export_checkpoint(path, actor_tensors(self.model.actor), self.config, self.num_timesteps)

    def tensors(self) -> tuple[dict[str, torch.Tensor], JsonObject]:
        return capture(self.model, self.model.optimizer)

    def counters(self) -> Counters:
        return Counters(n_updates=self.updates, episode_num=self.episodes)

    def load(self, tensors: dict[str, torch.Tensor], state: RunState) -> None:
        """Continue from a resume state."""
        restore(self.model, self.model.optimizer, tensors, state, source=str(self.run_dir / "resume"))
        self.num_timesteps = state.steps
        self.updates, self.episodes = state.counters.n_updates, state.counters.episode_num

    def add_snapshot(self, name: str, path: Path, dropped: list[str]) -> None:
        assert self.play is not None, "start() first"
        self.play.add_snapshot(name, self.model.actor, self.config.pool.size)

    def log_scalars(self, scalars: dict[str, float]) -> None:
        if self.writer is not None:
            for key, value in scalars.items():
                self.writer.add_scalar(key, value, self.num_timesteps)


def _line(steps: int, scalars: dict[str, float]) -> str:
    """The progress line with a rollout's statistics."""
    won = scalars.get("rollout/learner_win_rate")
    won_text = "" if won is None else f"learner won {100 * won:.1f}% of {scalars['episodes/count']:.0f} episodes, "
    return (f"[train] step {steps:,}: {scalars['time/steps_per_second']:.0f} steps/s, {won_text}entropy "
            f"{scalars['train/entropy']:.3f}, explained variance {scalars['train/explained_variance']:.2f}")


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


# ====================================================================== the run
def run_batched(config: TrainConfig, run_dir: Path, saved: Saved | None, stop: StopRequests, show: bool) -> None:
    """Train (or resume) ``config`` into ``run_dir`` (``training.run.launch.launch``'s runner); raises
    ``TrainingInterrupted`` after a Ctrl-C or SIGTERM, once the checkpoint is written."""
    from agents.ppo_agent import read_checkpoint

    # ---- seeding: everything random derives from config.seed (a resume reseeds from the seed and the step)
    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    learner = Learner(config, torch.device(config.batched.device), run_dir)
    state = starting_state(config, run_dir, saved, learner)
    if saved is None and config.ppo.init_from:  # the actor starts from a checkpoint's weights; the critic starts fresh
        load_actor_tensors(learner.model.actor, read_checkpoint(config.ppo.init_from)[0])
    learner.start(state)
    # ---- the loop (training.run.schedule): rollouts and updates to the next event, then the event
    try:
        drive(config, run_dir, state, learner, stop, show, fresh=saved is None)
    finally:
        learner.close()


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
                actor_in = torch.cat([observations, buffer.oracle[index]], 1) if model.actor.oracle else observations
                logits = model.actor(actor_in).masked_fill(~buffer.masks[index], MASKED)
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

