"""Multi-agent self-play PPO on Ray RLlib: the same command on a laptop or a Ray cluster.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``: ``ray[rllib]`` beside the pinned torch).
Run::

    python -m training.rllib --config configs/rllib/self_play.yaml                      # local Ray
    python -m training.rllib --config configs/rllib/self_play.yaml --num-env-runners 2  # 2 samplers
    python -m training.rllib --config configs/rllib/self_play.yaml --address auto       # a Ray cluster

The pieces, each usable on its own:

* ``rllib_observations(aec_env)`` (from ``uno_env.rllib``): a PettingZoo wrapper that gives the env's observations the
  keys RLlib's action-masking RLModule (``ray.rllib.examples.rl_modules.classes.
  action_masking_rlm.ActionMaskingTorchRLModule``) reads, ``{"observations", "action_mask"}``
  (PettingZoo's classic envs, ours included, say ``observation``), the mask as float32. With
  ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` around it, that is all an RLlib user
  needs for seat-based multi-agent training.
* ``SelfPlayEnv``: the env this trainer samples. Its agents are roles, not seats: ``learner``
  and ``opponent_1 ... opponent_{n-1}``; every episode seats them in a random order drawn from
  the env's own generator. Each opponent seat is, with the weights of ``opponents``, either a
  baseline from ``agents`` played inside the env (``rule``, ``random``, any registered spec:
  they read the seat's view, which an RLModule never sees) or an ``opponent_k`` role that RLlib
  plays with a frozen snapshot of the learner.
* ``register()``: registers ``SelfPlayEnv`` with Ray under ``ENV_NAME``.
* ``build_config(config)``: the ``PPOConfig``: modules ``learner`` (trained) and
  ``snapshot_0 ... snapshot_{k-1}`` (never trained: ``policies_to_train=["learner"]``), every one
  an ``ActionMaskingTorchRLModule``; the agent-to-module mapping sends ``learner`` to the
  learner and each ``opponent_k`` to a snapshot chosen per episode. ``SnapshotCallback`` copies
  the learner into every snapshot at the start and into the oldest one every
  ``snapshot_every`` iterations (a league of frozen past selves).
* ``export_checkpoint(module, path, ...)``: the learner's actor (encoder and action head) as
  the project's safetensors checkpoint (``agents.ppo_agent``), which ``PPOAgent``, the
  tournament harness and ``uno-env play`` load like any other.

The config is a ``training.run.config.TrainConfig`` read as ``trainer: rllib``: the table from ``env``
(one edition, one table size), PPO's settings from ``ppo`` under the names the other trainers use
(``build_config`` says how they map onto RLlib's), and what only RLlib has from ``rllib``: the league
(``opponents``, ``snapshots``, ``snapshot_every``), ``iterations``, the env runner count
(``num_env_runners``; 0 samples in the driver) and the cluster address (``address``: empty for a local
Ray started by the command, ``auto`` to join the cluster of this machine, or ``ray://HEAD:10001``).
Output goes to the run directory (``run_dir``, else ``runs/<name>``). One torch thread per process unless
``torch_threads`` says otherwise. The same config and seed train the same weights (tested with one remote
env runner).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

import uno_env
from agents.base import Agent
from agents.ppo_agent import write_checkpoint
from agents.registry import make_agent
from training.run.config import ConfigError, TrainConfig, load_config, parse_overrides
from uno_env.files import atomic_write
from uno_env.rllib import rllib_observation, rllib_observations, rllib_space

__all__ = ["ENV_NAME", "LEARNER", "SelfPlayEnv", "actor_tensors", "build_algorithm", "build_config", "env_config",
           "export_checkpoint", "learner_weights", "main", "register", "rllib_config", "rllib_observations", "run",
           "train"]

ENV_NAME = "uno_env_self_play"
"""The name ``register()`` gives ``SelfPlayEnv`` in Ray's env registry."""
LEARNER = "learner"
"""The trained module, and the role of the learner's seat."""


