"""Training configs: YAML files read into typed dataclasses, checked strictly on load.

A config is a YAML mapping with the sections below (every key optional; the defaults, each
key with its comment, are printed by ``uno-env train --print-default-config``). An unknown key,
a value of the wrong type, a number that is not finite or out of its range (each field's
docstring gives it), a seed outside 0 to 2**32 - 1, a run name that would leave ``runs/``, an
unknown edition, an impossible table size, an invalid rule option or an agent spec that is not
a registered agent or a checkpoint raises ``ConfigError`` at once, naming the key
(``ppo.learning_rate``, ``env.edition``). Configs are data: reading one runs no code (YAML is
read with PyYAML's safe loader and aliases (``*name``) are refused before any node is built, so a
few hundred bytes cannot expand to billions of values; agent specs go through
``agents.registry.make_agent`` without imports). Refusal messages show values cut short. Resource
settings have fixed caps: ``eval.workers``, ``ppo.workers`` and ``ppo.n_envs`` under ``subproc`` (one
process each) at most ``MAX_PROCESSES``, ``torch_threads`` at most ``MAX_THREADS``,
``batched.num_tables`` at most ``MAX_TABLES``.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import math
import re
import reprlib
import textwrap
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from uno_env.core import EDITIONS
from uno_env.core.rules import EditionName, Rules, edition_name, option_names
from uno_env.files import read_at_most

__all__ = ["BatchedConfig", "ConfigError", "EnvConfig", "EvalConfig", "ImitationConfig", "Matchup", "PPOConfig", "PoolConfig", "TrainConfig",
           "check_init_from", "commented_defaults", "config_from_dict", "load_config", "parse_overrides", "yaml_data"]

MAX_SEED = 2**32 - 1  # numpy's legacy seeding (``np.random.seed``) takes no more
MAX_INT = 2**62  # any count beyond this overflows the int64 counters of numpy and torch
MAX_CONFIG_BYTES = 1_000_000
MAX_PROCESSES = 256  # eval.workers, ppo.workers and ppo.n_envs under subproc each start one process apiece
MAX_THREADS = 256  # torch_threads
MAX_TABLES = 2**20  # batched.num_tables: about 1.6 KB of engine state per table, so at most about 1.7 GB
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class ConfigError(ValueError):
    """A config that cannot be used; the message names the offending key."""


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlong = 3, 6, 6, 60, 60, 40


def _shown(value: Any) -> str:
    """``repr(value)`` cut short: a refusal message never writes out unbounded data."""
    try:
        text = _SHOWN.repr(value)
    except ValueError:  # an integer too long for Python to write out (over 4,300 digits)
        return f"a {type(value).__name__} too long to show"
    return text if len(text) <= 160 else text[:157] + "..."


def yaml_data(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing aliases (``*name``) before any node is built: an alias repeats
    a whole subtree, so a few hundred bytes of nested aliases would expand to billions of values."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type hints
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ConfigError(f"YAML aliases (*{str(event.anchor)[:40]}) are refused: a config is plain data; "
                                  "write the value out")
            return super().compose_node(parent, index)

    loader = NoAliasLoader(text)
    try:
        return loader.get_single_data()
    except ConfigError:
        raise
    except (ValueError, OverflowError) as err:  # a scalar PyYAML cannot build: an int of over 4,300 digits, a date
        raise ConfigError(f"a value that cannot be read: {str(err)[:120]}") from None
    finally:
        loader.dispose()


@dataclass
class EnvConfig:
    """What the learner plays: each rule option fixed, or a list sampled uniformly per episode."""

    edition: str | list[str] = "classic"
    """An edition name, a list of names, or ``all`` (every edition)."""
    num_players: int | list[int] = 2
    """Table size, or a list of sizes (repeat a size to weight it)."""
    episode: str = "round"
    """``round`` (one deal per episode) or ``game`` (to the target score)."""
    reward: str = "win"
    """``win`` or ``score`` (see ``uno_env.env``)."""
    reward_scale: float = 1.0
    """The learner's rewards are multiplied by this (e.g. 0.01 for ``score``'s points), in (0, 1000];
    ``truncation_reward`` is not, it is given in the scaled units."""
    max_turns: int = 600
    """Decisions (all seats) before an episode is truncated and bootstrapped (1 to 1,000,000)."""
    truncation_reward: float = 0.0
    """0: a cut-off episode is a truncation, bootstrapped. Non-zero: it ends as an outcome with this
    reward (e.g. -1, a loss), so the policy cannot learn to stall rounds it would lose. In [-1000, 1000]."""
    max_players: int = 10
    """Observation width (2-10); 10 lets one network play every table size."""
    skip_forced: bool = False
    """Take the learner's forced decisions (a single legal action) inside the env: every learner
    step is then a real choice."""
    rules: dict[str, Any] = field(default_factory=dict)
    """Other ``Rules`` options (``uno_call``, ``stacking``, ...), each a value or a list of values."""

    def editions(self) -> list[EditionName]:
        """The editions sampled, in order, without repeats (``RulesError`` for a name that is none)."""
        chosen = list(EDITIONS) if self.edition == "all" else self.edition
        return [edition_name(name) for name in dict.fromkeys([chosen] if isinstance(chosen, str) else chosen)]

    def table_sizes(self) -> list[int]:
        """The table sizes sampled, sorted, without repeats."""
        return sorted(set([self.num_players] if isinstance(self.num_players, int) else self.num_players))


@dataclass
class PPOConfig:
    """MaskablePPO's hyperparameters and the network."""

    n_envs: int = 8
    """Environments stepped together (split across the vec-env workers); at most 256 under ``subproc``
    (one process each), at most 65,536 otherwise."""
    vec_env: str = "dummy"
    """``dummy`` (one process), ``subproc`` (SB3's, one process per env) or ``sharded`` (the envs
    split over ``workers`` processes, ``training.sb3.vec_env``)."""
    workers: int = 2
    """Worker processes of the ``sharded`` vec env (at most 256)."""
    n_steps: int = 256
    """Steps per env per rollout."""
    batch_size: int = 512
    """Minibatch size of the PPO update; divides ``n_envs * n_steps``."""
    n_epochs: int = 4
    """Passes over each rollout."""
    learning_rate: float = 3e-4
    """Adam's learning rate (constant), in (0, 1]."""
    gamma: float = 0.99
    """Discount per learner decision, in (0, 1]."""
    gae_lambda: float = 0.95
    """GAE's lambda, in (0, 1]."""
    clip_range: float = 0.2
    """PPO's clip range (constant), in (0, 1]."""
    ent_coef: float = 0.01
    """Weight of the entropy bonus, in [0, 1]."""
    vf_coef: float = 0.5
    """Weight of the value loss, in [0, 100]."""
    max_grad_norm: float = 0.5
    """Gradients are clipped to this norm, in (0, 1000]."""
    hidden: list[int] = field(default_factory=lambda: [128, 128])
    """Hidden layer widths of the policy, each 1 to 4096 (the value network has the same shape)."""
    activation: str = "tanh"
    """``tanh`` or ``relu``."""
    privileged_critic: bool = False
    """The value network also reads the hidden cards (``training.run.critic``); the policy never does."""
    init_from: str = ""
    """A checkpoint (``agents.ppo_agent`` format, same ``hidden`` and ``activation``) whose actor
    weights start the policy; the critic starts fresh (``imitation.teacher: ppo:path=<it>`` fits it).
    A relative path is from the working directory."""


