"""Learner steps per second of every training library on uno_env, beside the batched trainer, in one run.

``python -m benchmarks.bench_learners`` in ``.venv-eco`` (every library; ``--only NAME ...`` for
some, ``--quick`` for a smoke run). A library that is not installed gets a row saying so.

**A learner step** is one decision of the learning seat whose observation, action and reward
enter that learner's training data (its rollout or its replay buffer). Rates are learner steps
divided by the wall time of whole collect-and-update cycles, so sampling, the opponents' moves,
the learner's gradient updates and the library's own machinery are all in it; building the
learner and one warm-up cycle are not. The opponents' decisions are not learner steps, nor are
forced moves that the env plays for the learner (``env.skip_forced`` of the project's trainers).

Every learner plays classic UNO at 2 players with a 256x256 ReLU network, one torch thread:

* ``batched``: the project's batched trainer (``training.batched``, ``configs/classic.yaml``):
  256 tables on the CPU, opponent seats a network fitted to RuleAgent (``ppo:rule_net``), PPO
  over 16 x 512 learner steps per update (what ``run_batched`` runs between checkpoints);
* ``sb3``: the SB3 trainer (sb3-contrib MaskablePPO, ``configs/classic.yaml``, 16 envs in a
  DummyVecEnv, RuleAgent opponents, forced moves skipped), a real ``learn`` per update;
* ``rllib``: ``training.rllib`` (RLlib PPO with its action-masking RLModule), sampling in the
  driver, RuleAgent opponents inside the env, ``RLLIB_BATCH`` env steps per iteration;
* ``tianshou``: Tianshou's multi-agent tutorial shape: ``PettingZooEnv(uno_env.env())``, a DQN
  learner in ``MultiAgentOffPolicyAlgorithm`` against Tianshou's masked random policy, collecting
  ``TIANSHOU_COLLECT`` table decisions then one DQN update of 64 per 10 decisions;
* ``agilerl``: AgileRL's turn-based PettingZoo tutorial shape: ``agent_iter()``/``last()``, a DQN
  learner against RuleAgent, its transitions into AgileRL's ``ReplayBuffer``, one ``learn`` of 64
  every 5 learner transitions (DQN's ``learn_step``);
* ``torchrl``: TorchRL's PPO tutorial shape on ``GymEnv("uno_env/UnoSingleAgent-v0")`` (RuleAgent
  opponents inside the env, the mask read from ``info``): ``Collector`` of
  ``TORCHRL_FRAMES`` frames, ``GAE``, ``ClipPPOLoss``, 4 epochs of minibatches of 256.

The algorithms differ (PPO, DQN) and so do the update-to-data ratios each library's tutorial uses;
the table is what a user of each library gets on this machine, not a like-for-like race.
All learners are built first; then ``--repeats`` rounds time each for at least ``--seconds`` of
whole cycles, in an order rotated each round (a shared machine is noisy); the table gives
medians, ranges and the ratio to ``batched``, with the load average before and after.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import importlib.metadata  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "classic.yaml"
RLLIB_CONFIG = ROOT / "configs" / "rllib" / "self_play.yaml"
HIDDEN = [256, 256]
RLLIB_BATCH = 1_024
TIANSHOU_COLLECT = 200
TORCHRL_FRAMES = 1_024
AGILERL_CHUNK = 256
"""Learner transitions per timed AgileRL cycle (whole episodes)."""
SEED = 0


@dataclasses.dataclass
class Learner:
    """One library's learner, built and ready: ``cycle()`` collects and updates once, returning its learner steps."""

    name: str
    """The row's name (``--only`` takes it)."""
    describe: str
    """Algorithm and opponent, for the table."""
    cycle: Callable[[], int]
    """One collect-and-update cycle; returns the learner steps it consumed."""
    close: Callable[[], None] = lambda: None
    """Frees what the learner holds (processes, Ray)."""


def _batched_config(players: int, quick: bool) -> dict[str, Any]:
    from training.run.config import load_config

    data = load_config(str(CONFIG)).to_dict()
    data["env"].update({"edition": "classic", "num_players": players})
    data["pool"] = {"baselines": ["rule"]}
    data["eval"] = {"every": 0}
    data["ppo"].pop("init_from", None)
    if quick:
        data["ppo"].update(n_envs=1, n_steps=256, batch_size=128, n_epochs=1)
    return data


