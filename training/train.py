"""Self-play PPO training: ``uno-env train --config configs/universal.yaml`` (or ``python -m training.train``).

Reads top to bottom: config -> seeding -> envs -> model -> callback -> learn. The learner is
sb3-contrib's MaskablePPO over ``SingleAgentEnv``; every other seat is drawn per episode
from a pool of baselines and frozen snapshots of the learner (``training.pool``).

A run directory (``runs/<name>`` by default) holds:

* ``config.yaml``: the full config, seed included, as used;
* ``last.safetensors`` and ``best.safetensors`` (+ ``.json``): shareable checkpoints in the
  format of ``agents.ppo_agent`` (``last``: the latest checkpoint or evaluation; ``best``
  maximises the evaluation score), each with the full config and seed in its metadata; the
  ``.json`` card also holds its evaluation (null for a ``last`` not evaluated at its step);
* ``pool/snap_<steps>.safetensors``: the self-play snapshots;
* ``resume/``: ``state.json`` and the safetensors files it names (``training.resume``): what
  ``--resume`` continues from (policy, Adam's state, generator states, counters, the pool,
  ratings, the evaluation schedule). No pickle: SB3's ``model.zip`` is neither written nor read;
* ``evals.jsonl``: one line per evaluation (the training curve: ``python -m training.plot``);
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

**Ctrl-C or SIGTERM** (``training.interrupt``) writes a checkpoint at once (within one PPO
update; an evaluation or the warm start is abandoned on the spot) and prints
``interrupted at step S; resume with: uno-env train --resume runs/<name>``, no traceback; the exit
status is 130 (143 for SIGTERM). Resuming a run stopped before its first checkpoint (during the
warm start) starts it again from its ``config.yaml``.

**Progress** (``training.progress``): every phase longer than a few seconds (recording the
teacher's decisions, fitting them, PPO steps, each evaluation matchup) shows a bar on a
terminal and plain lines otherwise (``--no-progress``: none).

A run stops at exactly ``total_steps`` learner steps (mid-rollout if need be; that partial
rollout is not trained on), so ``--total-steps S`` ends where an interrupted run's resume point
at step S stands, and a resumed run is reproduced by ``uno-env train --config X --total-steps S``
then ``uno-env train --resume runs/<name> --total-steps N`` (``state.json`` lists the
``resumed_at`` steps; ``training.ship`` writes the commands into a shipped checkpoint's config).
A resume from step 0 (stopped right after the warm start) trains what the unbroken run trains.
"""

from __future__ import annotations

import os

# Each process steps envs or runs a small network: extra BLAS/OpenMP threads only contend for
# the cores. Set before numpy/torch start their pools.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict, deque  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from uno_env.files import atomic_write  # noqa: E402

from .config import (  # noqa: E402
    ConfigError,
    TrainConfig,
    check_init_from,
    commented_defaults,
    config_from_dict,
    load_config,
    parse_overrides,
)
from .interrupt import StopRequests, TrainingInterrupted  # noqa: E402
from .progress import Progress  # noqa: E402

__all__ = ["TrainingInterrupted", "evaluate_checkpoint", "main", "save_checkpoint", "train"]

TRAIN_EXTRA = ("yaml", "torch", "stable_baselines3", "sb3_contrib")  # what `pip install "uno-env[train]"` adds
BATCHED_NEEDS = ("yaml", "torch", "safetensors")  # all `trainer: batched` needs (no SB3, PettingZoo, Gymnasium)


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
def _env_factory(config_data: dict[str, Any]) -> Any:
    def make() -> Any:
        import torch

        torch.set_num_threads(1)
        from .pool import make_training_env

        return make_training_env(config_from_dict(config_data, resuming=True))  # checked already; envs read no weights

    return make


