"""``uno-env train``: train from a YAML config, dispatching on ``trainer`` (``training.sb3``, ``training.batched``).

Ctrl-C or SIGTERM writes a checkpoint and prints how to resume (``training.run.interrupt``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shlex
import shutil
import sys
from pathlib import Path

from training.run.config import ConfigError, TrainConfig, commented_defaults, load_config, parse_overrides
from training.run.interrupt import TrainingInterrupted
from training.run.launch import Runner, launch
from training.run.rundir import RunWriteError

__all__ = ["main", "python_command", "train"]

TRAIN_EXTRA = ("yaml", "torch", "stable_baselines3", "sb3_contrib")  # what `pip install "uno-env[train]"` adds
BATCHED_NEEDS = ("yaml", "torch", "safetensors")  # all `trainer: batched` needs (no SB3, PettingZoo, Gymnasium)


def runner(config: TrainConfig) -> Runner:
    """The entry point of the trainer ``config.trainer`` names (``rllib`` has its own command)."""
    if config.trainer == "rllib":
        raise ConfigError("trainer: rllib is run by python -m training.rllib --config FILE (Ray RLlib, the rllib "
                          "extra); uno-env train runs sb3 and batched")
    if config.trainer == "batched":
        from training.batched.ppo import run_batched

        return run_batched
    from training.sb3.trainer import run_sb3

    return run_sb3


def train(config: TrainConfig, resume: bool = False, progress_bar: bool | None = None) -> Path:
    """Train (or continue) the run ``config`` describes; returns its directory (``training.run.launch.launch``)."""
    return launch(config, runner(config), resume=resume, progress_bar=progress_bar)


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
    from training.run.resume import ResumeError

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
    except (ConfigError, ResumeError, RunWriteError, FileNotFoundError, FileExistsError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:  # Ctrl-C while loading (training.run.interrupt's handlers are not installed yet)
        print("interrupted before training started", file=sys.stderr)
        raise SystemExit(130) from None
    written = [name for name in ("best.safetensors", "last.safetensors", "evals.jsonl", "tb") if (run_dir / name).exists()]
    print(f"run complete in {run_dir}: {', '.join(written)}")


if __name__ == "__main__":
    main(prog=python_command("training.cli"))
