"""``ShardedVecEnv``: many envs over a few worker processes, each stepping its share in one batch.

SB3's ``SubprocVecEnv`` runs one env per process and pays a pipe round trip per env per step;
a UNO step takes a fraction of a millisecond, so on a small machine that round trip costs more
than the step (``python -m training.tools.bench``; the figures, with their conditions, are in
``docs/training.md``'s throughput table). ``ShardedVecEnv`` splits ``n_envs`` envs into ``workers``
contiguous shards, each a ``DummyVecEnv`` in its own process: one round trip per worker per
step, the shards stepping in parallel while the learner waits. ``ppo.vec_env: sharded`` with ``ppo.workers`` selects it.

Env ``i`` behaves exactly as it would in a ``DummyVecEnv`` of all the envs (same seeds, same
auto-reset, same ``terminal_observation`` and ``TimeLimit.truncated`` infos), so a run gives the
same result whatever the number of workers (tested).
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper, VecEnvIndices, VecEnvStepReturn

__all__ = ["ShardedVecEnv"]


def _shard_worker(remote: Any, parent_remote: Any, env_fns: CloudpickleWrapper) -> None:
    """One worker process: a DummyVecEnv over its shard, driven by commands from the pipe."""
    parent_remote.close()
    venv = DummyVecEnv(env_fns.var)
    try:
        while True:
            command, data = remote.recv()
            if command == "step":
                obs, rewards, dones, infos = venv.step(data)
                remote.send((obs, rewards, dones, infos, venv.reset_infos))
            elif command == "reset":
                seeds, options = data
                venv._seeds = list(seeds)  # the base class's "seeds for the next reset"
                venv.set_options(list(options))
                obs = venv.reset()
                remote.send((obs, venv.reset_infos))
            elif command == "call":  # env_method, get_attr, set_attr, env_is_wrapped on local indices
                name, args, kwargs = data
                try:
                    remote.send(("ok", getattr(venv, name)(*args, **kwargs)))
                except Exception as err:  # noqa: BLE001 (raised again in the main process)
                    remote.send(("error", err))
            elif command == "spaces":
                remote.send((venv.observation_space, venv.action_space))
            elif command == "close":
                venv.close()
                remote.close()
                return
            else:
                raise NotImplementedError(f"unknown command {command!r}")
    except (EOFError, KeyboardInterrupt):
        return


class ShardedVecEnv(VecEnv):
    """``len(env_fns)`` envs split over ``workers`` processes (see the module docstring)."""

    def __init__(self, env_fns: Sequence[Callable[[], gymnasium.Env]], workers: int = 2,
                 start_method: str = "fork") -> None:
        n = len(env_fns)
        if not 1 <= workers <= n:
            raise ValueError(f"workers must be 1 to the number of envs ({n}), got {workers}")
        self.shards = [list(map(int, s)) for s in np.array_split(np.arange(n), workers)]
        self._where = [(w, local) for w, shard in enumerate(self.shards) for local in range(len(shard))]
        ctx: Any = mp.get_context(start_method)  # typeshed's BaseContext lacks Process
        self.remotes, work_remotes = zip(*[ctx.Pipe() for _ in self.shards], strict=True)
        self.processes = []
        for shard, work_remote, remote in zip(self.shards, work_remotes, self.remotes, strict=True):
            fns = CloudpickleWrapper([env_fns[i] for i in shard])
            process = ctx.Process(target=_shard_worker, args=(work_remote, remote, fns), daemon=True)
            process.start()
            self.processes.append(process)
            work_remote.close()
        self.waiting = False
        self.closed = False
        self.remotes[0].send(("spaces", None))
        observation_space, action_space = self.remotes[0].recv()
        super().__init__(n, observation_space, action_space)

    # ------------------------------------------------------------------ stepping
    def step_async(self, actions: np.ndarray) -> None:
        """Send each shard its actions."""
        for shard, remote in zip(self.shards, self.remotes, strict=True):
            remote.send(("step", actions[shard[0]:shard[-1] + 1]))
        self.waiting = True

    def step_wait(self) -> VecEnvStepReturn:
        """Gather the shards' results in env order."""
        results = [remote.recv() for remote in self.remotes]
        self.waiting = False
        self.reset_infos = [info for r in results for info in r[4]]
        return (np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results]),
                np.concatenate([r[2] for r in results]), [info for r in results for info in r[3]])

    def reset(self) -> np.ndarray:
        """Reset every env with the seeds and options set for this reset."""
        for shard, remote in zip(self.shards, self.remotes, strict=True):
            remote.send(("reset", ([self._seeds[i] for i in shard], [self._options[i] for i in shard])))
        results = [remote.recv() for remote in self.remotes]
        self.reset_infos = [info for r in results for info in r[1]]
        self._reset_seeds()
        self._reset_options()
        return np.concatenate([r[0] for r in results])

    def close(self) -> None:
        """Stop the workers."""
        if self.closed:
            return
        if self.waiting:
            for remote in self.remotes:
                remote.recv()
        for remote in self.remotes:
            remote.send(("close", None))
        for process in self.processes:
            process.join()
        for remote in self.remotes:
            remote.close()
        self.closed = True

    # ------------------------------------------------------------------ per-env calls
    def _call(self, name: str, indices: VecEnvIndices, *args: Any, **kwargs: Any) -> list[Any]:
        """Run a DummyVecEnv method on the envs ``indices``; results in the order of ``indices``."""
        chosen = list(self._get_indices(indices))
        by_worker: dict[int, list[int]] = {}
        for i in chosen:
            by_worker.setdefault(self._where[i][0], []).append(i)
        for w, envs in by_worker.items():
            local = [self._where[i][1] for i in envs]
            self.remotes[w].send(("call", (name, args, {**kwargs, "indices": local})))
        answers: dict[int, Any] = {}
        error: Exception | None = None
        for w, envs in by_worker.items():
            status, result = self.remotes[w].recv()
            if status == "error":
                error = result
            else:
                answers.update(zip(envs, result if result is not None else [None] * len(envs), strict=True))
        if error is not None:
            raise error
        return [answers[i] for i in chosen]

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Call a method of each env."""
        return self._call("env_method", indices, method_name, *method_args, **method_kwargs)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each env."""
        return self._call("get_attr", indices, attr_name)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of each env."""
        self._call("set_attr", indices, attr_name, value)

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """Whether each env is wrapped in ``wrapper_class``."""
        return self._call("env_is_wrapped", indices, wrapper_class)
