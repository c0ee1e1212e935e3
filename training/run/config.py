"""Training configs: YAML files read into typed pydantic models, checked strictly on load.

One schema serves the three trainers (``trainer: sb3``, ``batched``, ``rllib``). A config is a YAML mapping
with the sections below, every key optional; ``uno-env train --print-default-config`` prints the defaults,
each key under its description and what it allows. The models are the schema: each field's type, range
(``Field(ge=..., le=...)``) and description are written once, and the refusal messages and the printed
defaults are generated from them. An unknown key, a value of the wrong type (strictly: ``1`` is not
``true``, ``"8"`` is not ``8``), a number that is not finite or out of its range, a run name that would
leave ``runs/``, an unknown edition, an impossible table size, an invalid rule option or an agent spec that
is not a registered agent or a checkpoint raises ``ConfigError`` at once, naming the key (``ppo.learning_rate``,
``env.edition``, ``eval.matchups[0].opponent``), what it allows and its default.

Configs are data: reading one runs no code (YAML is read with PyYAML's safe loader and aliases (``*name``)
are refused before any node is built, so a few hundred bytes cannot expand to billions of values; agent
specs go through ``agents.registry.make_agent`` without imports). Refusal messages show values cut short.
Resource settings have fixed caps: processes (``eval.workers``, ``ppo.workers``, ``ppo.n_envs`` under
``subproc``, ``rllib.num_env_runners``) at most ``MAX_PROCESSES``, ``torch_threads`` at most
``MAX_THREADS``, ``batched.num_tables`` at most ``MAX_TABLES``, a rollout (``ppo.n_envs * ppo.n_steps``) at
most ``MAX_ROLLOUT`` steps, recorded imitation decisions at most ``MAX_DECISIONS``; every count has a bound.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from training.run.schema_text import ConfigError, Refusal, commented_yaml, refusal, shown
from uno_env.core import EDITIONS, MAX_PLAYERS, MIN_PLAYERS
from uno_env.core.rules import MAX_TARGET_SCORE, EditionName, Rules, edition_name, option_names
from uno_env.files import read_at_most

__all__ = ["BatchedConfig", "ConfigError", "EnvConfig", "EvalConfig", "ImitationConfig", "Matchup", "PPOConfig",
           "PoolConfig", "RLlibConfig", "Refusal", "TrainConfig", "check_init_from", "commented_defaults",
           "config_from_dict", "load_config", "parse_overrides", "yaml_data"]

MAX_SEED = 2**32 - 1  # numpy's legacy seeding (``np.random.seed``) takes no more
MAX_STEPS = 2**62  # any count of steps beyond this overflows the int64 counters of numpy and torch
MAX_CONFIG_BYTES = 1_000_000
MAX_PROCESSES = 256  # eval.workers, ppo.workers, ppo.n_envs under subproc, rllib.num_env_runners: a process each
MAX_THREADS = 256  # torch_threads
MAX_TABLES = 2**20  # batched.num_tables: about 1.6 KB of engine state per table, so at most about 1.7 GB
MAX_ENVS = 65_536  # ppo.n_envs in one process (dummy) or split over the sharded workers
MAX_ROLLOUT = 2**22  # ppo.n_envs * ppo.n_steps: 1,009 float32 per observation, so at most about 17 GB a rollout
MAX_DECISIONS = 10_000_000  # imitation.decisions: each recorded with its observation, about 34 GB at most
MAX_BATCH = 2**20  # minibatch sizes
MAX_EPOCHS = 1_000
MAX_WIDTH = 4_096  # one hidden layer
MAX_LAYERS = 16
MAX_TURNS = 1_000_000  # env.max_turns, eval.max_decisions
MAX_GAMES = 1_000_000  # eval.games per matchup
MAX_LIST = 64  # baselines, matchups, editions, table sizes, rule option values
MAX_SNAPSHOTS = 1_000  # pool.size: frozen networks held in memory
MAX_TEXT = 4_096  # paths and agent specs
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
BATCHED_BASELINES = ("random", "random-uniform", "rule")  # and checkpoint specs (ppo:NAME, ppo:path=PATH)
OLD_RLLIB_KEYS = {
    "edition": "env.edition", "num_players": "env.num_players", "max_players": "env.max_players",
    "episode": "env.episode", "max_turns": "env.max_turns", "opponents": "rllib.opponents",
    "snapshots": "rllib.snapshots", "snapshot_every": "rllib.snapshot_every", "hidden": "ppo.hidden",
    "activation": "ppo.activation", "lr": "ppo.learning_rate", "gamma": "ppo.gamma", "lambda_": "ppo.gae_lambda",
    "entropy_coeff": "ppo.ent_coef", "train_batch_size": "rllib.train_batch_size", "minibatch_size": "ppo.batch_size",
    "num_epochs": "ppo.n_epochs", "iterations": "rllib.iterations", "num_env_runners": "rllib.num_env_runners",
    "num_envs_per_env_runner": "rllib.num_envs_per_env_runner", "address": "rllib.address",
    "num_cpus": "rllib.num_cpus", "out": "run_dir"}
"""The flat keys of the RLlib trainer's former settings file, each with the key that replaced it."""
RENAMED = {old: f"the RLlib trainer's former flat key {old} is now {new}" for old, new in OLD_RLLIB_KEYS.items()}