@dataclass
class PoolConfig:
    """Who the learner plays: baselines and frozen past snapshots of itself, drawn per seat per episode."""

    baselines: list[str] = field(default_factory=lambda: ["rule", "random"])
    """Agent specs (``agents.make_agent``) always in the pool."""
    baseline_share: float = 0.3
    """Chance that a seat gets a baseline once snapshots exist (before that: always)."""
    latest_share: float = 0.5
    """Of the snapshot draws, the chance of the newest snapshot (else uniform over the older ones)."""
    snapshot_every: int = 50_000
    """Learner steps between snapshots added to the pool."""
    size: int = 10
    """Most snapshots kept (the oldest is dropped)."""
    baseline_only_steps: int = 0
    """Learner steps played against baselines only before self-play starts."""
    deterministic: bool = False
    """Whether snapshots play their argmax (else they sample from their policy)."""


@dataclass
class ImitationConfig:
    """The warm start before PPO (``training.sb3.imitation``): fit the policy to a teacher's play."""

    teacher: str = ""
    """Agent spec of the teacher (``rule``); empty: no warm start, PPO starts from random weights."""
    decisions: int = 500_000
    """Teacher decisions recorded (every seat of every table), drawn like the training env's tables."""
    epochs: int = 6
    """Passes over the recorded decisions."""
    learning_rate: float = 1e-3
    """Adam's learning rate for the fit, in (0, 1]."""
    batch_size: int = 512
    """Decisions per gradient step of the fit."""