# ---------------------------------------------------------------------- settings
def env_config(config: TrainConfig) -> dict[str, object]:
    """The ``env_config`` handed to ``SelfPlayEnv``: the table (``env.*``), the opponent weights
    (``rllib.opponents``) and the seed."""
    env = config.env
    return {"edition": env.edition, "num_players": env.num_players, "max_players": env.max_players,
            "episode": env.episode, "max_turns": env.max_turns, "opponents": dict(config.rllib.opponents),
            "seed": config.seed}


def rllib_config(path: str | Path | None = None, overrides: Sequence[str] = ()) -> TrainConfig:
    """A ``trainer: rllib`` config from a YAML file (None: the defaults) and ``--set`` pairs (``KEY=VALUE``,
    YAML values, dotted keys: ``rllib.iterations=5``); raises ``ConfigError`` naming the key."""
    return load_config(path, {"trainer": "rllib", **parse_overrides(list(overrides))})


# ---------------------------------------------------------------------- envs
def _multi_agent_env_class() -> type:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    env_class: type = MultiAgentEnv
    return env_class


class SelfPlayEnv:
    """Roles ``learner`` and ``opponent_k`` seated at random each episode (see the module docstring).

    Built by ``SelfPlayEnv.make(env_config)`` (a subclass of RLlib's ``MultiAgentEnv``, which
    is only imported then). ``env_config``: ``env_config(config)``.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__()
        # RLlib's EnvContext says which runner and vector slot this env is: each gets its own stream.
        stream = 7919 * int(getattr(config, "worker_index", 0)) + int(getattr(config, "vector_index", 0))
        config = dict(config)
        # PettingZoo's wrappers, as RLlib users expect: an illegal action ends the episode (the actor gets -1).
        self.aec = uno_env.env(edition=config.get("edition", "classic"),
                                   num_players=int(config.get("num_players", 2)),
                                   max_players=int(config.get("max_players", 10)),
                                   episode=config.get("episode", "round"),
                                   max_turns=int(config.get("max_turns", 2_000)))
        n = len(self.aec.possible_agents)
        weights = dict(config.get("opponents") or {"snapshot": 1.0})
        self._choices = list(weights)
        total = float(sum(weights.values()))
        self._weights = np.array([weights[c] / total for c in self._choices])
        self._baselines: dict[str, Agent] = {c: make_agent(c) for c in self._choices if c != "snapshot"}
        self.possible_agents = [LEARNER] + [f"opponent_{k}" for k in range(1, n)]
        self.agents = list(self.possible_agents)
        space = rllib_space(self.aec.observation_space("player_0"))
        self.observation_spaces: dict[str, spaces.Space[Any]] = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self.aec.action_space("player_0"))
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self._rng = np.random.default_rng([int(config.get("seed", 0)), stream])
        self._role_of: dict[str, str] = {}
        self._baseline_of: dict[str, Agent] = {}
        self._acting: str | None = None

    @classmethod
    def make(cls, config: Mapping[str, Any]) -> Any:
        """A ``SelfPlayEnv`` that is also an RLlib ``MultiAgentEnv`` (what ``register()`` builds)."""
        rllib_class = type("SelfPlayMultiAgentEnv", (cls, _multi_agent_env_class()), {})
        return rllib_class(config)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Seat the roles and baselines for a new episode and deal."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        seats = list(self.aec.possible_agents)
        order = self._rng.permutation(len(seats))
        self._role_of, self._baseline_of = {}, {}
        self._role_of[seats[order[0]]] = LEARNER
        for k, index in enumerate(order[1:], start=1):
            agent = seats[index]
            choice = self._choices[int(self._rng.choice(len(self._choices), p=self._weights))]
            if choice == "snapshot":
                self._role_of[agent] = f"opponent_{k}"
            else:
                baseline = self._baselines[choice]
                baseline.seed(int(self._rng.integers(2**31)))
                self._baseline_of[agent] = baseline
        self.agents = sorted(self._role_of.values())
        self.aec.reset(seed=int(self._rng.integers(2**63)))
        for baseline in {id(b): b for b in self._baseline_of.values()}.values():
            baseline.reset()
        obs, rewards, _, _, infos = self._advance()
        del rewards
        return obs, infos

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        """Apply the acting role's action; play baselines until a role decides or the episode ends."""
        assert self._acting is not None
        self.aec.step(int(action_dict[self._acting]))
        return self._advance()

    def _advance(self) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        aec = self.aec
        obs: dict[str, Any] = {}
        rewards: dict[str, float] = {}
        terminated: dict[str, bool] = {}
        truncated: dict[str, bool] = {}
        self._acting = None
        while aec.agents:
            agent = aec.agent_selection
            role = self._role_of.get(agent)
            if aec.terminations[agent] or aec.truncations[agent]:
                if role is not None:
                    observation, reward, term, trunc, _ = aec.last()
                    obs[role] = rllib_observation(observation)
                    rewards[role] = float(reward)
                    terminated[role], truncated[role] = bool(term), bool(trunc)
                aec.step(None)
                continue
            baseline = self._baseline_of.get(agent)
            if baseline is not None:
                observation = aec.observe(agent) if baseline.needs_observation else None
                aec.step(int(baseline.act(observation, aec.view(agent))))
                continue
            assert role is not None
            observation, reward, _, _, _ = aec.last()
            obs[role] = rllib_observation(observation)
            rewards[role] = float(reward)
            self._acting = role
            break
        done = not aec.agents
        terminated["__all__"] = done and all(terminated.get(r, True) for r in obs)
        truncated["__all__"] = done and not terminated["__all__"]
        return obs, rewards, terminated, truncated, {}