Text = Annotated[str, Field(max_length=MAX_TEXT)]
RuleValue = bool | Annotated[int, Field(ge=0, le=MAX_TARGET_SCORE)] | Annotated[str, Field(max_length=100)] | None
"""A ``Rules`` option's value (``first_dealer`` may be null); ``Rules`` checks it further."""


def yaml_data(text: str) -> object:
    """``yaml.safe_load(text)``, refusing aliases (``*name``) before any node is built: an alias repeats
    a whole subtree, so a few hundred bytes of nested aliases would expand to billions of values."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type hints
        def compose_node(self, parent: object, index: object) -> object:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ConfigError(f"YAML aliases (*{str(event.anchor)[:40]}) are refused: a config is plain data; "
                                  "write the value out")
            return super().compose_node(parent, index)

    loader = NoAliasLoader(text)
    try:
        data: object = loader.get_single_data()
        return data
    except ConfigError:
        raise
    except (ValueError, OverflowError) as err:  # a scalar PyYAML cannot build: an int of over 4,300 digits, a date
        raise ConfigError(f"a value that cannot be read: {str(err)[:120]}") from None
    finally:
        loader.dispose()


# ---------------------------------------------------------------------- the schema
class _Section(BaseModel):
    """Strict (no coercion: ``"8"`` is not ``8``, ``1`` is not ``true``), closed (unknown keys refused),
    frozen, finite."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


def _check_agent(spec: str) -> None:
    """Raise ValueError unless ``spec`` builds an automatic agent (a checkpoint spec must load)."""
    from agents.human import HumanAgent
    from agents.registry import make_agent

    try:
        agent = make_agent(spec, allow_import=False)  # a config is data: registered agents and checkpoints only
    except OSError as err:
        raise ValueError(str(err)) from None
    if isinstance(agent, HumanAgent):
        raise ValueError(f"{shown(spec)} plays from the keyboard; training needs agents that play by themselves")


class EnvConfig(_Section):
    """What the learner plays: each rule option fixed, or a list sampled uniformly per episode."""

    edition: str | Annotated[list[str], Field(min_length=1, max_length=MAX_LIST)] = Field(
        default="classic", description="An edition name, a list of names, or `all` (every edition).")
    num_players: (Annotated[int, Field(ge=MIN_PLAYERS, le=MAX_PLAYERS)]
                  | Annotated[list[Annotated[int, Field(ge=MIN_PLAYERS, le=MAX_PLAYERS)]],
                              Field(min_length=1, max_length=MAX_LIST)]) = Field(
        default=2, description="Table size, or a list of sizes (repeat a size to weight it); each at most `env.max_players`.")
    episode: Literal["round", "game"] = Field(
        default="round", description="`round` (one deal per episode) or `game` (to the target score).")
    reward: Literal["win", "score"] = Field(default="win", description="`win` or `score` (see `uno_env.env`).")
    reward_scale: float = Field(
        default=1.0, gt=0, le=1000, description="The learner's rewards are multiplied by this (e.g. 0.01 for `score`'s "
        "points); `truncation_reward` is not, it is given in the scaled units.")
    max_turns: int = Field(default=600, ge=1, le=MAX_TURNS,
                           description="Decisions (all seats) before an episode is truncated and bootstrapped.")
    truncation_reward: float = Field(
        default=0.0, ge=-1000, le=1000, description="0: a cut-off episode is a truncation, bootstrapped. Non-zero: it ends "
        "as an outcome with this reward (e.g. -1, a loss), so the policy cannot learn to stall rounds it would lose.")
    max_players: int = Field(default=10, ge=MIN_PLAYERS, le=MAX_PLAYERS,
                             description="Observation width; 10 lets one network play every table size.")
    skip_forced: bool = Field(default=False, description="Take the learner's forced decisions (a single legal action) "
                              "inside the env: every learner step is then a real choice.")
    rules: Annotated[dict[str, RuleValue | Annotated[list[RuleValue], Field(min_length=1, max_length=MAX_LIST)]],
                     Field(max_length=MAX_LIST)] = Field(
        default_factory=dict, description="Other `Rules` options (`uno_call`, `stacking`, ...), each a value or a "
        "list of values.")

    @field_validator("edition")
    @classmethod
    def _known_editions(cls, edition: str | list[str]) -> str | list[str]:
        for name in [edition] if isinstance(edition, str) else edition:
            if name not in EDITIONS and not (name == "all" and isinstance(edition, str)):
                raise ValueError(f"unknown edition {shown(name)} (editions: all, {', '.join(EDITIONS)})")
        return edition

    @model_validator(mode="after")
    def _tables_and_rules(self) -> Self:
        for n in self.table_sizes():
            if n > self.max_players:
                raise Refusal("num_players", f"{n} is not a table size from 2 to env.max_players ({self.max_players})")
        allowed = set(option_names()) - {"edition", "num_players"}
        for key, value in self.rules.items():
            if key not in allowed:
                raise Refusal(f"rules.{key}"[:80], f"unknown rule option (rule options: {', '.join(sorted(allowed))})")
            for v in value if isinstance(value, list) else [value]:
                for edition in self.editions():
                    try:
                        Rules.from_dict({"edition": edition, "num_players": min(self.table_sizes()), key: v})
                    except ValueError as err:
                        raise Refusal(f"rules.{key}", str(err)) from None
        return self

    def editions(self) -> list[EditionName]:
        """The editions sampled, in order, without repeats (``RulesError`` for a name that is none)."""
        chosen = list(EDITIONS) if self.edition == "all" else self.edition
        return [edition_name(name) for name in dict.fromkeys([chosen] if isinstance(chosen, str) else chosen)]

    def table_sizes(self) -> list[int]:
        """The table sizes sampled, sorted, without repeats."""
        return sorted(set([self.num_players] if isinstance(self.num_players, int) else self.num_players))