@dataclass
class Matchup:
    """One periodic evaluation: the learner in one seat, ``opponent`` in every other."""

    edition: str = "classic"
    """The edition played."""
    num_players: int = 2
    """Table size (2 to ``env.max_players``)."""
    opponent: str = "rule"
    """Agent spec of every other seat (a registered name or a checkpoint)."""


@dataclass
class EvalConfig:
    """Periodic evaluation through the tournament harness (seat rotation, duplicate deals)."""

    every: int = 50_000
    """Learner steps between evaluations (0: only at the end)."""
    games: int = 400
    """Games per matchup."""
    matchups: list[Matchup] = field(default_factory=lambda: [
        Matchup("classic", 2, "rule"), Matchup("classic", 4, "rule"), Matchup("classic", 2, "random")])
    """The best checkpoint maximises the mean of win rate / chance over these."""
    seed: int = 12345
    """Seed of the evaluation deals (the same deals at every evaluation), 0 to 2**32 - 1."""
    workers: int = 1
    """Processes playing the evaluation games, 1 to 256."""
    max_decisions: int = 2000
    """A round still running after this many decisions is abandoned (won by nobody)."""


@dataclass
class BatchedConfig:
    """The batched trainer (``trainer: batched``, ``training.batched.ppo``): tables, device, stand-ins."""

    num_tables: int = 1024
    """Tables stepped together on the device (each with its edition, size and rules drawn once), 1 to 1,048,576."""
    device: str = "cpu"
    """Torch device of the engine, the networks and the updates: ``cpu``, ``cuda`` or ``cuda:<index>``."""
    rule: str = "ppo:rule_net"
    """A checkpoint spec (``ppo:NAME`` or ``ppo:path=PATH``) playing the seats where ``pool.baselines``
    (or ``eval``) names ``rule``: RuleAgent is Python, a network fitted to it is batched."""
    value_warmup_steps: int = 0
    """Learner steps at the start where only the value network is trained (the policy is frozen): a
    critic fitted before a warm-started policy (``ppo.init_from``) is changed by its advantages."""
    precision: str = "float32"
    """``float32`` or ``bfloat16``: the dtype of the networks' matrix products (``torch.autocast``; weights,
    Adam and the losses stay float32, checkpoints are float32). bfloat16 is about 3x faster on CPUs with
    AVX512-BF16 and on recent GPUs, at about 3 significant digits per product."""


