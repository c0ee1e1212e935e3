"""Self-play PPO training: ``uno-env train --config configs/universal.yaml`` (or ``python -m training.train``).

Reads top to bottom: config -> seeding -> envs -> model -> callback -> learn. The learner is
sb3-contrib's MaskablePPO over ``SingleAgentEnv``; every other seat is drawn per episode
from a pool of baselines and frozen snapshots of the learner (``training.pool``).

A run directory (``runs/<name>`` by default) holds:

* ``config.yaml``: the full config, seed included, as used;
* ``last.safetensors`` and ``best.safetensors`` (+ ``.json``): shareable checkpoints in the
  format of ``agents.ppo_agent`` (``best`` maximises the evaluation score), each with the full
  config and seed in its metadata; ``best.json`` also holds its evaluation;
* ``pool/snap_<steps>.safetensors``: the self-play snapshots;
* ``resume/model.zip`` + ``resume/state.json``: what ``--resume`` continues from (SB3's
  model with its optimizer, the pool, ratings, counters);
* ``evals.jsonl``: one line per evaluation (the training curve: ``python -m training.plot``);
* ``tb/``: TensorBoard scalars (``tensorboard --logdir runs``): SB3's losses and rollout
  stats, ``eval/<matchup>/win_rate`` with ``ci_low``/``ci_high``, ``pool/elo/<name>``,
  ``pool/win_rate_vs/<name>``, ``episodes/truncated_share``, ``episodes/length``.

A run stops at exactly ``total_steps`` learner steps (mid-rollout if need be; that partial
rollout is not trained on), so ``--total-steps S`` ends where an interrupted run's resume point
at step S stands, and a resumed run is reproduced by ``uno-env train --config X --total-steps S``
then ``uno-env train --resume runs/<name> --total-steps N`` (``state.json`` lists the
``resumed_at`` steps; ``training.ship`` writes the commands into a shipped checkpoint's config).
"""

from __future__ import annotations

import os

# Each process steps envs or runs a small network: extra BLAS/OpenMP threads only contend for
# the cores. Set before numpy/torch start their pools.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict, deque  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from .config import ConfigError, TrainConfig, config_from_dict, load_config  # noqa: E402

__all__ = ["evaluate_checkpoint", "main", "train"]


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

        return make_training_env(config_from_dict(config_data))

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
                        workers: int | None = None) -> dict[str, Any]:
    """Play the checkpoint against each ``eval.matchups`` lineup through the tournament harness."""
    from agents import PPOAgent
    from agents.tournament import evaluate
    from uno_env.core import Rules

    agent = PPOAgent.load(path, label="ppo")
    results = {}
    scores = []
    for m in config.eval.matchups:
        rules = Rules(edition=m.edition, num_players=m.num_players)
        result = evaluate([agent] + [m.opponent] * (m.num_players - 1), rules, games or config.eval.games,
                          labels=["ppo"] + [m.opponent] * (m.num_players - 1), seed=config.eval.seed,
                          workers=workers or config.eval.workers, max_decisions=config.eval.max_decisions)
        ppo = result.stats()[0]
        key = f"{m.edition}_{m.num_players}p_vs_{m.opponent}"
        results[key] = {"win_rate": ppo.win_rate, "ci_low": ppo.ci_low, "ci_high": ppo.ci_high,
                        "chance": ppo.chance, "games": result.games,
                        "unfinished": result.unfinished, "table": result.to_markdown()}
        scores.append(ppo.win_rate / ppo.chance)
    return {"score": float(np.mean(scores)) if scores else 0.0, "matchups": results}


