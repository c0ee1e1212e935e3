"""The SB3 trainer (``trainer: sb3``): ``uno-env train --config configs/universal.yaml`` (``training.cli``).

Reads top to bottom: seeding -> envs -> model -> the trainer -> the schedule. The learner is
sb3-contrib's MaskablePPO over ``SingleAgentEnv``; every other seat is drawn per episode
from a pool of baselines and frozen snapshots of the learner (``training.sb3.pool``). The run
around it (snapshots, evaluations, checkpoints, resume) is ``training.run.schedule``, which drives
``Sb3Trainer.learn_until`` (``model.learn`` to the next event; a thin callback feeds the ratings and
statistics and ends ``learn`` early only for a stop request or ``total_steps``).

A run directory (``runs/<name>`` by default) holds:

* ``config.yaml``: the full config, seed included, as used;
* ``last.safetensors`` and ``best.safetensors`` (+ ``.json``): shareable checkpoints in the
  format of ``agents.ppo_agent`` (``last``: the latest checkpoint or evaluation; ``best``
  maximises the evaluation score), each with the full config and seed in its metadata; the
  ``.json`` card also holds its evaluation (null for a ``last`` not evaluated at its step);
* ``pool/snap_<steps>.safetensors``: the self-play snapshots;
* ``resume/``: ``state.json`` and the safetensors files it names (``training.run.resume``): what
  ``--resume`` continues from (policy, Adam's state, generator states, counters, the pool,
  ratings, the evaluation schedule). No pickle: SB3's ``model.zip`` is neither written nor read;
* ``evals.jsonl``: one line per evaluation (the training curve: ``python -m training.tools.plot``);
* ``tb/``: TensorBoard scalars (``tensorboard --logdir runs``): SB3's losses and rollout
  stats, ``eval/<matchup>/win_rate`` with ``ci_low``/``ci_high``, ``pool/elo/<name>``,
  ``pool/win_rate_vs/<name>``, ``episodes/truncated_share``, ``episodes/length``.

**Crash safety.** Every file but TensorBoard's append-only event files is written to a
temporary file and renamed (``uno_env.files``); a snapshot dropped from the pool is deleted only
once a resume state that no longer lists it is written. A run killed at any moment (``kill -9``
included) resumes with ``--resume``, losing at most the steps since its last checkpoint (every
``checkpoint_every`` steps, after the warm start, before the final evaluation and at the end):
the directory is put back as it was at that checkpoint (later ``evals.jsonl`` lines, a later
``best``, later snapshots removed), and a run killed during its final evaluation does that
evaluation (no step lost). The closing ``run complete in ...`` lists only files that exist.

**Ctrl-C or SIGTERM** (``training.run.interrupt``) writes a checkpoint at once (at the next env step, or
after the update of a rollout that step completes; an evaluation or the warm start is abandoned on the spot) and prints
``interrupted at step S; resume with: uno-env train --resume runs/<name>``, no traceback; the exit
status is 130 (143 for SIGTERM). Resuming a run stopped before its first checkpoint (during the
warm start) starts it again from its ``config.yaml``.

**Progress** (``uno_env.progress``): every phase longer than a few seconds (recording the
teacher's decisions, fitting them, PPO steps, each evaluation matchup) shows a bar on a
terminal and plain lines otherwise (``--no-progress``: none).

Snapshots, evaluations and checkpoints fall at the end of the first rollout at or after their step
(``ppo.n_envs * ppo.n_steps`` learner steps each). A run stops at exactly ``total_steps`` learner steps
(mid-rollout if need be; that partial rollout is not trained on, a rollout that ends there is), so ``--total-steps S`` ends where an interrupted run's resume point
at step S stands, and a resumed run is reproduced by ``uno-env train --config X --total-steps S``
then ``uno-env train --resume runs/<name> --total-steps N`` (``state.json`` lists the
``resumed_at`` steps; ``training.tools.ship`` writes the commands into a shipped checkpoint's config).
A resume from step 0 (stopped right after the warm start) trains what the unbroken run trains.
"""

from __future__ import annotations

import os

# Each process steps envs or runs a small network: extra BLAS/OpenMP threads only contend for
# the cores. Set before numpy/torch start their pools.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import random  # noqa: E402
import sys  # noqa: E402
from collections import defaultdict, deque  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

import numpy as np  # noqa: E402

from training.run.config import TrainConfig, config_from_dict  # noqa: E402
from training.run.interrupt import StopRequests  # noqa: E402
from training.run.launch import Saved, starting_state  # noqa: E402
from training.run.pool import Outcome, update_ratings  # noqa: E402
from training.run.resume import capture, restore  # noqa: E402
from training.run.rundir import export_checkpoint, snapshot_path  # noqa: E402
from training.run.schedule import drive  # noqa: E402
from training.run.state import Counters, JsonObject, RunState  # noqa: E402
from uno_env.progress import Progress  # noqa: E402

if TYPE_CHECKING:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv

__all__ = ["build_model", "make_vec_env", "run_sb3", "seed_everything"]


# ---------------------------------------------------------------------- seeding (the one place)
def seed_everything(seed: int, torch_threads: int) -> list[int]:
    """Seed Python, numpy and torch; returns one seed per env, derived from ``seed``."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(torch_threads)
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(64)]


# ---------------------------------------------------------------------- envs
def _env_factory(config_data: JsonObject) -> Callable[[], Any]:
    def make() -> Any:
        import torch

        torch.set_num_threads(1)
        from training.sb3.pool import make_training_env

        return make_training_env(config_from_dict(config_data, resuming=True))  # checked already; envs read no weights

    return make


def make_vec_env(config: TrainConfig) -> VecEnv:
    """``ppo.n_envs`` training envs in a DummyVecEnv, SubprocVecEnv or ShardedVecEnv (``ppo.vec_env``)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    factories = [_env_factory(config.to_dict()) for _ in range(config.ppo.n_envs)]
    if config.ppo.vec_env == "subproc":
        return SubprocVecEnv(factories, start_method="fork")
    if config.ppo.vec_env == "sharded":
        from training.sb3.vec_env import ShardedVecEnv

        return ShardedVecEnv(factories, workers=config.ppo.workers)
    return DummyVecEnv(factories)


# ---------------------------------------------------------------------- the model
def build_model(config: TrainConfig, venv: VecEnv, run_dir: Path) -> MaskablePPO:
    """The MaskablePPO learner ``config`` describes (fresh weights; ``--resume`` then loads its tensors)."""
    from sb3_contrib import MaskablePPO

    from training.sb3.policy import policy_class, policy_kwargs

    p = config.ppo
    return MaskablePPO(
        policy_class(p.privileged_critic), venv, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
        n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range,
        ent_coef=p.ent_coef, vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
        policy_kwargs=policy_kwargs(p.hidden, p.activation, config.env.max_players, p.privileged_critic),
        tensorboard_log=str(run_dir / "tb") if config.tensorboard else None, seed=config.seed,
        device="cpu", verbose=0,
    )


class Sb3Trainer:
    """``training.run.schedule.Trainer`` over a MaskablePPO model and its envs.

    ``learn_until`` calls ``model.learn`` to the target (``reset_num_timesteps=False``), so SB3 stops at the end
    of the first rollout that reaches it and no collected step is thrown away; only a stop request or
    ``total_steps`` ends a rollout early (that partial rollout is not trained on). The logger is configured once,
    so TensorBoard gets one event stream however many calls a run makes.
    """

    def __init__(self, config: TrainConfig, model: MaskablePPO, run_dir: Path, fresh: bool) -> None:
        from stable_baselines3.common.logger import HumanOutputFormat, Logger
        from stable_baselines3.common.utils import configure_logger

        self.config, self.model, self.run_dir = config, model, run_dir
        self.recent: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=500))
        self._last_pool: tuple[list[tuple[str, str]], bool] | None = None
        self.state = RunState.fresh(config)  # the run's state, set once the run starts (``starting_state``)
        self._imitation_logged = False
        self.stop: StopRequests | None = None  # the current learn_until's, read by the callback
        self.progress: Progress | None = None
        # where SB3's learn(reset_num_timesteps=fresh) would log: tb/tb_<n+1> for a fresh run, tb/tb_<n> on resume.
        # Without TensorBoard, SB3's configure_logger makes an empty SB3-<time> folder in the temp folder on
        # every call; a logger with no folder writes nowhere but the standard output it is given.
        if model.tensorboard_log is not None:
            model.set_logger(configure_logger(model.verbose, model.tensorboard_log, "tb", reset_num_timesteps=fresh))
        else:
            model.set_logger(Logger(None, [HumanOutputFormat(sys.stdout)] if model.verbose >= 1 else []))
        self.callback = _callback(self)

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    def learn_until(self, target: int, stop: StopRequests, progress: Progress) -> None:
        if self.steps >= target:
            return
        self.push_pool()
        if not self._imitation_logged:
            for key, value in self.state.imitation.items():
                self.model.logger.record(f"imitation/{key}", value)
            self._imitation_logged = True
        self.stop, self.progress = stop, progress
        self.model.learn(total_timesteps=target - self.steps, callback=self.callback, reset_num_timesteps=False,
                         tb_log_name="tb", progress_bar=False)

    def export(self, path: Path) -> None:
        from training.sb3.policy import policy_tensors

        export_checkpoint(path, policy_tensors(self.model.policy), self.config, self.steps)

    def tensors(self) -> tuple[dict[str, torch.Tensor], JsonObject]:
        return capture(self.model.policy, self.model.policy.optimizer)

    def counters(self) -> Counters:
        return Counters(n_updates=int(self.model._n_updates), episode_num=int(self.model._episode_num))

    def load(self, tensors: dict[str, torch.Tensor], state: RunState) -> None:
        """Continue from a resume state (SB3's own counters included)."""
        restore(self.model.policy, self.model.policy.optimizer, tensors, state, source=str(self.run_dir / "resume"))
        self.model.num_timesteps = state.steps
        self.model._n_updates = state.counters.n_updates
        self.model._episode_num = state.counters.episode_num

    def add_snapshot(self, name: str, path: Path, dropped: list[str]) -> None:
        for old in dropped:
            self.recent.pop(f"vs/{old}", None)
        self.push_pool()

    def push_pool(self) -> None:
        """Hand the envs the pool's snapshots (and whether self-play has begun), when that changed."""
        self_play = self.steps >= self.config.pool.baseline_only_steps
        pool = [(name, str(snapshot_path(self.run_dir, name))) for name in self.state.snapshots]
        if (pool, self_play) != self._last_pool:
            self.model.get_env().env_method("set_pool", pool, self_play)  # type: ignore[union-attr]
            self._last_pool = (pool, self_play)

    def log_scalars(self, scalars: dict[str, float]) -> None:
        for key, value in scalars.items():
            self.model.logger.record(key, value)
        self.model.logger.dump(self.steps)