class PPOConfig(_Section):
    """PPO's hyperparameters and the network (every trainer's; the SB3 trainer's names)."""

    n_envs: int = Field(default=8, ge=1, le=MAX_ENVS, description="Environments stepped together (split across the "
                        f"vec-env workers); at most {MAX_PROCESSES} under `subproc` (one process each).")
    vec_env: Literal["dummy", "subproc", "sharded"] = Field(
        default="dummy", description="`dummy` (one process), `subproc` (SB3's, one process per env) or `sharded` (the envs "
        "split over `workers` processes, `training.sb3.vec_env`).")
    workers: int = Field(default=2, ge=1, le=MAX_PROCESSES, description="Worker processes of the `sharded` vec env "
                         "(at most `ppo.n_envs` there).")
    n_steps: int = Field(default=256, ge=1, le=MAX_ROLLOUT, description="Steps per env per rollout; `n_envs * n_steps` is "
                         f"at most {MAX_ROLLOUT}.")
    batch_size: int = Field(default=512, ge=1, le=MAX_BATCH, description="Minibatch size of the PPO update; divides "
                            "`n_envs * n_steps` (RLlib: its `minibatch_size`).")
    n_epochs: int = Field(default=4, ge=1, le=MAX_EPOCHS, description="Passes over each rollout (RLlib: `num_epochs`).")
    learning_rate: float = Field(default=3e-4, gt=0, le=1, description="Adam's learning rate (constant; RLlib: `lr`).")
    gamma: float = Field(default=0.99, gt=0, le=1, description="Discount per learner decision.")
    gae_lambda: float = Field(default=0.95, gt=0, le=1, description="GAE's lambda (RLlib: `lambda_`).")
    clip_range: float = Field(default=0.2, gt=0, le=1, description="PPO's clip range (constant; RLlib: `clip_param`).")
    ent_coef: float = Field(default=0.01, ge=0, le=1, description="Weight of the entropy bonus (RLlib: `entropy_coeff`).")
    vf_coef: float = Field(default=0.5, ge=0, le=100, description="Weight of the value loss (RLlib: `vf_loss_coeff`).")
    max_grad_norm: float = Field(default=0.5, gt=0, le=1000, description="Gradients are clipped to this global norm "
                                 "(RLlib: `grad_clip`).")
    hidden: Annotated[list[Annotated[int, Field(ge=1, le=MAX_WIDTH)]], Field(min_length=1, max_length=MAX_LAYERS)] = (
        Field(default_factory=lambda: [128, 128], description="Hidden layer widths of the policy (the value network "
                                                              "has the same shape)."))
    activation: Literal["tanh", "relu"] = Field(default="tanh", description="`tanh` or `relu`.")
    privileged_critic: bool = Field(default=False, description="The value network also reads the hidden cards "
                                    "(`training.run.critic`); the policy never does.")
    init_from: Text = Field(default="", description="A checkpoint (`agents.ppo_agent` format, same `hidden` and "
                            "`activation`) whose actor weights start the policy; the critic starts fresh "
                            "(`imitation.teacher: ppo:path=<it>` fits it). A relative path is from the working "
                            "directory.")

    @model_validator(mode="before")
    @classmethod
    def _processes(cls, data: object) -> object:
        # Before the fields: the bound of n_envs depends on vec_env, so its generic range must not answer first.
        if isinstance(data, dict) and data.get("vec_env") == "subproc":
            n = data.get("n_envs")
            if isinstance(n, int) and not isinstance(n, bool) and n > MAX_PROCESSES:
                raise Refusal("n_envs", f"must be in [1, {MAX_PROCESSES}] under vec_env subproc (one process each), "
                              f"got {shown(n)}")
        return data

    @model_validator(mode="after")
    def _rollout(self) -> Self:
        if self.vec_env == "sharded" and self.workers > self.n_envs:
            raise Refusal("workers", f"must be 1 to ppo.n_envs ({self.n_envs}) under vec_env sharded, got {self.workers}")
        if self.n_envs * self.n_steps > MAX_ROLLOUT:
            raise Refusal("n_steps", f"ppo.n_envs * ppo.n_steps ({self.n_envs * self.n_steps}) is over {MAX_ROLLOUT}, "
                          "the most steps a rollout holds")
        return self


