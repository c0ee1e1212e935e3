"""One slice of a batched training run on a GPU: train for ``--seconds``, checkpoint, stop; run it again to go on.

On a bare GPU machine (Python 3.12, its own CUDA build of torch, numpy, pyyaml, safetensors and
tensorboard; no SB3, PettingZoo or Gymnasium), from the working tree::

    PYTHONPATH=. python -m training.batched.gpu_slice --config configs/gpu_classic.yaml --seconds 240
    PYTHONPATH=. python -m training.batched.gpu_slice --config configs/gpu_classic.yaml --seconds 240   # the next slice

The first slice starts the run (``runs/<name>`` or ``--run-dir``); every later one resumes it from
its last checkpoint (``training.run.resume``). After ``--seconds`` the slice stops itself as Ctrl-C
would (a time budget of ``training.run.interrupt.StopRequests``): the trainer writes a checkpoint of its
last update and exits, so a slice loses at most the rollout in progress. Copy the run directory back between slices (it holds everything a resume
needs: ``resume/``, ``pool/``, ``best`` and ``last``). ``batched.device`` is set to ``--device``
(default ``cuda``); the periodic evaluation plays on the machine's CPU cores (``eval.workers``).
Nothing here depends on the repository's ``torch==2.13.0`` pin: the working tree runs with
whatever torch the machine has. The last line says where the run stands and how fast it went.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from training.batched.ppo import run_batched
from training.run.config import ConfigError, load_config
from training.run.interrupt import TrainingInterrupted
from training.run.launch import launch


def main(argv: list[str] | None = None) -> None:
    """Run one slice."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="a config with trainer: batched")
    parser.add_argument("--run-dir", help="default runs/<name>")
    parser.add_argument("--seconds", type=float, required=True,
                        help="train for this long (from set-up on), then checkpoint and stop")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--total-steps", type=int, help="override total_steps")
    args = parser.parse_args(argv)
    if not args.seconds > 0:
        parser.error(f"--seconds {args.seconds}: a slice trains for a positive number of seconds")
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"--device {args.device}: torch {torch.__version__} sees no CUDA device")
    overrides: dict[str, object] = {"batched.device": args.device, "progress_bar": False}
    if args.total_steps:
        overrides["total_steps"] = args.total_steps
    try:
        config = load_config(args.config, overrides, resuming=True)  # for the run's folder; checked below
        run_dir = Path(args.run_dir or config.output_dir())
        overrides["run_dir"] = str(run_dir)
        resume = (run_dir / "resume" / "state.json").exists()
        config = load_config(run_dir / "config.yaml" if resume else args.config, overrides, resuming=resume)
    except ConfigError as err:
        raise SystemExit(f"gpu_slice: {err}") from None
    if config.trainer != "batched":
        raise SystemExit(f"gpu_slice: {args.config} has trainer {config.trainer!r}; a GPU slice runs trainer: batched")
    before = json.loads((run_dir / "resume" / "state.json").read_text())["steps"] if resume else 0
    started = time.perf_counter()
    try:
        launch(config, run_batched, resume=resume, seconds=args.seconds)
        outcome = "complete"
    except TrainingInterrupted as stopped:
        outcome = f"stopped at step {stopped.steps} (checkpoint written); run the same command to continue"
    state = json.loads((run_dir / "resume" / "state.json").read_text())
    seconds = time.perf_counter() - started
    print(f"gpu_slice: {run_dir} {outcome}; {state['steps'] - before:,} learner steps in {seconds:.0f} s "
          f"({(state['steps'] - before) / seconds:,.0f}/s with set-up and evaluations), {torch.__version__}, "
          f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'cpu'}", file=sys.stderr)


if __name__ == "__main__":
    main()