# ---------------------------------------------------------------------- the callback
def _callback_class() -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class SelfPlayCallback(BaseCallback):  # type: ignore[misc]
        """Snapshots into the pool, ratings, periodic evaluation, best/last exports and resume state."""

        def __init__(self, config: TrainConfig, run_dir: Path, state: dict[str, Any]) -> None:
            super().__init__()
            self.config = config
            self.run_dir = run_dir
            self.state = state
            self.recent: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=500))
            self.lengths: deque[int] = deque(maxlen=500)
            self.truncated: deque[float] = deque(maxlen=500)
            self._last_pool: list[Any] | None = None

        # -- pool
        def _push_pool(self) -> None:
            c = self.config.pool
            self_play = self.num_timesteps >= c.baseline_only_steps
            pool = [list(s) for s in self.state["snapshots"]]
            if (pool, self_play) != self._last_pool:
                self.training_env.env_method("set_pool", [tuple(s) for s in pool], self_play)
                self._last_pool = (pool, self_play)

        def _on_training_start(self) -> None:
            self._push_pool()
            for key, value in self.state.get("imitation", {}).items():
                self.logger.record(f"imitation/{key}", value)

        def _snapshot(self) -> None:
            name = f"snap_{self.num_timesteps}"
            path = self.run_dir / "pool" / f"{name}.safetensors"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._export(path)
            snaps = self.state["snapshots"]
            snaps.append([name, str(path)])
            elo = self.state["elo"]
            elo[name] = elo.get("learner", 1000.0)
            while len(snaps) > self.config.pool.size:
                old_name, old_path = snaps.pop(0)
                elo.pop(old_name, None)
                self.recent.pop(f"vs/{old_name}", None)
                Path(old_path).unlink(missing_ok=True)

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
                self._evaluate()
                s["next_eval"] = self.num_timesteps + c.eval.every
            if self.num_timesteps >= s["next_checkpoint"]:
                self._save_resume()
                s["next_checkpoint"] = self.num_timesteps + c.checkpoint_every
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
            self._evaluate()
            self._save_resume()

        # -- exports, evaluation, resume
        def _export(self, path: Path) -> None:
            from .policy import export_policy

            export_policy(self.model.policy, path, checkpoint_metadata(self.config, self.num_timesteps))

        def _evaluate(self) -> None:
            if self.state.get("last_eval_step") == self.num_timesteps:
                return
            last = self.run_dir / "last.safetensors"
            self._export(last)
            started = time.perf_counter()
            result = evaluate_checkpoint(last, self.config)
            result["steps"] = self.num_timesteps
            result["eval_seconds"] = round(time.perf_counter() - started, 1)
            for key, r in result["matchups"].items():
                for field_name in ("win_rate", "ci_low", "ci_high"):
                    self.logger.record(f"eval/{key}/{field_name}", r[field_name])
            self.logger.record("eval/score", result["score"])
            brief = {k: {f: v[f] for f in ("win_rate", "ci_low", "ci_high", "chance", "games", "unfinished")}
                     for k, v in result["matchups"].items()}
            with open(self.run_dir / "evals.jsonl", "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"steps": self.num_timesteps, "score": result["score"],
                                         "matchups": brief}) + "\n")
            _write_card(self.run_dir / "last.json", last, result)
            if result["score"] > self.state["best_score"]:
                self.state["best_score"] = result["score"]
                shutil.copyfile(last, self.run_dir / "best.safetensors.tmp")
                os.replace(self.run_dir / "best.safetensors.tmp", self.run_dir / "best.safetensors")
                _write_card(self.run_dir / "best.json", self.run_dir / "best.safetensors", result)
            self.state["last_eval_step"] = self.num_timesteps
            summary = ", ".join(f"{k} {100 * v['win_rate']:.1f}%" for k, v in result["matchups"].items())
            print(f"[eval @ {self.num_timesteps} steps, {result['eval_seconds']} s] {summary}; "
                  f"score {result['score']:.3f} (best {self.state['best_score']:.3f})", file=sys.stderr, flush=True)
            self.logger.dump(self.num_timesteps)

        def _save_resume(self) -> None:
            resume = self.run_dir / "resume"
            resume.mkdir(parents=True, exist_ok=True)
            self.model.save(resume / "model.zip.tmp")
            os.replace(resume / "model.zip.tmp.zip" if (resume / "model.zip.tmp.zip").exists()
                       else resume / "model.zip.tmp", resume / "model.zip")
            self.state["steps"] = self.num_timesteps
            tmp = resume / "state.json.tmp"
            tmp.write_text(json.dumps(self.state, indent=1), encoding="utf-8")
            os.replace(tmp, resume / "state.json")

    return SelfPlayCallback


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


def _write_card(path: Path, checkpoint: Path, result: dict[str, Any]) -> None:
    """A human-readable JSON card beside a checkpoint: its metadata and evaluation."""
    from agents.ppo_agent import read_checkpoint

    _, meta = read_checkpoint(checkpoint)
    card = {"checkpoint": checkpoint.name, "metadata": meta, "evaluation": result}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(card, indent=1), encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------------- the run