class PoolConfig(_Section):
    """Who the learner plays (sb3, batched): baselines and frozen past snapshots of itself, drawn per seat per
    episode."""

    baselines: Annotated[list[Text], Field(min_length=1, max_length=MAX_LIST)] = Field(
        default_factory=lambda: ["rule", "random"], description="Agent specs (`agents.make_agent`) always in the "
        "pool; at least one (the first opponents).")
    baseline_share: float = Field(default=0.3, ge=0, le=1, description="Chance that a seat gets a baseline once snapshots "
                                  "exist (before that: always).")
    latest_share: float = Field(default=0.5, ge=0, le=1, description="Of the snapshot draws, the chance of the newest "
                                "snapshot (else uniform over the older ones).")
    snapshot_every: int = Field(default=50_000, ge=1, le=MAX_STEPS, description="Learner steps between snapshots added to "
                                "the pool.")
    size: int = Field(default=10, ge=1, le=MAX_SNAPSHOTS, description="Most snapshots kept (the oldest is dropped).")
    baseline_only_steps: int = Field(default=0, ge=0, le=MAX_STEPS, description="Learner steps played against baselines "
                                     "only before self-play starts.")
    deterministic: bool = Field(default=False, description="Whether snapshots play their argmax (else they sample from "
                                "their policy).")

    @field_validator("baselines")
    @classmethod
    def _agents(cls, baselines: list[str]) -> list[str]:
        for spec in baselines:
            _check_agent(spec)
        return baselines


class ImitationConfig(_Section):
    """The warm start before PPO (sb3, ``training.sb3.imitation``): fit the policy to a teacher's play."""

    teacher: Text = Field(default="", description="Agent spec of the teacher (`rule`); empty: no warm start, PPO starts "
                          "from random weights.")
    decisions: int = Field(default=500_000, ge=1, le=MAX_DECISIONS, description="Teacher decisions recorded (every seat "
                           "of every table), drawn like the training env's tables.")
    epochs: int = Field(default=6, ge=1, le=MAX_EPOCHS, description="Passes over the recorded decisions.")
    learning_rate: float = Field(default=1e-3, gt=0, le=1, description="Adam's learning rate for the fit.")
    batch_size: int = Field(default=512, ge=1, le=MAX_BATCH, description="Decisions per gradient step of the fit.")

    @field_validator("teacher")
    @classmethod
    def _agent(cls, teacher: str) -> str:
        if teacher:
            _check_agent(teacher)
        return teacher


class Matchup(_Section):
    """One periodic evaluation: the learner in one seat, ``opponent`` in every other."""

    edition: str = Field(default="classic", description="The edition played.")
    num_players: int = Field(default=2, ge=MIN_PLAYERS, le=MAX_PLAYERS, description="Table size (at most `env.max_players`).")
    opponent: Text = Field(default="rule", description="Agent spec of every other seat (a registered name or a checkpoint).")

    @field_validator("edition")
    @classmethod
    def _known_edition(cls, edition: str) -> str:
        if edition not in EDITIONS:
            raise ValueError(f"unknown edition {shown(edition)} (editions: {', '.join(EDITIONS)})")
        return edition

    @field_validator("opponent")
    @classmethod
    def _agent(cls, opponent: str) -> str:
        _check_agent(opponent)
        return opponent