def register() -> None:
    """Register ``SelfPlayEnv`` with Ray's env registry as ``ENV_NAME``."""
    from ray.tune.registry import register_env

    register_env(ENV_NAME, SelfPlayEnv.make)


# ---------------------------------------------------------------------- algorithm
def _snapshot_ids(config: TrainConfig) -> list[str]:
    return [f"snapshot_{k}" for k in range(config.rllib.snapshots)]


def _mapping_fn(snapshots: int) -> Any:
    def agent_to_module(agent_id: str, episode: Any, **kwargs: Any) -> str:
        if agent_id == LEARNER:
            return LEARNER
        # A stable hash (not Python's salted one) of the episode and the role picks the snapshot.
        return f"snapshot_{zlib.crc32(f'{episode.id_}/{agent_id}'.encode()) % snapshots}"

    return agent_to_module


def _callback_class() -> type:
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class SnapshotCallback(RLlibCallback):
        """Copies the learner into the snapshots: all at the start, the oldest every ``snapshot_every``."""

        snapshots = 1
        snapshot_every = 1

        def __init__(self) -> None:
            super().__init__()
            self._next = 0

        def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
            _copy_learner(algorithm, [f"snapshot_{k}" for k in range(self.snapshots)])

        def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
            if algorithm.iteration % self.snapshot_every == 0:
                slot = f"snapshot_{self._next}"
                self._next = (self._next + 1) % self.snapshots
                _copy_learner(algorithm, [slot])
                result["snapshot_updated"] = slot

    return SnapshotCallback


def _copy_learner(algorithm: Any, slots: list[str]) -> None:
    """Overwrite the snapshot modules ``slots`` with the learner's weights, on the learners and the env runners."""
    weights = algorithm.learner_group.get_weights([LEARNER])[LEARNER]
    algorithm.learner_group.set_weights(dict.fromkeys(slots, weights))

    # Env runners skip a weight sync that carries no newer sequence number (the update's own sync
    # already did), so each runner's snapshot modules are loaded directly, with the keys they
    # keep (inference-only modules have no critic).
    def load(runner: Any) -> None:
        for slot in slots:
            module = runner.module[slot]
            own = set(module.state_dict())
            module.set_state({k: v for k, v in weights.items() if k in own})

    algorithm.env_runner_group.foreach_env_runner(load)