def _callback(trainer: Sb3Trainer) -> BaseCallback:
    """The SB3 callback of ``trainer``: episode outcomes to the ratings and statistics, progress, and stopping."""
    from stable_baselines3.common.callbacks import BaseCallback

    class StatisticsCallback(BaseCallback):
        """Feeds finished episodes to the ratings and statistics, reports progress, and ends ``learn`` early only for a
        stop request or at ``total_steps``."""

        def __init__(self) -> None:
            super().__init__()
            self.lengths: deque[int] = deque(maxlen=500)
            self.truncated: deque[float] = deque(maxlen=500)

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                outcome = info.get("outcome")
                if outcome is not None:
                    self._record(outcome)
            if trainer.progress is not None:
                trainer.progress.update(trainer.steps)
            ending = (trainer.stop is not None and trainer.stop.requested) or trainer.steps >= trainer.config.total_steps
            if not ending:
                return True
            # A stop request or total_steps ends learn() at this step (the schedule writes its checkpoint), except
            # that a rollout this step completes is trained on first (a one-step rollout is dropped, as any other).
            return bool(0 < self.locals["n_steps"] == self.locals["n_rollout_steps"] - 1)

        def _record(self, outcome: Outcome) -> None:
            won = 1.0 if outcome["won"] else 0.0
            self.lengths.append(outcome["length"])
            self.truncated.append(1.0 if outcome["truncated"] else 0.0)
            trainer.recent[f"table/{outcome['edition']}_{outcome['num_players']}p"].append(won)
            for name in update_ratings(trainer.state.elo, outcome, trainer.config.pool.baselines):
                trainer.recent[f"vs/{name}"].append(won)

        def _on_rollout_end(self) -> None:
            state = trainer.state
            for key, values in trainer.recent.items():
                if values:
                    self.logger.record(f"pool/win_rate_{key}", float(np.mean(values)))
            for name, rating in state.elo.items():
                self.logger.record(f"pool/elo/{name}", rating)
            if self.lengths:
                self.logger.record("episodes/length", float(np.mean(self.lengths)))
                self.logger.record("episodes/truncated_share", float(np.mean(self.truncated)))
            self.logger.record("pool/snapshots", len(state.snapshots))

    return StatisticsCallback()


# ---------------------------------------------------------------------- the run
def run_sb3(config: TrainConfig, run_dir: Path, saved: Saved | None, stop: StopRequests, show: bool) -> None:
    """Train (or resume) ``config`` into ``run_dir`` (``training.run.launch.launch``'s runner); raises
    ``TrainingInterrupted`` after a Ctrl-C or SIGTERM, once the checkpoint is written."""
    # ---- seeding: everything random in the run derives from config.seed (a resume restores the generators)
    seed_everything(config.seed, config.torch_threads)
    stop.check()  # a stop during setup ends the run at its last checkpoint (a fresh run: none, it starts again)
    venv = make_vec_env(config)
    try:
        stop.check()
        model = build_model(config, venv, run_dir)
        trainer = Sb3Trainer(config, model, run_dir, fresh=saved is None)
        stop.check()
        state = trainer.state = starting_state(config, run_dir, saved, trainer)
        if saved is not None:
            venv.seed(config.seed + state.steps)  # fresh episodes, still derived from the seed
        else:
            if config.ppo.init_from:  # the actor starts from a checkpoint's weights
                from training.sb3.policy import load_actor

                load_actor(model.policy, config.ppo.init_from)
            if config.imitation.teacher:  # the warm start (training.sb3.imitation), seeded from the run's seed
                from training.sb3.imitation import imitate

                state.imitation = imitate(model.policy, config,
                                          seed=int(np.random.SeedSequence([config.seed, 1]).generate_state(1)[0]),
                                          show_progress=show, check=stop.check)
        drive(config, run_dir, state, trainer, stop, show, fresh=saved is None)
    finally:
        venv.close()