class EvalConfig(_Section):
    """Periodic evaluation through the tournament harness (seat rotation, duplicate deals)."""

    every: int = Field(default=50_000, ge=0, le=MAX_STEPS, description="Learner steps between evaluations (0: only at "
                       "the end).")
    games: int = Field(default=400, ge=1, le=MAX_GAMES, description="Games per matchup.")
    matchups: Annotated[list[Matchup], Field(max_length=MAX_LIST)] = Field(
        default_factory=lambda: [Matchup(edition="classic", num_players=2, opponent="rule"),
                                 Matchup(edition="classic", num_players=4, opponent="rule"),
                                 Matchup(edition="classic", num_players=2, opponent="random")],
        description="The best checkpoint maximises the mean of win rate / chance over these.")
    seed: int = Field(default=12345, ge=0, le=MAX_SEED, description="Seed of the evaluation deals (the same deals at every "
                      "evaluation).")
    workers: int = Field(default=1, ge=1, le=MAX_PROCESSES, description="Processes playing the evaluation games.")
    max_decisions: int = Field(default=2000, ge=1, le=MAX_TURNS, description="A round still running after this many "
                               "decisions is abandoned (won by nobody).")


class BatchedConfig(_Section):
    """The batched trainer (``trainer: batched``, ``training.batched.ppo``): tables, device, stand-ins."""

    num_tables: int = Field(default=1024, ge=1, le=MAX_TABLES, description="Tables stepped together on the device (each "
                            "with its edition, size and rules drawn once).")
    device: str = Field(default="cpu", description="Torch device of the engine, the networks and the updates: `cpu`, "
                        "`cuda`, `cuda:<index>` or `mps`.")
    rule: Text = Field(default="ppo:rule_net", description="A checkpoint spec (`ppo:NAME` or `ppo:path=PATH`) playing the "
                       "seats where `pool.baselines` (or `eval`) names `rule`: RuleAgent is Python, a network fitted "
                       "to it is batched.")
    value_warmup_steps: int = Field(default=0, ge=0, le=MAX_STEPS, description="Learner steps at the start where only the "
                                    "value network is trained (the policy is frozen): a critic fitted before a "
                                    "warm-started policy (`ppo.init_from`) is changed by its advantages.")
    precision: Literal["float32", "bfloat16"] = Field(
        default="float32", description="The dtype of the networks' matrix products (`torch.autocast`; weights, Adam and the "
        "losses stay float32, checkpoints are float32). bfloat16 is faster on CPUs with AVX512-BF16 and on recent "
        "GPUs, at about 3 significant digits per product.")
    oracle_steps: int = Field(default=0, ge=0, le=MAX_STEPS, description="Oracle guiding (Suphx): for the first this many "
                              "learner steps the actor also reads the hidden cards (the privileged critic's vector), each "
                              "entry kept with a probability of 1 until `batched.oracle_decay_from`, then falling linearly "
                              "to 0 here; after that it reads zeros there, the very function it exports. Checkpoints and "
                              "the pool's snapshots hold that fair network (the public observation only). 0: off. Needs "
                              "`ppo.privileged_critic`.")
    oracle_decay_from: int = Field(default=0, ge=0, le=MAX_STEPS, description="The learner step where the keep "
                                   "probability of the oracle's entries starts to fall (at most "
                                   "`batched.oracle_steps`).")

    @field_validator("device")
    @classmethod
    def _device(cls, device: str) -> str:
        if not re.fullmatch(r"cpu|cuda(:[0-9]{1,2})?|mps", device):
            raise ValueError(f"must be cpu, cuda, cuda:<index> or mps, got {shown(device)}")
        return device

    @model_validator(mode="after")
    def _oracle(self) -> Self:
        if self.oracle_decay_from > self.oracle_steps:
            raise Refusal("oracle_decay_from", f"must be at most batched.oracle_steps ({self.oracle_steps}), the step "
                          f"where the oracle is gone; got {self.oracle_decay_from}")
        return self