def make_vec_env(config: TrainConfig) -> Any:
    """``ppo.n_envs`` training envs in a DummyVecEnv, SubprocVecEnv or ShardedVecEnv (``ppo.vec_env``)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    factories = [_env_factory(config.to_dict()) for _ in range(config.ppo.n_envs)]
    if config.ppo.vec_env == "subproc":
        return SubprocVecEnv(factories, start_method="fork")
    if config.ppo.vec_env == "sharded":
        from .vec_env import ShardedVecEnv

        return ShardedVecEnv(factories, workers=config.ppo.workers)
    return DummyVecEnv(factories)


# ---------------------------------------------------------------------- evaluation
def evaluate_checkpoint(path: str | Path, config: TrainConfig, games: int | None = None,
                        workers: int | None = None, log: Callable[[str], None] | None = None,
                        check: Callable[[], None] | None = None) -> dict[str, Any]:
    """Play the checkpoint against each ``eval.matchups`` lineup through the tournament harness.

    ``log`` receives one line per matchup as it finishes (the progress of a long evaluation);
    ``check`` is called between games (``StopRequests.check``: it raises to abandon the evaluation).
    """
    from agents import PPOAgent
    from agents.tournament import evaluate
    from uno_env.core import Rules, edition_name

    agent = PPOAgent.load(path, label="ppo")
    results = {}
    scores = []
    for i, m in enumerate(config.eval.matchups):
        started = time.perf_counter()
        rules = Rules(edition=edition_name(m.edition), num_players=m.num_players)
        result = evaluate([agent] + [m.opponent] * (m.num_players - 1), rules, games or config.eval.games,
                          labels=["ppo"] + [m.opponent] * (m.num_players - 1), seed=config.eval.seed,
                          workers=workers or config.eval.workers, max_decisions=config.eval.max_decisions,
                          check=check)
        ppo = result.stats()[0]
        key = f"{m.edition}_{m.num_players}p_vs_{m.opponent}"
        results[key] = {"win_rate": ppo.win_rate, "ci_low": ppo.ci_low, "ci_high": ppo.ci_high,
                        "chance": ppo.chance, "games": result.games,
                        "unfinished": result.unfinished, "table": result.to_markdown()}
        scores.append(ppo.win_rate / ppo.chance)
        if log is not None:
            log(f"[eval] {i + 1}/{len(config.eval.matchups)} {key}: {100 * ppo.win_rate:.1f}% of {result.games} "
                f"games ({time.perf_counter() - started:.0f} s)")
    return {"score": float(np.mean(scores)) if scores else 0.0, "matchups": results}


# ---------------------------------------------------------------------- checkpoints
def snapshot_path(run_dir: Path, name: str) -> Path:
    """Where the pool snapshot ``name`` (``snap_<steps>``) lives."""
    return run_dir / "pool" / f"{name}.safetensors"


def _export(model: Any, config: TrainConfig, path: Path) -> None:
    from .policy import export_policy

    export_policy(model.policy, path, checkpoint_metadata(config, model.num_timesteps))


def save_checkpoint(model: Any, config: TrainConfig, run_dir: Path, state: dict[str, Any],
                    evaluation: dict[str, Any] | None = None, complete: bool = False,
                    export: Callable[[Path], None] | None = None) -> None:
    """Export ``last`` (with its card) and write the resume state (``training.resume``) at the model's step.

    ``export(path)`` writes the policy checkpoint (default: the SB3 model's actor)."""
    from .resume import capture, write_resume

    last = run_dir / "last.safetensors"
    if export is None:
        _export(model, config, last)
    else:
        export(last)
    _write_card(run_dir / "last.json", last, evaluation)
    tensors, extra = capture(model)
    state.update(extra, steps=int(model.num_timesteps), complete=complete)
    write_resume(run_dir, state, tensors)


def _restore_files(run_dir: Path, state: dict[str, Any]) -> None:
    """Put the run directory back as it was at the resume state: later evaluations, a later ``best`` and
    later snapshots (from a stretch of the run that was lost) are removed."""
    from .resume import remove_unlisted_snapshots

    evals = run_dir / "evals.jsonl"
    if evals.exists():
        lines = evals.read_text(encoding="utf-8").splitlines(keepends=True)
        if len(lines) != state["evals"]:
            atomic_write(evals, "".join(lines[:state["evals"]]))
    for suffix in (".safetensors", ".json"):
        best = run_dir / f"best{suffix}"
        if state["best"] is None:
            best.unlink(missing_ok=True)
        else:
            saved = (run_dir / "resume" / f"best_{state['best']['steps']}{suffix}").read_bytes()
            if not best.exists() or best.read_bytes() != saved:
                atomic_write(best, saved)
    remove_unlisted_snapshots(run_dir, state["snapshots"])


# ---------------------------------------------------------------------- the callback
def _callback_class() -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class SelfPlayCallback(BaseCallback):
        """Snapshots into the pool, ratings, periodic evaluation, best/last exports, resume state, stop requests."""

        def __init__(self, config: TrainConfig, run_dir: Path, state: dict[str, Any], stop: StopRequests,
                     progress: Progress) -> None:
            super().__init__()
            self.config = config
            self.run_dir = run_dir
            self.state = state
            self.stop = stop
            self.progress = progress
            self.interrupted = False
            self.last_evaluation: dict[str, Any] | None = None
            self.recent: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=500))
            self.lengths: deque[int] = deque(maxlen=500)
            self.truncated: deque[float] = deque(maxlen=500)
            self._last_pool: tuple[list[tuple[str, str]], bool] | None = None

        # -- pool
        def _push_pool(self) -> None:
            self_play = self.num_timesteps >= self.config.pool.baseline_only_steps
            pool = [(name, str(snapshot_path(self.run_dir, name))) for name in self.state["snapshots"]]
            if (pool, self_play) != self._last_pool:
                self.training_env.env_method("set_pool", pool, self_play)
                self._last_pool = (pool, self_play)

        def _on_training_start(self) -> None:
            self._push_pool()
            for key, value in self.state.get("imitation", {}).items():
                self.logger.record(f"imitation/{key}", value)

        def _snapshot(self) -> None:
            name = f"snap_{self.num_timesteps}"
            path = snapshot_path(self.run_dir, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            _export(self.model, self.config, path)
            snaps = self.state["snapshots"]
            snaps.append(name)
            elo = self.state["elo"]
            elo[name] = elo.get("learner", 1000.0)
            while len(snaps) > self.config.pool.size:  # the file goes once the next resume state is written
                old_name = snaps.pop(0)
                elo.pop(old_name, None)
                self.recent.pop(f"vs/{old_name}", None)

        # -- ratings and stats from finished episodes
        def _record(self, outcome: dict[str, Any]) -> None:
            elo = self.state["elo"]
            won = 1.0 if outcome["won"] else 0.0
            self.lengths.append(outcome["length"])
            self.truncated.append(1.0 if outcome["truncated"] else 0.0)
            self.recent[f"table/{outcome['edition']}_{outcome['num_players']}p"].append(won)
            for seat, name in outcome["opponents"].items():
                if name not in elo and name not in self.config.pool.baselines:
                    continue  # a snapshot dropped from the pool while this episode ran
                self.recent[f"vs/{name}"].append(won)
                if outcome["truncated"]:
                    continue
                if outcome["won"]:
                    result = 1.0
                elif seat in outcome["winners"]:
                    result = 0.0
                else:
                    continue
                learner, other = elo.setdefault("learner", 1000.0), elo.setdefault(name, 1000.0)
                expected = 1.0 / (1.0 + 10 ** ((other - learner) / 400.0))
                elo["learner"] = learner + 16.0 * (result - expected)
                elo[name] = other - 16.0 * (result - expected)

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                outcome = info.get("outcome")
                if outcome is not None:
                    self._record(outcome)
            s, c = self.state, self.config
            if self.num_timesteps >= s["next_snapshot"]:
                if self.num_timesteps >= c.pool.baseline_only_steps:
                    self._snapshot()
                s["next_snapshot"] = self.num_timesteps + c.pool.snapshot_every
            self._push_pool()
            if c.eval.every and self.num_timesteps >= s["next_eval"]:
                if not self._evaluate():
                    return False
                s["next_eval"] = self.num_timesteps + c.eval.every
            if self.num_timesteps >= s["next_checkpoint"]:
                self._save_resume()
                s["next_checkpoint"] = self.num_timesteps + c.checkpoint_every
            self.progress.update(self.num_timesteps)
            if self.stop.requested:  # Ctrl-C or SIGTERM: a checkpoint now, then stop
                self._save_resume()
                self.interrupted = True
                return False
            return self.num_timesteps < c.total_steps  # stop at exactly total_steps

        def _on_rollout_end(self) -> None:
            for key, values in self.recent.items():
                if values:
                    self.logger.record(f"pool/win_rate_{key}", float(np.mean(values)))
            for name, rating in self.state["elo"].items():
                self.logger.record(f"pool/elo/{name}", rating)
            if self.lengths:
                self.logger.record("episodes/length", float(np.mean(self.lengths)))
                self.logger.record("episodes/truncated_share", float(np.mean(self.truncated)))
            self.logger.record("pool/snapshots", len(self.state["snapshots"]))

        def _on_training_end(self) -> None:
            if self.interrupted:
                return
            if self.state.get("last_eval_step") != self.num_timesteps:
                if self.state["steps"] != self.num_timesteps:
                    self._save_resume()  # a run stopped during its final evaluation resumes with no step lost
                if not self._evaluate():
                    return
            self._save_resume(complete=True)

        # -- evaluation and resume state
        def _evaluate(self) -> bool:
            """Evaluate ``last`` and record it; False when a stop request interrupted it (a checkpoint is saved)."""
            last = self.run_dir / "last.safetensors"
            _export(self.model, self.config, last)
            started = time.perf_counter()
            self.progress.log(f"[eval @ {self.num_timesteps} steps] {len(self.config.eval.matchups)} matchups, "
                              f"{self.config.eval.games} games each")
            try:  # the games change nothing a checkpoint holds: a stop abandons them at once
                result = evaluate_checkpoint(last, self.config, log=self.progress.log, check=self.stop.check)
            except TrainingInterrupted:
                self._save_resume()  # the evaluation is done again on resume
                self.interrupted = True
                return False
            result["eval_seconds"] = round(time.perf_counter() - started, 1)
            for key, value in record_evaluation(self.run_dir, self.state, result, self.num_timesteps,
                                                self.progress.log).items():
                self.logger.record(key, value)
            self.last_evaluation = result
            self.logger.dump(self.num_timesteps)
            return True

        def _save_resume(self, complete: bool = False) -> None:
            evaluated = self.state.get("last_eval_step") == self.num_timesteps
            save_checkpoint(self.model, self.config, self.run_dir, self.state,
                            self.last_evaluation if evaluated else None, complete=complete)

    return SelfPlayCallback


def record_evaluation(run_dir: Path, state: dict[str, Any], result: dict[str, Any], steps: int,
                      log: Callable[[str], None]) -> dict[str, float]:
    """Record an evaluation of ``last.safetensors`` at ``steps``: a line of ``evals.jsonl``, ``last.json``'s
    card, ``best`` if it beats the best so far (``state`` updated); returns the TensorBoard scalars."""
    result["steps"] = steps
    scalars = {f"eval/{key}/{name}": r[name] for key, r in result["matchups"].items()
               for name in ("win_rate", "ci_low", "ci_high")}
    scalars["eval/score"] = result["score"]
    brief = {k: {f: v[f] for f in ("win_rate", "ci_low", "ci_high", "chance", "games", "unfinished")}
             for k, v in result["matchups"].items()}
    evals = run_dir / "evals.jsonl"
    before = evals.read_text(encoding="utf-8") if evals.exists() else ""
    atomic_write(evals, before + json.dumps({"steps": steps, "score": result["score"], "matchups": brief}) + "\n")
    state["evals"] += 1
    last = run_dir / "last.safetensors"
    _write_card(run_dir / "last.json", last, result)
    best = state["best"]
    if best is None or result["score"] > best["score"]:
        state["best"] = best = {"score": result["score"], "steps": steps}
        atomic_write(run_dir / "best.safetensors", last.read_bytes())
        _write_card(run_dir / "best.json", run_dir / "best.safetensors", result)
    state["last_eval_step"] = steps
    summary = ", ".join(f"{k} {100 * v['win_rate']:.1f}%" for k, v in result["matchups"].items())
    log(f"[eval @ {steps} steps, {result.get('eval_seconds', 0)} s] {summary}; "
        f"score {result['score']:.3f} (best {best['score']:.3f})")
    return scalars


def checkpoint_metadata(config: TrainConfig, steps: int) -> dict[str, Any]:
    """The JSON metadata saved in every exported checkpoint."""
    from uno_env.observation import observation_size

    return {
        "name": config.name, "max_players": config.env.max_players,
        "observation_size": observation_size(config.env.max_players),
        "hidden": list(config.ppo.hidden), "activation": config.ppo.activation,
        "editions": config.env.editions(), "num_players": config.env.table_sizes(),
        "rules": config.env.rules, "episode": config.env.episode, "steps": int(steps), "seed": config.seed,
        "config": config.to_dict(),
    }


def _write_card(path: Path, checkpoint: Path, result: dict[str, Any] | None) -> None:
    """A human-readable JSON card beside a checkpoint: its metadata and evaluation (null if not evaluated)."""
    from agents.ppo_agent import read_checkpoint

    _, meta = read_checkpoint(checkpoint)
    card = {"checkpoint": checkpoint.name, "metadata": meta, "evaluation": result}
    atomic_write(path, json.dumps(card, indent=1))


# ---------------------------------------------------------------------- the run
def build_model(config: TrainConfig, venv: Any, run_dir: Path) -> Any:
    """The MaskablePPO learner ``config`` describes (fresh weights; ``--resume`` then loads its tensors)."""
    from sb3_contrib import MaskablePPO

    from .policy import policy_class, policy_kwargs

    p = config.ppo
    return MaskablePPO(
        policy_class(p.privileged_critic), venv, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
        n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range,
        ent_coef=p.ent_coef, vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
        policy_kwargs=policy_kwargs(p.hidden, p.activation, config.env.max_players, p.privileged_critic),
        tensorboard_log=str(run_dir / "tb") if config.tensorboard else None, seed=config.seed,
        device="cpu", verbose=0,
    )


def train(config: TrainConfig, resume: bool = False, progress_bar: bool | None = None) -> Path:
    """Train (or continue) the run ``config`` describes; returns its directory.

    Raises ``TrainingInterrupted`` (``training.interrupt``) after a Ctrl-C or SIGTERM, once the
    checkpoint is written; ``ResumeError`` for a run directory that cannot be resumed.
    """
    from .resume import read_resume, remove_stale_temporaries

    run_dir = config.output_dir()
    saved = read_resume(run_dir) if resume else None
    if resume:
        remove_stale_temporaries(run_dir)
    if not resume and (run_dir / "resume").exists():
        raise FileExistsError(f"{run_dir} already holds a run; pass --resume to continue it or choose another name")
    if saved is not None and config.total_steps < saved[0]["steps"]:
        raise ConfigError(f"total_steps: {config.total_steps} is below the step this run reached "
                          f"({saved[0]['steps']}); pass --total-steps {saved[0]['steps']} or more")
    if saved is not None and saved[0]["complete"] and config.total_steps == saved[0]["steps"]:
        print(f"{run_dir}: already complete at step {config.total_steps} (--total-steps N extends it)", file=sys.stderr)
        return run_dir
    show = config.progress_bar if progress_bar is None else progress_bar
    if saved is None:
        check_init_from(config)  # a fresh start (also a --resume with nothing saved) reads ppo.init_from
        run_dir.mkdir(parents=True, exist_ok=True)
        _write_config(run_dir, config)  # a resume writes it once its state is loaded: a refused one changes nothing
    with StopRequests() as stop:
        try:
            if config.trainer == "batched":
                from .ppo_batched import run_batched

                run_batched(config, run_dir, saved, stop, show)
            else:
                _run(config, run_dir, saved, stop, show)
        except TrainingInterrupted as stopped:
            state_path = run_dir / "resume" / "state.json"
            stopped.steps = int(json.loads(state_path.read_text(encoding="utf-8"))["steps"]) if state_path.exists() else 0
            stopped.run_dir = run_dir
            raise
    return run_dir


def _run(config: TrainConfig, run_dir: Path, saved: tuple[dict[str, Any], dict[str, Any]] | None,
         stop: StopRequests, show: bool) -> None:
    """The run itself, inside ``train``'s signal handlers; raises TrainingInterrupted."""
    from .resume import restore

    # ---- seeding: everything random in the run derives from config.seed (a resume restores the generators)
    seed_everything(config.seed, config.torch_threads)
    stop.check()  # a stop during setup ends the run at its last checkpoint (a fresh run: none, it starts again)
    venv = make_vec_env(config)
    try:
        stop.check()
        model = build_model(config, venv, run_dir)
        stop.check()
        if saved is not None:
            state, tensors = saved
            restore(model, tensors, state, source=str(run_dir / "resume"))
            _write_config(run_dir, config)
            _restore_files(run_dir, state)
            venv.seed(config.seed + int(state["steps"]))  # fresh episodes, still derived from the seed
            if state["steps"] < config.total_steps:
                if state["steps"] > 0:  # from step 0 (after the warm start) a resume is the unbroken run (tested)
                    state["resumed_at"].append(int(state["steps"]))  # how to reproduce: training.ship
                state["complete"] = False
        else:
            state = {"snapshots": [], "elo": {"learner": 1000.0}, "best": None, "last_eval_step": None, "evals": 0,
                     "steps": 0, "next_snapshot": max(config.pool.snapshot_every, config.pool.baseline_only_steps),
                     "next_eval": config.eval.every or config.total_steps, "next_checkpoint": config.checkpoint_every,
                     "resumed_at": [], "imitation": {}, "complete": False}
            if config.ppo.init_from:  # the actor starts from a checkpoint's weights
                from .policy import load_actor

                load_actor(model.policy, config.ppo.init_from)
            if config.imitation.teacher:  # the warm start (training.imitation), seeded from the run's seed
                from .imitation import imitate

                state["imitation"] = imitate(model.policy, config,
                                             seed=int(np.random.SeedSequence([config.seed, 1]).generate_state(1)[0]),
                                             show_progress=show, check=stop.check)
        if saved is None:  # step 0: an interruption from here on resumes after the warm start
            save_checkpoint(model, config, run_dir, state)
        stop.check()
        with Progress("[train]", config.total_steps, "steps", enabled=show) as progress:
            progress.update(model.num_timesteps)
            callback = _callback_class()(config, run_dir, state, stop, progress)
            model.learn(total_timesteps=config.total_steps - model.num_timesteps, callback=callback,
                        reset_num_timesteps=saved is None, tb_log_name="tb", progress_bar=False)
            if callback.interrupted:
                raise TrainingInterrupted(stop.signum or signal.SIGINT)
    finally:
        venv.close()


def _write_config(run_dir: Path, config: TrainConfig) -> None:
    import yaml

    atomic_write(run_dir / "config.yaml", yaml.safe_dump(config.to_dict(), sort_keys=False))


def _missing_train_extra(modules: tuple[str, ...] = TRAIN_EXTRA) -> str | None:
    """The first of ``modules`` (default: the ``train`` extra) that cannot be imported, if any."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def python_command(module: str) -> str:
    """How to run ``python -m module`` here: ``python`` when that is this interpreter, else its path."""
    found = shutil.which("python")  # (not resolved: a virtual environment's python is a link to the base one)
    python = "python" if found and os.path.abspath(found) == os.path.abspath(sys.executable) else sys.executable
    with contextlib.suppress(ValueError):
        relative = os.path.relpath(sys.executable)
        python = relative if len(relative) < len(python) and python != "python" else python
    return f"{shlex.quote(python)} -m {module}"


def main(argv: list[str] | None = None, prog: str = "uno-env train") -> None:
    """``uno-env train``: train from a YAML config."""
    parser = argparse.ArgumentParser(prog=prog, description="Self-play MaskablePPO training from a config "
                                     "(configs/*.yaml). Ctrl-C writes a checkpoint and prints how to resume.")
    parser.add_argument("--config", help="YAML config (configs/*.yaml)")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its last checkpoint (its saved config.yaml is used; "
                             "--set still applies)")
    parser.add_argument("--run-dir", help="output directory (default runs/<name>)")
    parser.add_argument("--seed", type=int, help="override the config's seed (0 to 2**32 - 1)")
    parser.add_argument("--total-steps", type=int, help="override total_steps (on --resume: extend the run)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override any key, YAML value: --set ppo.n_envs=4 --set env.edition=[classic]")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar or progress lines (evaluation results are still printed)")
    parser.add_argument("--print-default-config", action="store_true",
                        help="print the default config as YAML, each key with a comment saying what it does, and exit")
    args = parser.parse_args(argv)
    try:
        missing = _missing_train_extra(BATCHED_NEEDS)  # the rest of the extra once the config names the trainer
    except KeyboardInterrupt:
        print("interrupted before training started", file=sys.stderr)
        raise SystemExit(130) from None
    if missing is not None:
        print(f"{prog}: training needs the train extra (no module named {missing!r}): "
              f'pip install "uno-env[train]"', file=sys.stderr)
        raise SystemExit(1)
    if args.print_default_config:
        try:
            print("# uno-env train: the default config (every key optional; a config file overrides what it names).")
            print(commented_defaults(), flush=True)
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    if not args.config and not args.resume:
        parser.error("--config or --resume is required")
    from .resume import ResumeError

    run_dir = Path(args.resume or "")
    try:
        overrides = parse_overrides(args.set)
        if args.seed is not None:
            overrides["seed"] = args.seed
        if args.total_steps is not None:
            overrides["total_steps"] = args.total_steps
        if args.run_dir or args.resume:
            overrides["run_dir"] = args.run_dir or args.resume
        source = Path(args.resume) / "config.yaml" if args.resume else Path(args.config)
        config = load_config(source, overrides, resuming=bool(args.resume))
        run_dir = config.output_dir()
        missing = None if config.trainer == "batched" else _missing_train_extra()
        if missing is not None:
            print(f"{prog}: trainer sb3 needs the train extra (no module named {missing!r}): "
                  f'pip install "uno-env[train]" (trainer: batched needs only torch, pyyaml and safetensors)',
                  file=sys.stderr)
            raise SystemExit(1)
        train(config, resume=bool(args.resume), progress_bar=False if args.no_progress else None)
    except TrainingInterrupted as stopped:
        command = f"{prog} --resume {shlex.quote(str(run_dir))}" + (" --no-progress" if args.no_progress else "")
        print(f"interrupted at step {stopped.steps}; resume with: {command}", file=sys.stderr)
        raise SystemExit(stopped.exit_code) from None
    except (ConfigError, ResumeError, FileNotFoundError, FileExistsError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:  # Ctrl-C while loading (training.interrupt's handlers are not installed yet)
        print("interrupted before training started", file=sys.stderr)
        raise SystemExit(130) from None
    written = [name for name in ("best.safetensors", "last.safetensors", "evals.jsonl", "tb") if (run_dir / name).exists()]
    print(f"run complete in {run_dir}: {', '.join(written)}")


if __name__ == "__main__":
    main(prog=python_command("training.train"))
