"""Training throughput: learner steps per second, PPO updates included, both trainers in one run.

``python -m training.tools.bench`` (SB3 and batched, CPU) or, on a bare GPU machine from the working
tree, ``PYTHONPATH=. python -m training.tools.bench --only batched --device cuda``.

Both trainers get the network and PPO settings of ``--config`` (default ``configs/classic.yaml``:
256x256 ReLU, privileged critic, forced moves skipped, 16 x 512 learner steps per update,
minibatches of 2,048, 6 epochs) and play classic UNO at 2 and at 4 players:

* **SB3** (``trainer: sb3``): sb3-contrib's MaskablePPO over ``SingleAgentEnv``, every other seat
  RuleAgent (Python), with the config's vec env (``dummy``, one process) and with
  ``training.sb3.vec_env.ShardedVecEnv`` over 2 worker processes; a real ``MaskablePPO.learn``.
* **batched** (``trainer: batched``, ``training.batched.ppo``): ``BatchedUno`` with
  ``--tables`` tables on ``--device``, every other seat a network fitted to RuleAgent
  (``--rule``, default the shipped ``rule_net``, else ``classic``: the same arithmetic), one
  rollout then one PPO update after another (``SelfPlay.rollout`` + ``ppo_update``, what
  ``run_batched`` runs between checkpoints), with 1 and 2 torch threads, in float32 and (a
  separate row) with ``batched.precision: bfloat16``.

Every setting runs ``--steps`` learner steps after a warm-up update, ``--repeats`` times,
interleaved with the others (a shared machine is noisy); the table gives medians, ranges and the
ratio to SB3's single-process row at the same table size. For the batched rows it also gives the
share of the time spent in the network's own arithmetic: the self time of the matrix products
(``aten::mm``, ``aten::addmm``) and of the sparse first layers (``embedding_bag`` forward and
backward), learner and opponents, under ``torch.profiler``, in a separate profiled update
after the timed ones.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::_embedding_bag", "aten::_embedding_bag_dense_backward",
            "aten::_embedding_bag_backward", "aten::embedding_dense_backward")  # the networks' own arithmetic


def _sb3_rate(data: dict[str, Any], steps: int) -> float:
    """Learner steps/s of a real MaskablePPO.learn (the SB3 trainer's model and envs)."""
    import torch

    from training.run.config import config_from_dict
    from training.sb3.trainer import build_model, make_vec_env

    torch.set_num_threads(1)
    config = config_from_dict(data)
    venv = make_vec_env(config)
    model = build_model(config, venv, Path("/nonexistent"))
    warmup = config.ppo.n_steps * config.ppo.n_envs
    model.learn(warmup)
    start = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    venv.close()
    return float((model.num_timesteps - warmup) / elapsed)


def _batched_rate(data: dict[str, Any], steps: int, threads: int, profile: bool = False) -> tuple[float, float, float]:
    """``(learner steps/s, share of time in rollouts, share in matrix products)`` of the batched trainer."""
    import torch

    from training.batched.networks import ActorCritic
    from training.batched.ppo import gae, ppo_update
    from training.batched.selfplay import SelfPlay
    from training.run.config import config_from_dict

    torch.set_num_threads(threads)
    config = config_from_dict(data)
    device = torch.device(config.batched.device)
    torch.manual_seed(0)
    generator = torch.Generator(device=device).manual_seed(0)
    model = ActorCritic(config).to(device)
    play = SelfPlay(config, device, 0, generator, lambda: 0)
    size = config.ppo.n_envs * config.ppo.n_steps
    buffer = play.new_buffer(size)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def update() -> tuple[int, float]:
        started = time.perf_counter()
        rollout = play.rollout(model, buffer, size)
        assert rollout is not None
        n = buffer.size
        with torch.no_grad():
            advantages = gae(torch.stack(rollout.slots), torch.stack(rollout.rewards), torch.stack(rollout.dones),
                             torch.stack(rollout.bootstraps), buffer.values[:n], play.last_values(model),
                             config.ppo.gamma, config.ppo.gae_lambda)
        sync()
        rollout_seconds = time.perf_counter() - started
        ppo_update(model, buffer, advantages, advantages + buffer.values[:n], n, config, generator)
        play.statistics()
        return n, rollout_seconds

    update()  # warm-up
    sync()
    done, rolling, start = 0, 0.0, time.perf_counter()
    while done < steps:
        n, seconds = update()
        done, rolling = done + n, rolling + seconds
    sync()
    elapsed = time.perf_counter() - start
    gemm = float("nan")
    if profile:
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as profiler

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        with profiler(activities=activities) as prof:
            update()
            sync()
        events = prof.key_averages()
        if device.type == "cuda":
            total = sum(e.self_device_time_total for e in events)
            gemm = sum(e.self_device_time_total for e in events if e.key in GEMM_OPS or "gemm" in e.key.lower()) / total
        else:
            total = sum(e.self_cpu_time_total for e in events)
            gemm = sum(e.self_cpu_time_total for e in events if e.key in GEMM_OPS) / total
    return done / elapsed, rolling / elapsed, gemm


def _rule_spec(given: str | None) -> str:
    if given:
        return given
    from agents.ppo_agent import SHIPPED_DIR

    return "ppo:rule_net" if (SHIPPED_DIR / "rule_net.safetensors").exists() else "ppo:classic"


def main(argv: list[str] | None = None) -> None:
    """Print steps/s for each setting, then the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=16384, help="learner steps timed per run (after a warm-up)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per setting; the median is reported")
    parser.add_argument("--config", default=str(ROOT / "configs" / "classic.yaml"))
    parser.add_argument("--only", choices=("sb3", "batched"), help="run one trainer's rows")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--device", default="cpu", help="the batched trainer's device (cpu, cuda)")
    parser.add_argument("--tables", type=int, nargs="+", default=[256], help="batched.num_tables, one row each")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch threads of the batched rows")
    parser.add_argument("--rule", help="checkpoint spec playing RuleAgent's seats in the batched rows "
                                       "(default ppo:rule_net, else ppo:classic)")
    parser.add_argument("--no-bfloat16", action="store_true", help="no bfloat16 rows")
    parser.add_argument("--rollout", type=int, help="learner steps per update (n_envs * n_steps) of the batched rows")
    args = parser.parse_args(argv)
    from training.run.config import load_config

    source = load_config(args.config)
    ppo, env = source.ppo.model_dump(), source.env.model_dump()
    ppo.pop("init_from", None)
    runs: list[tuple[str, int, dict[str, Any], int]] = []  # label, players, config data, threads (0: SB3)
    for n in args.players:
        table = {**env, "edition": "classic", "num_players": n}
        base = {"env": table, "pool": {"baselines": ["rule"]}, "eval": {"every": 0}}
        if args.only != "batched":
            for label, vec in (("SB3, 1 process", {"vec_env": "dummy"}),
                               ("SB3, sharded over 2 workers", {"vec_env": "sharded", "workers": 2})):
                runs.append((label, n, {**base, "ppo": {**ppo, **vec}}, 0))
        if args.only != "sb3":
            precisions = ["float32"] + ([] if args.no_bfloat16 else ["bfloat16"])
            batched_ppo = dict(ppo)
            if args.rollout:
                batched_ppo.update(n_envs=1, n_steps=args.rollout)
            for tables in args.tables:
                for precision in precisions:
                    for threads in args.threads:
                        data = {**base, "trainer": "batched", "ppo": batched_ppo,
                                "batched": {"num_tables": tables, "device": args.device, "rule": _rule_spec(args.rule),
                                            "precision": precision}}
                        label = f"batched {args.device}, {tables} tables, {precision}, {threads} thread{'s' * (threads > 1)}"
                        runs.append((label, n, data, threads))
    rates: dict[tuple[str, int], list[tuple[float, float | None, float | None]]] = {}
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; {args.steps} learner steps per run", flush=True)
    for repeat in range(args.repeats):
        for label, n, data, threads in runs:
            rate = _batched_rate(data, args.steps, threads) if threads else (_sb3_rate(data, args.steps), None, None)
            rates.setdefault((label, n), []).append(rate)
            print(f"[{repeat + 1}/{args.repeats}] {n}p {label:48s} {rate[0]:8.0f} learner steps/s", flush=True)
    shares: dict[tuple[str, int], float] = {}
    for label, n, data, threads in runs:  # one profiled update per batched setting (profiling slows what it measures)
        if threads:
            shares[(label, n)] = _batched_rate(data, 1, threads, profile=True)[2]
    print(f"\nload average {os.getloadavg()[0]:.1f}\n")
    print(f"| players | trainer | learner steps/s (median of {args.repeats}) | range | vs SB3, 1 process | "
          "rollout share | network arithmetic share |\n|---:|---|---:|---|---:|---:|---:|")
    for (label, n), values in rates.items():
        median = statistics.median(v[0] for v in values)
        reference = rates.get(("SB3, 1 process", n))
        ratio = f"{median / statistics.median(v[0] for v in reference):.2f}x" if reference else ""
        rolled = [v[1] for v in values if v[1] is not None]
        rollout = f"{100 * statistics.median(rolled):.0f}%" if rolled else ""
        gemm = f"{100 * shares[(label, n)]:.0f}%" if (label, n) in shares else ""
        print(f"| {n} | {label} | {median:.0f} | {min(v[0] for v in values):.0f}-{max(v[0] for v in values):.0f} | "
              f"{ratio} | {rollout} | {gemm} |")


if __name__ == "__main__":
    main()