class RLlibConfig(_Section):
    """What only the RLlib trainer has (``trainer: rllib``, ``python -m training.rllib``): its league of frozen
    snapshots, iterations and Ray."""

    opponents: Annotated[dict[Text, Annotated[float, Field(ge=0, le=1000)]], Field(min_length=1, max_length=MAX_LIST)] = (
        Field(default_factory=lambda: {"snapshot": 0.5, "rule": 0.25, "random": 0.25},
              description="Weights of what sits in each opponent seat: `snapshot` (a frozen past learner, played by "
                          "RLlib) or an agent spec (played inside the env); the weights sum above 0."))
    snapshots: int = Field(default=3, ge=1, le=64, description="Frozen snapshot modules (the league's size; each is on "
                           "every env runner).")
    snapshot_every: int = Field(default=5, ge=1, le=1_000_000, description="Iterations between copies of the learner into "
                                "the oldest snapshot.")
    iterations: int = Field(default=100, ge=1, le=1_000_000, description="Training iterations.")
    train_batch_size: int = Field(default=4_000, ge=1, le=MAX_ROLLOUT, description="Learner env steps per iteration "
                                  "(summed over env runners); at least `ppo.batch_size`.")
    num_env_runners: int = Field(default=0, ge=0, le=MAX_PROCESSES, description="Sampling processes (Ray actors); 0 samples "
                                 "in the driver process.")
    num_envs_per_env_runner: int = Field(default=1, ge=1, le=1024, description="Envs stepped by each env runner.")
    address: Annotated[str, Field(max_length=200)] = Field(
        default="", description="Ray cluster address: empty starts a local Ray; `auto` joins this machine's cluster; or "
        "`ray://HEAD:10001`.")
    num_cpus: int = Field(default=0, ge=0, le=MAX_PROCESSES, description="CPUs for a local Ray (0: all); ignored on a "
                          "cluster.")

    @field_validator("opponents")
    @classmethod
    def _opponents(cls, opponents: dict[str, float]) -> dict[str, float]:
        if not sum(opponents.values()) > 0:
            raise ValueError(f"needs a weight above 0, got {shown(opponents)}")
        for spec in opponents:
            if spec != "snapshot":
                _check_agent(spec)
        return opponents


RLLIB_READS = frozenset({
    "trainer", "name", "seed", "run_dir", "torch_threads", "env.edition", "env.num_players", "env.max_players",
    "env.episode", "env.max_turns", "ppo.batch_size", "ppo.n_epochs", "ppo.learning_rate", "ppo.gamma",
    "ppo.gae_lambda", "ppo.clip_range", "ppo.ent_coef", "ppo.vf_coef", "ppo.max_grad_norm", "ppo.hidden",
    "ppo.activation"})
"""The keys outside ``rllib`` that ``trainer: rllib`` reads; any other set to a value but its default is refused."""


class TrainConfig(_Section):
    """A whole training run."""

    trainer: Literal["sb3", "batched", "rllib"] = Field(
        default="sb3", description="`sb3`: sb3-contrib's MaskablePPO over the PettingZoo env (`training.sb3`); `batched`: "
        "PPO on one torch device over `uno_env.batched` (`training.batched.ppo`; needs no SB3, PettingZoo or "
        "Gymnasium); `rllib`: multi-agent self-play on Ray RLlib (`python -m training.rllib`; reads `env`, `ppo` "
        "and `rllib`).")
    name: str = Field(default="run", description="Run name: output goes to `runs/<name>` unless `run_dir` is given. "
                      "Letters, digits, `.`, `_` and `-` only (it stays under `runs/`).")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="Seeds everything (Python, numpy, torch, envs, opponents).")
    total_steps: int = Field(default=1_000_000, ge=1, le=MAX_STEPS, description="Learner decisions to train for (sb3, "
                             "batched; RLlib counts `rllib.iterations`).")
    run_dir: Text = Field(default="", description="Output directory, overriding `runs/<name>` (empty: `runs/<name>`).")
    checkpoint_every: int = Field(default=50_000, ge=1, le=MAX_STEPS, description="Learner steps between resume "
                                  "checkpoints and `last` exports.")
    torch_threads: int = Field(default=1, ge=1, le=MAX_THREADS, description="Torch threads of the learner process (1 is "
                               "fastest on a small machine).")
    progress_bar: bool = Field(default=True, description="Show training progress (a bar on a terminal, a line every few "
                               "seconds otherwise).")
    tensorboard: bool = Field(default=True, description="Write TensorBoard scalars to `<run dir>/tb`.")
    env: EnvConfig = Field(default_factory=lambda: EnvConfig())
    ppo: PPOConfig = Field(default_factory=lambda: PPOConfig())
    pool: PoolConfig = Field(default_factory=lambda: PoolConfig())
    imitation: ImitationConfig = Field(default_factory=lambda: ImitationConfig())
    eval: EvalConfig = Field(default_factory=lambda: EvalConfig())
    batched: BatchedConfig = Field(default_factory=lambda: BatchedConfig())
    rllib: RLlibConfig = Field(default_factory=lambda: RLlibConfig())

    @field_validator("name")
    @classmethod
    def _run_name(cls, name: str) -> str:
        if not RUN_NAME.fullmatch(name):
            raise ValueError(f"{shown(name)} is not a run name (1-100 letters, digits, '.', '_' or '-', starting "
                             "with a letter or digit; it names a folder under runs/)")
        return name

    @model_validator(mode="after")
    def _across_sections(self, info: ValidationInfo) -> Self:
        for i, m in enumerate(self.eval.matchups):
            if m.num_players > self.env.max_players:
                raise Refusal(f"eval.matchups[{i}].num_players", f"must be 2 to env.max_players "
                              f"({self.env.max_players}), got {m.num_players}")
        p = self.ppo
        if self.trainer != "rllib" and (p.n_envs * p.n_steps) % p.batch_size:
            raise Refusal("ppo.batch_size", f"{p.batch_size} must divide ppo.n_envs * ppo.n_steps "
                          f"({p.n_envs * p.n_steps})")
        if p.init_from and not (info.context or {}).get("resuming"):
            check_init_from(self)
        if self.trainer == "batched":
            _check_batched(self)
        elif self.batched.oracle_steps:
            raise Refusal("batched.oracle_steps", f"oracle guiding is the batched trainer's (trainer: batched); the "
                          f"{self.trainer} trainer would ignore it: leave it at 0")
        if self.trainer == "rllib":
            _check_rllib(self)
        return self

    def to_dict(self) -> dict[str, object]:
        """Plain data (what is saved with every checkpoint)."""
        return self.model_dump()

    def output_dir(self) -> Path:
        """Where this run writes."""
        return Path(self.run_dir or f"runs/{self.name}")