def build_config(config: TrainConfig) -> Any:
    """The ``PPOConfig`` for ``config`` (see the module docstring). ``ppo.*`` keeps its meaning: ``learning_rate``,
    ``gamma``, ``gae_lambda``, ``ent_coef``, ``clip_range``, ``vf_coef``, ``max_grad_norm`` (global norm),
    ``batch_size`` and ``n_epochs`` are RLlib's ``lr``, ``gamma``, ``lambda_``, ``entropy_coeff``,
    ``clip_param``, ``vf_loss_coeff``, ``grad_clip``, ``minibatch_size`` and ``num_epochs``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    p, r = config.ppo, config.rllib
    callback = type("SnapshotCallback", (_callback_class(),),
                    {"snapshots": r.snapshots, "snapshot_every": r.snapshot_every})
    module_ids = [LEARNER, *_snapshot_ids(config)]
    model = DefaultModelConfig(fcnet_hiddens=list(p.hidden), fcnet_activation=p.activation, vf_share_layers=False)
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=env_config(config))
        .env_runners(num_env_runners=r.num_env_runners, num_envs_per_env_runner=r.num_envs_per_env_runner,
                     num_cpus_per_env_runner=1)
        .multi_agent(policies=module_ids, policy_mapping_fn=_mapping_fn(r.snapshots),
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            module_id: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)
            for module_id in module_ids}))
        .training(lr=p.learning_rate, gamma=p.gamma, lambda_=p.gae_lambda, entropy_coeff=p.ent_coef,
                  clip_param=p.clip_range, vf_loss_coeff=p.vf_coef, grad_clip=p.max_grad_norm,
                  grad_clip_by="global_norm", train_batch_size_per_learner=r.train_batch_size,
                  minibatch_size=p.batch_size, num_epochs=p.n_epochs)
        .callbacks(callback)
        .debugging(seed=config.seed)
    )


# ---------------------------------------------------------------------- export
def learner_weights(algorithm: Any, module_id: str = LEARNER) -> dict[str, np.ndarray]:
    """A module's weights as the learners hold them (the source of truth; env runners get copies)."""
    return {k: np.asarray(v) for k, v in algorithm.learner_group.get_weights([module_id])[module_id].items()}