@dataclass
class TrainConfig:
    """A whole training run."""

    trainer: str = "sb3"
    """``sb3``: sb3-contrib's MaskablePPO over the PettingZoo env (``training.cli``); ``batched``: PPO on one
    torch device over ``uno_env.batched`` (``training.batched.ppo``; needs no SB3, PettingZoo or Gymnasium)."""
    name: str = "run"
    """Run name: output goes to ``runs/<name>`` unless ``run_dir`` is given. Letters, digits, ``.``,
    ``_`` and ``-`` only (it stays under ``runs/``)."""
    seed: int = 0
    """Seeds everything (Python, numpy, torch, envs, opponents), 0 to 2**32 - 1."""
    total_steps: int = 1_000_000
    """Learner decisions to train for."""
    run_dir: str = ""
    """Output directory, overriding ``runs/<name>`` (empty: ``runs/<name>``)."""
    checkpoint_every: int = 50_000
    """Learner steps between resume checkpoints and ``last`` exports."""
    torch_threads: int = 1
    """Torch threads of the learner process (1 is fastest on a small machine), 1 to 256."""
    progress_bar: bool = True
    """Show training progress (a bar on a terminal, a line every few seconds otherwise)."""
    tensorboard: bool = True
    """Write TensorBoard scalars to ``<run dir>/tb``."""
    env: EnvConfig = field(default_factory=EnvConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    pool: PoolConfig = field(default_factory=PoolConfig)
    imitation: ImitationConfig = field(default_factory=ImitationConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    batched: BatchedConfig = field(default_factory=BatchedConfig)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what is saved with every checkpoint)."""
        return dataclasses.asdict(self)

    def output_dir(self) -> Path:
        """Where this run writes."""
        return Path(self.run_dir or f"runs/{self.name}")


# ---------------------------------------------------------------------- strict loading
def load_config(path: str | Path, overrides: dict[str, Any] | None = None, resuming: bool = False) -> TrainConfig:
    """Read a YAML config; ``overrides`` maps dotted keys (``ppo.n_envs``) to values; raises ConfigError.

    ``resuming``: the config of a run being resumed, whose weights come from its resume state, so
    ``ppo.init_from`` (read only by a fresh run) is kept as a record and its file need not exist.
    """
    import yaml

    path = Path(path)
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
    for dotted, value in (overrides or {}).items():
        _override(data, dotted, value)
    try:
        return config_from_dict(data, resuming=resuming)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def _override(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``data[a][b][c] = value`` for ``dotted`` = ``a.b.c``, creating sections; raises ConfigError."""
    parts = dotted.split(".")
    if not all(parts):
        raise ConfigError(f"override {_shown(dotted)}: a key is dotted names (ppo.n_envs), with none empty")
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            section = ".".join(parts[:depth + 1])
            raise ConfigError(f"override {dotted}: {section} is a value ({_shown(child)}), not a section of keys")
        node = child
    node[parts[-1]] = value


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["ppo.n_envs=4", "env.edition=[classic]"]`` -> ``{"ppo.n_envs": 4, ...}`` (values read as YAML)."""
    import yaml

    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE (ppo.n_envs=4), got {_shown(pair)}")
        try:
            overrides[key.strip()] = yaml_data(text)
        except (yaml.YAMLError, RecursionError) as err:
            raise ConfigError(f"--set {pair[:200]}: the value is not valid YAML: {err}") from None
        except ConfigError as err:
            raise ConfigError(f"--set {key.strip()[:200]}: {err}") from None
    return overrides


def config_from_dict(data: dict[str, Any], resuming: bool = False) -> TrainConfig:
    """Build and check a TrainConfig from plain data; raises ConfigError naming the key (``resuming``:
    as in ``load_config``)."""
    config: TrainConfig = _build(TrainConfig, data, "")
    _check_semantics(config, check_init=not resuming)
    return config


def _build(cls: Any, data: Any, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names:
            raise ConfigError(f"unknown key {prefix}{key!s} (known: {', '.join(sorted(names))})")
    values = {key: _convert(hints[key], value, f"{prefix}{key}") for key, value in data.items()}
    return cls(**values)


def _convert(hint: Any, value: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, key + ".")
    if origin in (Union, types.UnionType):
        errors = []
        for option in typing.get_args(hint):
            try:
                return _convert(option, value, key)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(f"{key}: expected {_describe(hint)}, got {_shown(value)}")
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list of {_describe(item)}, got {_shown(value)}")
        return [_convert(item, v, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ConfigError(f"{key}: expected a mapping, got {_shown(value)}")
        return dict(value)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {_shown(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected an integer, got {_shown(value)}")
        if abs(value) > MAX_INT:
            raise ConfigError(f"{key}: an integer of {value.bit_length()} bits is out of range (at most 2**62)")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {_shown(value)}")
        if not math.isfinite(value):
            raise ConfigError(f"{key}: expected a finite number, got {_shown(value)}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {_shown(value)}")
        return value
    raise ConfigError(f"{key}: unsupported type {hint!r}")  # pragma: no cover (a bug in the dataclasses)


def _describe(hint: Any) -> str:
    if typing.get_origin(hint) in (Union, types.UnionType):
        return " or ".join(_describe(h) for h in typing.get_args(hint))
    if typing.get_origin(hint) is list:
        return f"a list of {_describe(typing.get_args(hint)[0])}"
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(hint, str(hint))


def _positive(key: str, value: float, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{key}: must be {'non-negative' if allow_zero else 'positive'}, got {_shown(value)}")


def _within(key: str, value: float, low: float, high: float, low_open: bool = False) -> None:
    """Raise ConfigError unless ``low <= value <= high`` (``low < value`` when ``low_open``)."""
    if not (low < value if low_open else low <= value) or value > high:
        raise ConfigError(f"{key}: must be in {'(' if low_open else '['}{low}, {high}], got {_shown(value)}")


def _check_agent(key: str, spec: str) -> None:
    """Raise ConfigError naming ``key`` unless ``spec`` builds an automatic agent (a checkpoint spec must load)."""
    from agents.human import HumanAgent
    from agents.registry import make_agent

    try:
        agent = make_agent(spec, allow_import=False)  # a config is data: registered agents and checkpoints only
    except (ValueError, OSError) as err:
        raise ConfigError(f"{key}: {err}") from None
    if isinstance(agent, HumanAgent):
        raise ConfigError(f"{key}: {_shown(spec)} plays from the keyboard; training needs agents that play by themselves")


def check_init_from(c: TrainConfig) -> None:
    """Raise ConfigError (key ``ppo.init_from``) unless the run's warm start, if any, is a loadable
    checkpoint of its network (checked at load unless ``resuming``; a fresh start checks it again)."""
    if c.ppo.init_from:
        _check_init(c.ppo.init_from, c.ppo.hidden, c.ppo.activation, c.env.max_players)


def _check_init(path: str, hidden: list[int], activation: str, max_players: int) -> None:
    """Raise ConfigError (key ``ppo.init_from``) unless ``path`` is a loadable checkpoint of this network."""
    from agents.ppo_agent import read_checkpoint

    try:
        _, meta = read_checkpoint(path)
    except (ValueError, OSError) as err:
        raise ConfigError(f"ppo.init_from: {err}") from None
    theirs = (list(meta["hidden"]), meta["activation"], meta["max_players"])
    if theirs != (list(hidden), activation, max_players):
        raise ConfigError(f"ppo.init_from: {path} has hidden {theirs[0]}, activation {theirs[1]}, max_players "
                          f"{theirs[2]}; this run has {list(hidden)}, {activation}, {max_players}")


def _check_semantics(c: TrainConfig, check_init: bool = True) -> None:
    """Value checks beyond types, each naming its key."""
    env = c.env
    if env.edition != "all":
        for name in [env.edition] if isinstance(env.edition, str) else env.edition:
            if name not in EDITIONS:
                raise ConfigError(f"env.edition: unknown edition {_shown(name)} (editions: all, {', '.join(EDITIONS)})")
    if isinstance(env.edition, list) and not env.edition:
        raise ConfigError("env.edition: the list is empty")
    sizes = [env.num_players] if isinstance(env.num_players, int) else env.num_players
    if not sizes:
        raise ConfigError("env.num_players: the list is empty")
    for n in sizes:
        if not 2 <= n <= env.max_players:
            raise ConfigError(f"env.num_players: {n} is not a table size from 2 to env.max_players ({env.max_players})")
    if not 2 <= env.max_players <= 10:
        raise ConfigError(f"env.max_players: must be 2-10, got {env.max_players}")
    if env.episode not in ("round", "game"):
        raise ConfigError(f"env.episode: must be round or game, got {_shown(env.episode)}")
    if env.reward not in ("win", "score"):
        raise ConfigError(f"env.reward: must be win or score, got {_shown(env.reward)}")
    _within("env.max_turns", env.max_turns, 1, 1_000_000)
    _within("env.reward_scale", env.reward_scale, 0, 1000, low_open=True)
    _within("env.truncation_reward", env.truncation_reward, -1000, 1000)
    allowed = set(option_names()) - {"edition", "num_players"}
    for key, value in env.rules.items():
        if key not in allowed:
            raise ConfigError(f"unknown key env.rules.{key} (rule options: {', '.join(sorted(allowed))})")
        for v in value if isinstance(value, list) else [value]:
            for edition in env.editions():
                try:
                    Rules(edition=edition, num_players=min(sizes), **{key: v})
                except ValueError as err:
                    raise ConfigError(f"env.rules.{key}: {err}") from None
    p = c.ppo
    for key in ("n_envs", "n_steps", "batch_size", "n_epochs"):
        _positive(f"ppo.{key}", getattr(p, key))
    for key in ("learning_rate", "clip_range", "gamma", "gae_lambda"):
        _within(f"ppo.{key}", getattr(p, key), 0, 1, low_open=True)
    _within("ppo.max_grad_norm", p.max_grad_norm, 0, 1000, low_open=True)
    _within("ppo.ent_coef", p.ent_coef, 0, 1)
    _within("ppo.vf_coef", p.vf_coef, 0, 100)
    if p.vec_env not in ("dummy", "subproc", "sharded"):
        raise ConfigError(f"ppo.vec_env: must be dummy, subproc or sharded, got {_shown(p.vec_env)}")
    _within("ppo.n_envs", p.n_envs, 1, MAX_PROCESSES if p.vec_env == "subproc" else 65_536)
    if p.vec_env == "sharded" and not 1 <= p.workers <= min(p.n_envs, MAX_PROCESSES):
        raise ConfigError(f"ppo.workers: must be 1 to ppo.n_envs ({p.n_envs}) and at most {MAX_PROCESSES}, "
                          f"got {p.workers}")
    if p.activation not in ("tanh", "relu"):
        raise ConfigError(f"ppo.activation: must be tanh or relu, got {_shown(p.activation)}")
    if not p.hidden or any(not 1 <= h <= 4096 for h in p.hidden):
        raise ConfigError(f"ppo.hidden: needs at least one layer width, each 1 to 4096, got {_shown(p.hidden)}")
    if (p.n_envs * p.n_steps) % p.batch_size:
        raise ConfigError(f"ppo.batch_size: {p.batch_size} must divide ppo.n_envs * ppo.n_steps "
                          f"({p.n_envs * p.n_steps})")
    pool = c.pool
    if not pool.baselines:
        raise ConfigError("pool.baselines: needs at least one baseline (the first opponents)")
    for spec in pool.baselines:
        _check_agent("pool.baselines", spec)
    for key in ("baseline_share", "latest_share"):
        if not 0 <= getattr(pool, key) <= 1:
            raise ConfigError(f"pool.{key}: must be in [0, 1], got {_shown(getattr(pool, key))}")
    _positive("pool.snapshot_every", pool.snapshot_every)
    _positive("pool.size", pool.size)
    _positive("pool.baseline_only_steps", pool.baseline_only_steps, allow_zero=True)
    if p.init_from and check_init:
        _check_init(p.init_from, p.hidden, p.activation, env.max_players)
    im = c.imitation
    if im.teacher:
        _check_agent("imitation.teacher", im.teacher)
    for key in ("decisions", "epochs", "batch_size"):
        _positive(f"imitation.{key}", getattr(im, key))
    _within("imitation.learning_rate", im.learning_rate, 0, 1, low_open=True)
    e = c.eval
    _positive("eval.every", e.every, allow_zero=True)
    _positive("eval.games", e.games)
    _within("eval.workers", e.workers, 1, MAX_PROCESSES)
    _positive("eval.max_decisions", e.max_decisions)
    for i, m in enumerate(e.matchups):
        if m.edition not in EDITIONS:
            raise ConfigError(f"eval.matchups[{i}].edition: unknown edition {_shown(m.edition)}")
        if not 2 <= m.num_players <= env.max_players:
            raise ConfigError(f"eval.matchups[{i}].num_players: must be 2 to env.max_players, got {m.num_players}")
        _check_agent(f"eval.matchups[{i}].opponent", m.opponent)
    _within("eval.seed", e.seed, 0, MAX_SEED)
    _within("seed", c.seed, 0, MAX_SEED)
    if not RUN_NAME.fullmatch(c.name):
        raise ConfigError(f"name: {_shown(c.name)} is not a run name (1-100 letters, digits, '.', '_' or '-', starting with "
                          "a letter or digit; it names a folder under runs/)")
    _positive("total_steps", c.total_steps)
    _positive("checkpoint_every", c.checkpoint_every)
    _within("torch_threads", c.torch_threads, 1, MAX_THREADS)
    if c.trainer not in ("sb3", "batched"):
        raise ConfigError(f"trainer: must be sb3 or batched, got {_shown(c.trainer)}")
    if c.trainer == "batched":
        _check_batched(c)


BATCHED_BASELINES = ("random", "random-uniform", "rule")  # and checkpoint specs (ppo:NAME, ppo:path=PATH)


def _check_batched(c: TrainConfig) -> None:
    """What the batched trainer can seat and run, each naming its key."""
    from agents.registry import AgentSpecError, parse_spec

    b = c.batched
    _within("batched.num_tables", b.num_tables, 1, MAX_TABLES)
    _positive("batched.value_warmup_steps", b.value_warmup_steps, allow_zero=True)
    if b.precision not in ("float32", "bfloat16"):
        raise ConfigError(f"batched.precision: must be float32 or bfloat16, got {_shown(b.precision)}")
    if not re.fullmatch(r"cpu|cuda(:[0-9]{1,2})?|mps", b.device):
        raise ConfigError(f"batched.device: must be cpu, cuda, cuda:<index> or mps, got {_shown(b.device)}")
    if c.imitation.teacher:
        raise ConfigError("imitation.teacher: the batched trainer has no imitation warm start; start the actor from "
                          "a checkpoint (ppo.init_from, e.g. agents/checkpoints/rule_net.safetensors) and fit the value "
                          "first (batched.value_warmup_steps)")

    def checkpoint_spec(key: str, spec: str) -> bool:
        try:
            parsed = parse_spec(spec, allow_import=False)
        except AgentSpecError as err:
            raise ConfigError(f"{key}: {err}") from None
        return parsed.name == "ppo" and bool(parsed.options.get("checkpoint") or parsed.options.get("path"))

    if not checkpoint_spec("batched.rule", b.rule):
        raise ConfigError(f"batched.rule: {_shown(b.rule)} is not a checkpoint spec (ppo:NAME or ppo:path=PATH)")
    _check_agent("batched.rule", b.rule)
    for spec in c.pool.baselines:
        if spec not in BATCHED_BASELINES and not checkpoint_spec("pool.baselines", spec):
            raise ConfigError(f"pool.baselines: the batched trainer seats {', '.join(BATCHED_BASELINES)} (rule through "
                              f"batched.rule) and checkpoints (ppo:NAME, ppo:path=PATH), not {_shown(spec)}")


# ---------------------------------------------------------------------- the commented defaults
def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a config dataclass (read from the source; empty if unavailable)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):  # no source (a frozen build): no comments
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs = {}
    for statement, following in zip(body, body[1:], strict=False):
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def commented_defaults(config: Any = None, indent: str = "") -> str:
    """``config`` (default: ``TrainConfig()``) as YAML, each key under a comment from its field's docstring
    (a section's from its class docstring)."""
    config = TrainConfig() if config is None else config
    docs = field_docs(type(config))
    lines = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        doc = docs.get(f.name) or (" ".join((type(value).__doc__ or "").split()) if dataclasses.is_dataclass(value)
                                   else "")
        lines += [f"{indent}# {line}" for line in textwrap.wrap(doc.replace("``", "`"), 100 - len(indent))]
        if dataclasses.is_dataclass(value):
            lines += [f"{indent}{f.name}:", commented_defaults(value, indent + "  ")]
        elif isinstance(value, list) and value and dataclasses.is_dataclass(value[0]):
            lines += [f"{indent}{f.name}:"] + [f"{indent}  - {json.dumps(dataclasses.asdict(v))}" for v in value]
        else:  # JSON is YAML's flow style: one line per value
            lines.append(f"{indent}{f.name}: {json.dumps(value)}")
    return "\n".join(lines)