def build_batched(players: int, quick: bool) -> Learner:
    """The project's batched trainer: one ``SelfPlay.rollout`` then one ``ppo_update`` per cycle."""
    import torch

    from training.batched.networks import ActorCritic
    from training.batched.ppo import gae, ppo_update
    from training.batched.selfplay import SelfPlay
    from training.run.config import config_from_dict

    data = _batched_config(players, quick)
    data.update(trainer="batched", batched={"num_tables": 32 if quick else 256, "device": "cpu",
                                            "rule": _rule_opponent()})
    config = config_from_dict(data)
    device = torch.device("cpu")
    torch.manual_seed(SEED)
    generator = torch.Generator(device=device).manual_seed(SEED)
    model = ActorCritic(config).to(device)
    play = SelfPlay(config, device, SEED, generator, lambda: 0)
    size = config.ppo.n_envs * config.ppo.n_steps
    buffer = play.new_buffer(size)

    def cycle() -> int:
        rollout = play.rollout(model, buffer, size)
        assert rollout is not None
        n = buffer.size
        with torch.no_grad():
            advantages = gae(torch.stack(rollout.slots), torch.stack(rollout.rewards), torch.stack(rollout.dones),
                             torch.stack(rollout.bootstraps), buffer.values[:n], play.last_values(model),
                             config.ppo.gamma, config.ppo.gae_lambda)
        ppo_update(model, buffer, advantages, advantages + buffer.values[:n], n, config, generator)
        play.statistics()
        return int(n)

    return Learner("batched", f"PPO, {config.batched.num_tables} tables, rule_net opponent", cycle)


def _rule_opponent() -> str:
    from training.tools.bench import _rule_spec

    return _rule_spec(None)


def build_sb3(players: int, quick: bool) -> Learner:
    """The SB3 trainer's MaskablePPO and vec env; one ``learn`` of one rollout per cycle."""
    from training.run.config import config_from_dict
    from training.sb3.trainer import build_model, make_vec_env

    data = _batched_config(players, quick)
    data["ppo"].update(vec_env="dummy")
    if quick:
        data["ppo"].update(n_envs=2, n_steps=64, batch_size=64)
    config = config_from_dict(data)
    venv = make_vec_env(config)
    model = build_model(config, venv, Path(tempfile.mkdtemp(prefix="bench_sb3_")))
    rollout = config.ppo.n_steps * config.ppo.n_envs

    def cycle() -> int:
        before = model.num_timesteps
        model.learn(rollout, reset_num_timesteps=False)
        return int(model.num_timesteps - before)

    return Learner("sb3", f"MaskablePPO, {config.ppo.n_envs} envs (DummyVecEnv), RuleAgent", cycle, venv.close)


def build_rllib(players: int, quick: bool) -> Learner:
    """``training.rllib``'s PPO, sampling in the driver; one ``Algorithm.train()`` per cycle."""
    import ray

    from training.rllib import trainer as rllib

    batch = 256 if quick else RLLIB_BATCH
    settings = rllib.rllib_config(str(RLLIB_CONFIG), [
        "rllib.opponents={rule: 1}", "rllib.num_env_runners=0", f"rllib.train_batch_size={batch}",
        f"ppo.batch_size={min(batch, 512)}", "ppo.n_epochs=4", f"env.num_players={players}", f"ppo.hidden={HIDDEN}",
        "rllib.num_cpus=1", f"seed={SEED}", f"run_dir={tempfile.mkdtemp(prefix='bench_rllib_')}",
    ])
    if not ray.is_initialized():
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    algorithm = rllib.build_algorithm(settings)

    def cycle() -> int:
        # Every env step is a learner decision: the RuleAgent seats are played inside the env.
        return int(algorithm.train()["env_runners"]["num_env_steps_sampled"])

    def close() -> None:
        algorithm.stop()
        ray.shutdown()

    return Learner("rllib", "PPO (action-masking RLModule), driver sampling, RuleAgent", cycle, close)