def actor_tensors(weights: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], list[int]]:
    """The actor of an RLlib PPO module's state dict as checkpoint tensors: ``(tensors, hidden widths)``.

    The actor is ``encoder.actor_encoder.net.mlp.<i>`` (linear layers, each followed by the
    activation) then ``pi.net.mlp.0`` (one linear layer: ``head_fcnet_hiddens`` empty); the
    critic is left out, as in every checkpoint of the format.
    """
    def layers(prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
        indices = sorted({int(k[len(prefix):].split(".")[0]) for k in weights
                          if k.startswith(prefix) and k.endswith(".weight")})
        return [(np.asarray(weights[f"{prefix}{i}.weight"], np.float32), np.asarray(weights[f"{prefix}{i}.bias"],
                                                                                  np.float32)) for i in indices]

    hidden = layers("encoder.actor_encoder.net.mlp.")
    head = layers("pi.net.mlp.")
    if len(head) != 1:
        raise ValueError(f"the action head must be one linear layer (head_fcnet_hiddens=[]), found {len(head)}")
    tensors = {"obs_scale": np.ones((hidden[0][0] if hidden else head[0][0]).shape[1], np.float32)}
    for i, (weight, bias) in enumerate(hidden):
        tensors[f"hidden.{i}.weight"], tensors[f"hidden.{i}.bias"] = weight, bias
    tensors["action.weight"], tensors["action.bias"] = head[0]
    return tensors, [int(weight.shape[0]) for weight, _ in hidden]


def export_checkpoint(weights: Mapping[str, Any], path: str | os.PathLike[str], config: TrainConfig,
                      steps: int) -> None:
    """Write a PPO module's actor (``learner_weights(...)``) as a project checkpoint (``agents.ppo_agent``)."""
    tensors, hidden = actor_tensors(weights)
    meta = {"max_players": config.env.max_players, "observation_size": int(tensors["obs_scale"].shape[0]),
            "hidden": hidden, "activation": config.ppo.activation, "editions": [config.env.edition],
            "num_players": [config.env.num_players], "steps": int(steps), "seed": config.seed,
            "config": config.to_dict()}
    write_checkpoint(path, tensors, meta)


# ---------------------------------------------------------------------- run
def build_algorithm(config: TrainConfig) -> Any:
    """Start (or join) Ray, register the env and build the PPO algorithm for ``config``."""
    import ray
    import torch

    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    if not ray.is_initialized():
        if config.rllib.address:
            ray.init(address=config.rllib.address)
        else:
            ray.init(num_cpus=config.rllib.num_cpus or None)
    register()
    return build_config(config).build_algo()


def train(algorithm: Any, config: TrainConfig, *, log: Callable[[str], object] = print) -> Path:
    """Run ``rllib.iterations`` iterations, log each, export ``<run dir>/learner.safetensors``; returns its path."""
    out = config.output_dir()
    out.mkdir(parents=True, exist_ok=True)
    steps = 0
    lines: list[str] = []
    for _ in range(config.rllib.iterations):
        start = time.perf_counter()
        result = algorithm.train()
        runners = result.get("env_runners", {})
        sampled = int(runners.get("num_env_steps_sampled", 0))
        steps = int(runners.get("num_env_steps_sampled_lifetime", steps + sampled))
        returns = runners.get("module_episode_returns_mean", {})
        line = {"iteration": int(algorithm.iteration), "env_steps": steps,
                "env_steps_per_s": round(sampled / max(time.perf_counter() - start, 1e-9), 1),
                "learner_return_mean": returns.get(LEARNER), "episode_len_mean": runners.get("episode_len_mean"),
                "snapshot_updated": result.get("snapshot_updated")}
        log(json.dumps(line))
        lines.append(json.dumps(line) + "\n")
        atomic_write(out / "progress.jsonl", "".join(lines))
    path = out / "learner.safetensors"
    export_checkpoint(learner_weights(algorithm), path, config, steps)
    log(f"exported {path} (play it: uno-env play --opponents ppo:path={path})")
    return path


def run(config: TrainConfig, *, log: Callable[[str], object] = print) -> Path:
    """Build, train and export (what the command runs); returns the checkpoint's path."""
    algorithm = build_algorithm(config)
    try:
        return train(algorithm, config, log=log)
    finally:
        algorithm.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m training.rllib``."""
    parser = argparse.ArgumentParser(prog="python -m training.rllib", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="YAML config (training.run.config's schema, read as trainer: rllib)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one key, YAML value: --set rllib.iterations=5 --set ppo.learning_rate=1.0e-4")
    parser.add_argument("--num-env-runners", type=int, help="sampling processes (0: sample in the driver)")
    parser.add_argument("--address", help="Ray cluster address ('auto' joins this machine's cluster)")
    parser.add_argument("--iterations", type=int, help="training iterations")
    parser.add_argument("--out", help="output directory (checkpoint and progress.jsonl; the config's run_dir)")
    args = parser.parse_args(argv)
    overrides = list(args.set)
    for flag, key in (("num_env_runners", "rllib.num_env_runners"), ("address", "rllib.address"),
                      ("iterations", "rllib.iterations"), ("out", "run_dir")):
        value = getattr(args, flag)
        if value is not None:
            overrides.append(f"{key}={json.dumps(value)}")
    try:
        config = rllib_config(args.config, overrides)
    except ConfigError as err:
        parser.error(str(err))
    run(config)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