def train(config: TrainConfig, resume: bool = False, progress_bar: bool | None = None) -> Path:
    """Train (or continue) the run ``config`` describes; returns its directory."""
    import yaml
    from sb3_contrib import MaskablePPO

    from .policy import policy_class, policy_kwargs

    run_dir = config.output_dir()
    resume_zip = run_dir / "resume" / "model.zip"
    if resume and not resume_zip.exists():
        raise FileNotFoundError(f"nothing to resume: {resume_zip} does not exist")
    if not resume and (run_dir / "resume").exists():
        raise FileExistsError(f"{run_dir} already holds a run; pass --resume to continue it or choose another name")
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False), encoding="utf-8")

    # ---- seeding: everything random in the run derives from config.seed
    seed_everything(config.seed, config.torch_threads)

    venv = make_vec_env(config)
    p = config.ppo
    if resume:
        state = json.loads((run_dir / "resume" / "state.json").read_text(encoding="utf-8"))
        model = MaskablePPO.load(resume_zip, env=venv, device="cpu")
        state.setdefault("resumed_at", []).append(int(state["steps"]))  # how to reproduce: training.ship
        venv.seed(config.seed + int(state["steps"]))  # fresh episodes, still derived from the seed
    else:
        state = {"snapshots": [], "elo": {"learner": 1000.0}, "best_score": -math.inf, "steps": 0,
                 "next_snapshot": max(config.pool.snapshot_every, config.pool.baseline_only_steps),
                 "next_eval": config.eval.every or config.total_steps, "next_checkpoint": config.checkpoint_every}
        model = MaskablePPO(
            policy_class(p.privileged_critic), venv, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
            n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range,
            ent_coef=p.ent_coef, vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
            policy_kwargs=policy_kwargs(p.hidden, p.activation, config.env.max_players, p.privileged_critic),
            tensorboard_log=str(run_dir / "tb") if config.tensorboard else None, seed=config.seed,
            device="cpu", verbose=0,
        )
        if p.init_from:  # the actor starts from a checkpoint's weights
            from .policy import load_actor

            load_actor(model.policy, p.init_from)
        if config.imitation.teacher:  # the warm start (training.imitation), seeded from the run's seed
            from .imitation import imitate

            stats = imitate(model.policy, config, seed=int(np.random.SeedSequence([config.seed, 1]).generate_state(1)[0]),
                            log=lambda s: print(f"[imitation] epoch {s['epoch']}: accuracy {100 * s['accuracy']:.1f}%, "
                                                f"value loss {s['value_loss']:.3f}", file=sys.stderr, flush=True))
            state["imitation"] = stats
    callback = _callback_class()(config, run_dir, state)
    remaining = config.total_steps - model.num_timesteps
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=not resume,
                    tb_log_name="tb", progress_bar=config.progress_bar if progress_bar is None else progress_bar)
    venv.close()
    return run_dir


def main(argv: list[str] | None = None) -> None:
    """``uno-env train``: train from a YAML config."""
    parser = argparse.ArgumentParser(prog="uno-env train", description="Self-play MaskablePPO training from a config.")
    parser.add_argument("--config", help="YAML config (configs/*.yaml)")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run in RUN_DIR (its saved config.yaml is used; --set still applies)")
    parser.add_argument("--run-dir", help="output directory (default runs/<name>)")
    parser.add_argument("--seed", type=int, help="override the config's seed")
    parser.add_argument("--total-steps", type=int, help="override total_steps")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override any key, YAML value: --set ppo.n_envs=4 --set env.edition=[classic]")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--print-default-config", action="store_true")
    args = parser.parse_args(argv)
    import yaml

    if args.print_default_config:
        print(yaml.safe_dump(TrainConfig().to_dict(), sort_keys=False), end="")
        return
    if not args.config and not args.resume:
        parser.error("--config or --resume is required")
    overrides: dict[str, Any] = {}
    for pair in args.set:
        key, sep, value = pair.partition("=")
        if not sep:
            parser.error(f"--set expects KEY=VALUE, got {pair!r}")
        overrides[key] = yaml.safe_load(value)
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.total_steps is not None:
        overrides["total_steps"] = args.total_steps
    if args.run_dir or args.resume:
        overrides["run_dir"] = args.run_dir or args.resume
    try:
        source = Path(args.resume) / "config.yaml" if args.resume else Path(args.config)
        config = load_config(source, overrides)
        run_dir = train(config, resume=bool(args.resume), progress_bar=False if args.no_progress else None)
    except (ConfigError, FileNotFoundError, FileExistsError) as err:
        print(f"uno-env train: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"run written to {run_dir}: best.safetensors, last.safetensors, evals.jsonl, tb/")


if __name__ == "__main__":
    main()