def build_tianshou(players: int, quick: bool) -> Learner:
    """A Tianshou DQN seat in ``MultiAgentOffPolicyAlgorithm`` against its masked random policy."""
    import torch
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step

    import uno_env

    learner_steps = [0]

    class CountingEnv(PettingZooEnv):  # type: ignore[misc]
        """Counts the learner seat's decisions (the first agent's: the DQN's)."""

        def step(self, action: Any) -> Any:
            if self.env.agent_selection == self.agents[0]:
                learner_steps[0] += 1
            return super().step(action)

    def make_env() -> Any:
        return CountingEnv(uno_env.env(num_players=players, episode="round", max_turns=1_000))

    torch.manual_seed(SEED)
    env = make_env()
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=HIDDEN)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-4), gamma=0.99, target_update_freq=320)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)
    envs = DummyVectorEnv([make_env for _ in range(4)])
    envs.seed(SEED)
    buffer = VectorReplayBuffer(20_000, len(envs))
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    collect = 40 if quick else TIANSHOU_COLLECT

    def cycle() -> int:
        before = learner_steps[0]
        stats = collector.collect(n_step=collect)
        with policy_within_training_step(algorithm.policy):
            for _ in range(max(1, int(stats.n_collected_steps) // 10)):  # the tutorial's update_per_step=0.1
                algorithm.update(buffer, sample_size=64)
        return learner_steps[0] - before

    return Learner("tianshou", "DQN, 4 envs (DummyVectorEnv), Tianshou's masked random", cycle, envs.close)


def build_agilerl(players: int, quick: bool) -> Learner:
    """An AgileRL DQN in seat 0 of the AEC loop against RuleAgent, learning every ``learn_step`` transitions."""
    import torch
    from agilerl.algorithms.dqn import DQN
    from agilerl.components.data import Transition
    from agilerl.components.replay_buffer import ReplayBuffer

    import uno_env
    from agents import RuleAgent

    torch.manual_seed(SEED)
    env = uno_env.env(num_players=players, episode="round", max_turns=1_000)
    learner_agent = "player_0"
    dqn = DQN(observation_space=env.observation_space(learner_agent)["observation"],
              action_space=env.action_space(learner_agent), net_config={"encoder_config": {"hidden_size": HIDDEN}},
              batch_size=64, lr=1e-4, learn_step=5)
    memory = ReplayBuffer(max_size=20_000)
    rule = RuleAgent()
    episodes = [0]
    chunk = 32 if quick else AGILERL_CHUNK

    def episode() -> int:
        env.reset(seed=SEED * 100_003 + episodes[0])
        rule.seed(episodes[0])
        rule.reset()
        episodes[0] += 1
        stored = 0
        pending: tuple[np.ndarray, int] | None = None
        for agent in env.agent_iter():
            obs, reward, termination, truncation, _ = env.last()
            done = termination or truncation
            if agent == learner_agent and pending is not None:
                memory.add(Transition(obs=pending[0][None], action=np.array([pending[1]]),
                                      reward=np.array([reward], np.float32), next_obs=obs["observation"][None],
                                      done=np.array([done], np.float32), batch_size=[1]).to_tensordict())
                stored += 1
                pending = None
                if len(memory) >= dqn.batch_size and stored % dqn.learn_step == 0:
                    dqn.learn(memory.sample(dqn.batch_size))
            if done:
                env.step(None)
                continue
            if agent == learner_agent:
                action = int(dqn.get_action(obs["observation"][None], epsilon=0.1,
                                            action_mask=obs["action_mask"][None])[0])
                pending = (obs["observation"], action)
            else:
                action = int(rule.act(obs if rule.needs_observation else None, env.view(agent)))
            env.step(action)
        return stored

    def cycle() -> int:
        done = 0
        while done < chunk:
            done += episode()
        return done

    return Learner("agilerl", "DQN, AEC loop, RuleAgent", cycle)


def build_torchrl(players: int, quick: bool) -> Learner:
    """TorchRL's PPO tutorial on ``GymEnv("uno_env/UnoSingleAgent-v0")``, the mask read from ``info``."""
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torchrl.collectors import Collector
    from torchrl.data import Binary, LazyTensorStorage, ReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.envs import GymEnv
    from torchrl.envs.gym_like import default_info_dict_reader
    from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    import uno_env
    from agents import RuleAgent

    torch.manual_seed(SEED)
    uno_env.register_envs()
    env = GymEnv("uno_env/UnoSingleAgent-v0", num_players=players, opponents=RuleAgent(), max_turns=1_000,
                 categorical_action_encoding=True)
    n_actions, n_obs = int(env.action_spec.space.n), int(env.observation_spec["observation"].shape[-1])
    env.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec={"action_mask": Binary(n_actions)}))
    env.set_seed(SEED)
    # The env's info holds the mask as int8; MaskedCategorical takes a bool one.
    as_bool = TensorDictModule(lambda mask: mask.bool(), in_keys=["action_mask"], out_keys=["mask"])
    logits = TensorDictModule(MLP(in_features=n_obs, out_features=n_actions, num_cells=HIDDEN, activation_class=torch.nn.ReLU),
                              in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(TensorDictSequential(as_bool, logits), in_keys=["logits", "mask"], out_keys=["action"],
                               spec=env.action_spec, distribution_class=MaskedCategorical, return_log_prob=True)
    value = ValueOperator(MLP(in_features=n_obs, out_features=1, num_cells=HIDDEN, activation_class=torch.nn.ReLU),
                          in_keys=["observation"])
    frames = 128 if quick else TORCHRL_FRAMES
    collector = Collector(env, actor, frames_per_batch=frames, total_frames=-1, split_trajs=False)
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=value, average_gae=True)
    loss = ClipPPOLoss(actor, value, clip_epsilon=0.2, entropy_coeff=0.01)
    optimizer = torch.optim.Adam(loss.parameters(), lr=3e-4)
    replay = ReplayBuffer(storage=LazyTensorStorage(frames), sampler=SamplerWithoutReplacement())
    batches = iter(collector)

    def cycle() -> int:
        data = next(batches)
        if not bool(data["action_mask"].bool().gather(-1, data["action"].unsqueeze(-1)).all()):
            raise RuntimeError("TorchRL took an action its mask forbade: the mask did not reach the policy")
        for _ in range(4):
            with torch.no_grad():
                advantage(data)
            replay.extend(data.reshape(-1))
            for _ in range(max(1, frames // 256)):
                losses = loss(replay.sample(min(256, frames)))
                total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        collector.update_policy_weights_()
        return int(data.numel())  # one frame per learner decision: the opponents play inside the env

    return Learner("torchrl", "PPO (MaskedCategorical), GymEnv, RuleAgent", cycle, collector.shutdown)


BUILDERS: dict[str, tuple[str, Callable[[int, bool], Learner]]] = {
    "batched": ("torch", build_batched), "sb3": ("sb3_contrib", build_sb3), "rllib": ("ray", build_rllib),
    "tianshou": ("tianshou", build_tianshou), "agilerl": ("agilerl", build_agilerl),
    "torchrl": ("torchrl", build_torchrl),
}
"""Row name -> (the distribution it needs, its builder)."""


def measure(learner: Learner, seconds: float, clock: Callable[[], float] = time.perf_counter) -> float:
    """Learner steps per second over whole cycles lasting at least ``seconds`` (by ``clock``)."""
    steps, start = 0, clock()
    while True:
        steps += learner.cycle()
        elapsed = clock() - start
        if elapsed >= seconds:
            return steps / elapsed


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def run(names: Sequence[str], *, seconds: float, repeats: int, players: int = 2, quick: bool = False,
        log: Callable[[str], None] = print) -> dict[str, list[float]]:
    """Build the learners ``names``, time them in rotated rounds, log the table; returns each one's rates."""
    log(f"{os.cpu_count()} cores, load average before: {_load()}; {players} players, >= {seconds:g} s per "
        f"measurement, {repeats} rounds")
    learners: dict[str, Learner] = {}
    missing: dict[str, str] = {}
    for name in names:
        distribution, build = BUILDERS[name]
        if not _version(distribution):
            missing[name] = f"{distribution} not installed"
            continue
        import torch

        torch.set_num_threads(1)
        learners[name] = build(players, quick)
        learners[name].cycle()  # warm-up
    rates: dict[str, list[float]] = {name: [] for name in learners}
    try:
        for repeat in range(repeats):
            order = list(learners)
            order = order[repeat % len(order):] + order[:repeat % len(order)] if order else order
            for name in order:
                rates[name].append(measure(learners[name], seconds))
                log(f"[{repeat + 1}/{repeats}] {name}: {rates[name][-1]:.0f} learner steps/s (load {_load()})")
    finally:
        for learner in learners.values():
            learner.close()
    log(f"load average after: {_load()}")
    reference = statistics.median(rates["batched"]) if rates.get("batched") else None
    log(f"\n| library | package | learner | learner steps/s (median of {repeats}) | range | vs batched |\n"
        "|---|---|---|---:|---|---:|")
    for name, values in rates.items():
        median = statistics.median(values)
        ratio = f"{median / reference:.3f}x" if reference else ""
        log(f"| {name} | {BUILDERS[name][0]} {_version(BUILDERS[name][0])} | {learners[name].describe} | {median:,.0f} | "
            f"{min(values):,.0f}-{max(values):,.0f} | {ratio} |")
    for name, why in missing.items():
        log(f"| {name} | | {why} | | | |")
    return rates


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks.bench_learners``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(BUILDERS), default=list(BUILDERS))
    parser.add_argument("--seconds", type=float, default=12.0, help="least timed wall time per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the table gives medians")
    parser.add_argument("--quick", action="store_true", help="small rollouts, 1 s, 1 round: a smoke run")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be positive and --repeats at least 1")
    if args.quick:
        args.seconds, args.repeats = min(args.seconds, 1.0), 1
    run(args.only, seconds=args.seconds, repeats=args.repeats, quick=args.quick)


if __name__ == "__main__":
    main()