# ---------------------------------------------------------------------- checks across sections
def check_init_from(c: TrainConfig) -> None:
    """Raise ConfigError (key ``ppo.init_from``) unless the run's warm start, if any, is a loadable
    checkpoint of its network (checked at load unless ``resuming``; a fresh start checks it again)."""
    from agents.ppo_agent import read_checkpoint

    path = c.ppo.init_from
    if not path:
        return
    try:
        _, meta = read_checkpoint(path)
    except (ValueError, OSError) as err:
        raise ConfigError(f"ppo.init_from: {err}") from None
    ours = (list(c.ppo.hidden), c.ppo.activation, c.env.max_players)
    theirs = (list(meta["hidden"]), meta["activation"], meta["max_players"])
    if theirs != ours:
        raise ConfigError(f"ppo.init_from: {path} has hidden {theirs[0]}, activation {theirs[1]}, max_players "
                          f"{theirs[2]}; this run has {ours[0]}, {ours[1]}, {ours[2]}")


def _check_batched(c: TrainConfig) -> None:
    """What the batched trainer can seat and run, each naming its key."""
    from agents.registry import AgentSpecError, parse_spec

    if c.imitation.teacher:
        raise Refusal("imitation.teacher", "the batched trainer has no imitation warm start; start the actor from a "
                      "checkpoint (ppo.init_from, e.g. agents/checkpoints/rule_net.safetensors) and fit the value "
                      "first (batched.value_warmup_steps)")

    def checkpoint_spec(key: str, spec: str) -> bool:
        try:
            parsed = parse_spec(spec, allow_import=False)
        except AgentSpecError as err:
            raise Refusal(key, str(err)) from None
        return parsed.name == "ppo" and bool(parsed.options.get("checkpoint") or parsed.options.get("path"))

    if c.batched.oracle_steps and not c.ppo.privileged_critic:
        raise Refusal("batched.oracle_steps", "the oracle's entries are the privileged critic's hidden cards: set "
                      "ppo.privileged_critic: true, or batched.oracle_steps: 0")
    if not checkpoint_spec("batched.rule", c.batched.rule):
        raise Refusal("batched.rule", f"{shown(c.batched.rule)} is not a checkpoint spec (ppo:NAME or ppo:path=PATH)")
    try:
        _check_agent(c.batched.rule)
    except ValueError as err:
        raise Refusal("batched.rule", str(err)) from None
    for spec in c.pool.baselines:
        if spec not in BATCHED_BASELINES and not checkpoint_spec("pool.baselines", spec):
            raise Refusal("pool.baselines", f"the batched trainer seats {', '.join(BATCHED_BASELINES)} (rule through "
                          f"batched.rule) and checkpoints (ppo:NAME, ppo:path=PATH), not {shown(spec)}")


