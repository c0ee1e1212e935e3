"""Training throughput of the RLlib trainer beside the SB3 trainer, on one machine (``python -m benchmarks.bench_rllib``).

Both train PPO (256x256 ReLU actor, PPO updates included) for the learner at a 2-player classic
table against ``RuleAgent``, one torch thread per process, and report learner env steps per
second:

* ``sb3 dummy x16``: ``training.tools.bench``'s run of ``configs/classic.yaml`` (MaskablePPO, 16 envs
  in a DummyVecEnv, forced moves skipped inside the env);
* ``rllib, N env runners``: ``training.rllib`` (PPO with the action-masking RLModule,
  ``SelfPlayEnv`` with the rule baseline in every opponent seat), sampling in the driver
  (``N = 0``) or in ``N`` Ray actors, batches of ``--steps // 4`` env steps.

Needs the ``rllib`` extra. Runs are interleaved and repeated; the table gives the median.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "classic.yaml"


def sb3_rate(steps: int) -> float:
    """Learner steps per second of the SB3 trainer (``training.tools.bench``'s measurement)."""
    from training.run.config import load_config
    from training.tools.bench import _run

    data = load_config(str(CONFIG)).to_dict()
    data["env"].update({"edition": "classic", "num_players": 2})
    data["pool"].update({"baselines": ["rule"]})
    data["ppo"].update({"vec_env": "dummy"})
    return _run(data, steps, None)


def rllib_rate(steps: int, runners: int) -> float:
    """Learner env steps per second of ``training.rllib`` over ``steps`` steps after one warm-up iteration."""
    from training.rllib import trainer as rllib

    batch = max(steps // 4, 512)
    settings = rllib.rllib_config(None, [
        "rllib.opponents={rule: 1}", f"rllib.num_env_runners={runners}", f"rllib.train_batch_size={batch}",
        "ppo.batch_size=512", "ppo.n_epochs=4", f"run_dir={tempfile.mkdtemp()}",
    ])
    algorithm = rllib.build_algorithm(settings)
    try:
        algorithm.train()  # warm-up
        done = 0
        start = time.perf_counter()
        while done < steps:
            done += int(algorithm.train()["env_runners"]["num_env_steps_sampled"])
        return done / (time.perf_counter() - start)
    finally:
        algorithm.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=16_384)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--runners", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args()
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    runs: dict[str, Callable[[], float]] = {"sb3 dummy x16": lambda: sb3_rate(args.steps)}
    for n in args.runners:
        runs[f"rllib, {n} env runners"] = functools.partial(rllib_rate, args.steps, n)
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for repeat in range(args.repeats):
        names = list(runs)
        for name in names[repeat % len(names):] + names[:repeat % len(names)]:
            rates[name].append(runs[name]())
            print(f"[{repeat + 1}/{args.repeats}] {name}: {rates[name][-1]:.0f} learner steps/s", flush=True)
    print(f"\n| trainer | learner steps/s (median of {args.repeats}) | range |\n|---|---:|---|")
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):.0f} | {min(values):.0f}-{max(values):.0f} |")


if __name__ == "__main__":
    main()