def _leaves(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, object, object]]:
    """``(dotted key, value, default)`` of every field below ``model`` that is not a section."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", value, info.get_default(call_default_factory=True)


def _check_rllib(c: TrainConfig) -> None:
    """What the RLlib trainer can run: one edition and table size, and no key it would ignore."""
    if not isinstance(c.env.edition, str) or c.env.edition == "all":
        raise Refusal("env.edition", f"the rllib trainer plays one edition, got {shown(c.env.edition)}")
    if not isinstance(c.env.num_players, int):
        raise Refusal("env.num_players", f"the rllib trainer plays one table size, got {shown(c.env.num_players)}")
    for key, value, default in _leaves(c):
        if key.split(".")[0] != "rllib" and key not in RLLIB_READS and value != default:
            raise Refusal(key, f"the rllib trainer does not read this key (set to {shown(value)}; it reads rllib.* "
                          f"and {', '.join(sorted(RLLIB_READS))}); leave it at its default {json.dumps(default)}")
    if c.ppo.batch_size > c.rllib.train_batch_size:
        raise Refusal("ppo.batch_size", f"{c.ppo.batch_size} is over rllib.train_batch_size "
                      f"({c.rllib.train_batch_size}), the batch it is drawn from")


# ---------------------------------------------------------------------- loading
def config_from_dict(data: object, resuming: bool = False) -> TrainConfig:
    """Build and check a TrainConfig from plain data; raises ConfigError naming the key (``resuming``:
    as in ``load_config``)."""
    if not isinstance(data, dict):
        raise ConfigError(f"config: expected a mapping of keys, got {type(data).__name__}")
    try:
        return TrainConfig.model_validate(data, context={"resuming": resuming})
    except ValidationError as err:
        raise refusal(TrainConfig, err, RENAMED) from None


def load_config(path: str | Path | None, overrides: Mapping[str, object] | None = None,
                resuming: bool = False) -> TrainConfig:
    """Read a YAML config (None: the defaults); ``overrides`` maps dotted keys (``ppo.n_envs``) to values;
    raises ConfigError.

    ``resuming``: the config of a run being resumed, whose weights come from its resume state, so
    ``ppo.init_from`` (read only by a fresh run) is kept as a record and its file need not exist.
    """
    data = {} if path is None else _read(Path(path))
    for dotted, value in (overrides or {}).items():
        _override(data, dotted, value)
    try:
        return config_from_dict(data, resuming=resuming)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}" if path is not None else str(err)) from None


def _read(path: Path) -> dict[str, object]:
    import yaml

    try:
        raw = read_at_most(path, MAX_CONFIG_BYTES)  # a config path may name a device or a huge file
    except FileNotFoundError:
        raise
    except OSError as err:  # a pipe (NotARegularFileError), a folder, a loop of links, no permission
        raise ConfigError(f"{path}: {err.strerror}; a config is a YAML file") from None
    if raw is None:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; a config is at most that")
    try:
        data = yaml_data(raw.decode("utf-8")) or {}
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML (tags that build Python objects are refused): {err}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a config") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text ({err})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys")
    return data


def _override(data: dict[str, object], dotted: str, value: object) -> None:
    """Set ``data[a][b][c] = value`` for ``dotted`` = ``a.b.c``, creating sections; raises ConfigError."""
    parts = dotted.split(".")
    if not all(parts):
        raise ConfigError(f"override {shown(dotted)}: a key is dotted names (ppo.n_envs), with none empty")
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            section = ".".join(parts[:depth + 1])
            raise ConfigError(f"override {dotted}: {section} is a value ({shown(child)}), not a section of keys")
        node = child
    node[parts[-1]] = value


def parse_overrides(pairs: Sequence[str]) -> dict[str, object]:
    """``["ppo.n_envs=4", "env.edition=[classic]"]`` -> ``{"ppo.n_envs": 4, ...}`` (values read as YAML)."""
    import yaml

    overrides: dict[str, object] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE (ppo.n_envs=4), got {shown(pair)}")
        try:
            overrides[key.strip()] = yaml_data(text)
        except (yaml.YAMLError, RecursionError) as err:
            raise ConfigError(f"--set {pair[:200]}: the value is not valid YAML: {err}") from None
        except ConfigError as err:
            raise ConfigError(f"--set {key.strip()[:200]}: {err}") from None
    return overrides


# ---------------------------------------------------------------------- the commented defaults
def commented_defaults(config: BaseModel | None = None) -> str:
    """``config`` (default: ``TrainConfig()``) as YAML, each key under a comment from the schema: its
    description and what it allows (a section's from its class docstring)."""
    return commented_yaml(TrainConfig() if config is None else config)
