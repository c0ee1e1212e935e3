"""Agent specs: an agent named by a short text, built without running code from data.

>>> from agents.registry import make_agent
>>> make_agent("rule:challenge=false")
RuleAgent(challenge=False, urrrhhh_min=5, greyskull_trigger=1)
>>> make_agent("ppo", edition="classic", num_players=4).label  # the shipped checkpoint for that table
'classic_4p_points'
>>> make_agent("os:system:command=true")  # from a file: no imports
Traceback (most recent call last):
...
agents.registry.AgentSpecError: agent 'os:system:command=true' names a Python module: ...

A spec is one of

* ``NAME`` or ``NAME:key=value,key=value``: a registered agent (``random``,
  ``random-uniform``, ``simple``, ``rule``, ``ismcts``, ``human``, ``ppo``, ``guided``) with options for
  its constructor. Values are numbers, ``true``/``false``, ``none`` or text
  (``rule:challenge=false,urrrhhh_min=3``, ``ismcts:iterations=200,prior=none``); each is
  checked against the constructor's signature (name and type) before anything is built.
* a PPO checkpoint, read with ``safetensors`` (no pickle, so loading one runs no code):

  - ``ppo``: the shipped checkpoint that fits the table (``shipped_checkpoint``): among the
    shipped checkpoints (``agents.ppo_agent.SHIPPED_DIR``) trained on the table's edition and size, the
    strongest as measured (the highest win rate over whole games against RuleAgents that its card
    records at that table); at a table no card measures, one trained on round points first, then the
    most specialised (fewest editions x table sizes); else ``universal``. Classic at 2 players gets
    ``classic_2p_long_points``, at 4 ``classic_4p_points``, at 3, 5 and 6 ``classic_3to6``, every other table
    ``universal`` (the measurements: docs/agents.md). Without a table (``make_agent("ppo")``) it is ``universal``. A
    network fitted to imitate another agent (metadata ``imitates``: ``rule_net``) is never
    picked: it stands in for that agent in training; name it (``ppo:rule_net``).
  - ``ppo:NAME``: a shipped checkpoint by name (``ppo:classic``, ``ppo:universal``...).
  - ``ppo:PATH`` or, the same, ``ppo:path=PATH``: a checkpoint file (relative paths are
    also tried from the repository root).
  - options after a comma: ``ppo:classic,deterministic=false,seed=3``.

  A PPO agent is labelled with its checkpoint: ``ppo[classic_points]`` (``agent_label``).
* ``guided[:CHECKPOINT][,key=value...]``: ``agents.guided.GuidedAgent``, a search guided by a
  checkpoint's policy and the privileged critic beside it (``NAME.critic.safetensors``). Without a
  checkpoint it takes ``guide_checkpoint``'s for the table: run G's actor and critic
  (``checkpoints/guide/classic_4p``, search-only, never offered as ``ppo:NAME``) at classic 4
  players, else a shipped checkpoint trained on the table, one with a critic beside it first, then
  one trained on round wins (``classic_2p_long`` and its critic at classic 2 players; at a table
  with no critic, leaf values from rollouts). ``critic=none`` or ``critic=PATH`` overrides.
* ``package.module:Class`` or ``package.module:Class:key=value,...``: any ``agents.Agent``
  subclass, **only** with ``allow_import=True`` (the command line and Python callers). The
  attribute is checked to be a subclass of ``agents.Agent`` before it is called.

Specs read from files (saved games, configs, replays) are built with the default
``allow_import=False``: they can name only registered agents and checkpoint files, so no
file can make the project import a module or call anything it names. Every refusal is an
``AgentSpecError`` (a ``ValueError``) that says what is allowed.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import math
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uno_env.core.cards import short_repr
from uno_env.core.errors import UnoError
from uno_env.files import read_at_most

from .base import Agent
from .critic import PrivilegedCritic
from .guided import GuidedAgent
from .human import HumanAgent
from .ismcts import ISMCTSAgent
from .ppo_agent import SHIPPED_DIR, SOURCE_ROOT, CheckpointError, PPOAgent, read_checkpoint
from .random_agent import RandomAgent
from .rule_agent import RuleAgent, SimpleRuleAgent

__all__ = ["CRITIC_SUFFIX", "GUIDE_DIR", "MAX_SPEC_LENGTH", "REGISTRY", "AgentSpec", "AgentSpecError", "agent_label",
           "describe_agent", "expand_repeats", "guide_checkpoint", "make_agent", "measured_win_rate", "parse_spec",
           "parse_value", "shipped_checkpoint", "shipped_checkpoint_files", "shipped_checkpoints"]

MAX_SPEC_LENGTH = 1000  # longer text is refused before it is parsed
CRITIC_SUFFIX = ".critic.safetensors"  # a privileged critic beside its actor: never a playable checkpoint
GUIDE_DIR = "guide"  # a subfolder of the checkpoints: actors shipped for search only (with their critics)
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_SHIPPED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


class AgentSpecError(UnoError, ValueError):
    """An agent spec that is malformed, names nothing allowed, or cannot be built."""


def _random_uniform(seed: int | None = None) -> RandomAgent:
    """``random-uniform``: uniform over every legal action at every decision."""
    return RandomAgent(seed=seed, uniform=True)


def _ppo(checkpoint: str | None = None, path: str | None = None, deterministic: bool = True,
         seed: int | None = None, *, edition: str | None = None, num_players: int | None = None,
         checkpoints: Path | None = None) -> PPOAgent:
    """``ppo[:CHECKPOINT][,key=value...]``: a checkpoint by shipped name or path (module docstring)."""
    if checkpoint is not None and path is not None:
        raise AgentSpecError(f"a ppo spec names one checkpoint, got {checkpoint!r} and path={path!r}")
    directory = SHIPPED_DIR if checkpoints is None else checkpoints
    text = checkpoint if checkpoint is not None else path
    if text is None:
        found = shipped_checkpoint(edition, num_players, directory)
        if found is None:
            raise AgentSpecError(f"no shipped PPO checkpoint in {directory}; "
                                 "name a checkpoint file with ppo:PATH")
    else:
        found = _checkpoint_file(text, directory)
    try:
        return PPOAgent.load(found, deterministic=deterministic, seed=seed)
    except (ValueError, OSError) as err:  # CheckpointError is a ValueError
        raise AgentSpecError(f"cannot load the PPO checkpoint {found}: {err}") from None


def _guided(checkpoint: str | None = None, critic: str | None = "auto", playouts: int | None = None,
            time_budget: float | None = None, seed: int | None = None, c_puct: float = 1.5, batch: int = 16,
            opponents: str = "sample", leaf: str | None = None, root: str = "puct", candidates: int = 4,
            margin: float = 1.0, *, edition: str | None = None,
            num_players: int | None = None, checkpoints: Path | None = None) -> GuidedAgent:
    """``guided[:CHECKPOINT][,key=value...]``: PUCT search guided by a checkpoint and its critic.

    ``checkpoint``: a shipped name (a search-only one in ``checkpoints/guide/`` first) or a path;
    none: ``guide_checkpoint`` for the table. ``critic``: ``auto`` (the ``NAME.critic.safetensors``
    beside the checkpoint, if there is one), ``none``, or a critic file's path.
    """
    directory = SHIPPED_DIR if checkpoints is None else checkpoints
    if checkpoint is None:
        actor = guide_checkpoint(edition, num_players, directory)
        if actor is None:
            raise AgentSpecError(f"no shipped PPO checkpoint in {directory} to guide the search; "
                                 "name one with guided:PATH")
    elif _SHIPPED_NAME.fullmatch(checkpoint) and (directory / GUIDE_DIR / f"{checkpoint}.safetensors").is_file():
        actor = directory / GUIDE_DIR / f"{checkpoint}.safetensors"
    else:
        actor = _checkpoint_file(checkpoint, directory)
    try:
        policy = PPOAgent.load(actor)
    except (ValueError, OSError) as err:
        raise AgentSpecError(f"cannot load the PPO checkpoint {actor}: {err}") from None
    value: PrivilegedCritic | None = None
    beside = actor.with_name(actor.name[: -len(".safetensors")] + CRITIC_SUFFIX)
    critic_path = None if critic is None or critic == "none" else beside if critic == "auto" else Path(critic)
    if critic_path is not None and critic == "auto" and not critic_path.is_file():
        critic_path = None
    if critic_path is not None:
        if not critic_path.is_file() and not critic_path.is_absolute() and (SOURCE_ROOT / critic_path).is_file():
            critic_path = SOURCE_ROOT / critic_path
        try:
            value = PrivilegedCritic.load(critic_path)
        except (CheckpointError, OSError) as err:
            raise AgentSpecError(f"cannot load the critic {critic_path}: {err}") from None
    return GuidedAgent(policy, value, playouts=playouts, time_budget=time_budget, seed=seed, c_puct=c_puct,
                       batch=batch, opponents=opponents, leaf=leaf, root=root, candidates=candidates, margin=margin)


_guided.FILE_LIMITS = GuidedAgent.FILE_LIMITS  # type: ignore[attr-defined]


REGISTRY: dict[str, Callable[..., Agent]] = {
    "random": RandomAgent,
    "random-uniform": _random_uniform,
    "simple": SimpleRuleAgent,
    "rule": RuleAgent,
    "ismcts": ISMCTSAgent,
    "human": HumanAgent,
    "ppo": _ppo,
    "guided": _guided,
}
_TABLE_AWARE = {"ppo", "guided"}  # factories that take the table (edition, num_players, checkpoints)


# ---------------------------------------------------------------------- checkpoints
def shipped_checkpoints(directory: Path | None = None) -> list[str]:
    """Names of the checkpoints in ``directory`` (default: the shipped ones, ``SHIPPED_DIR``)."""
    return [p.stem for p in shipped_checkpoint_files(directory)]


def shipped_checkpoint_files(directory: Path | None = None) -> list[Path]:
    """The checkpoint files in ``directory`` (default ``SHIPPED_DIR``), by name: actors only, never a critic."""
    folder = SHIPPED_DIR if directory is None else directory
    return _actor_files(folder) if folder.is_dir() else []


def _actor_files(folder: Path) -> list[Path]:
    """The ``*.safetensors`` files directly in ``folder`` that are not critics (``CRITIC_SUFFIX``)."""
    return sorted(p for p in folder.glob("*.safetensors") if p.is_file() and not p.name.endswith(CRITIC_SUFFIX))


def guide_checkpoint(edition: str | None = None, num_players: int | None = None,
                     directory: Path | None = None) -> Path | None:
    """The checkpoint ``guided`` searches with at a table, or None if none is shipped.

    Among the shipped checkpoints (those in the ``guide/`` subfolder too) trained on the table:
    one with a critic beside it first, then one trained on round wins (what the search
    maximises), then the most specialised, then by name; else ``shipped_checkpoint``'s choice.
    """
    folder = SHIPPED_DIR if directory is None else directory
    if edition is not None and num_players is not None and folder.is_dir():
        fits: list[tuple[bool, bool, int, str, Path]] = []
        for path in [*_actor_files(folder / GUIDE_DIR), *_actor_files(folder)]:
            try:
                _, meta = read_checkpoint(path)
            except (ValueError, OSError):
                continue
            editions, tables = meta.get("editions") or [], meta.get("num_players") or []
            if edition in editions and num_players in tables and not meta.get("imitates"):
                env = (meta.get("config") or {}).get("env") or {}
                on_wins = isinstance(env, dict) and env.get("reward", "win") == "win"
                has_critic = path.with_name(path.name[: -len(".safetensors")] + CRITIC_SUFFIX).is_file()
                fits.append((not has_critic, not on_wins, len(editions) * len(tables), path.name, path))
        if fits:
            return min(fits)[-1]
    return shipped_checkpoint(edition, num_players, folder)


def shipped_checkpoint(edition: str | None = None, num_players: int | None = None,
                       directory: Path | None = None) -> Path | None:
    """The checkpoint ``ppo`` plays at a table (see the module docstring), or None if there is none.

    Among the readable checkpoints trained on ``edition`` and ``num_players``: as measured, the one
    whose card (``<name>.json`` beside it, written by ``training.tools.ship``) records the highest win
    rate over whole games against RuleAgents at that table, pooled over its measurements
    (``measured_win_rate``); when no card
    measures the table, one trained on round points (``env.reward: score``: points decide the whole
    games people play, and a policy trained on round wins alone loses them), then the one trained on
    the fewest editions x table sizes, then by name. A checkpoint with a measurement comes before
    one without.
    Without a table, or when none fits: ``universal.safetensors``, else the first ``universal*``.
    A checkpoint that ``imitates`` another agent (``rule_net``) is never chosen.
    """
    folder = SHIPPED_DIR if directory is None else directory
    if not folder.is_dir():
        return None
    if edition is not None and num_players is not None:
        fits: list[tuple[float, bool, int, str, Path]] = []
        for path in _actor_files(folder):
            try:
                _, meta = read_checkpoint(path)
            except (ValueError, OSError):  # a damaged file is skipped, not fatal
                continue
            editions, tables = meta.get("editions") or [], meta.get("num_players") or []
            if edition in editions and num_players in tables and not meta.get("imitates"):
                env = (meta.get("config") or {}).get("env") or {}
                on_points = isinstance(env, dict) and env.get("reward") == "score"
                measured = measured_win_rate(path, edition, num_players)
                fits.append((1.0 if measured is None else -measured, not on_points, len(editions) * len(tables),
                             path.name, path))
        if fits:
            return min(fits)[-1]
    preferred = folder / "universal.safetensors"
    if preferred.is_file():
        return preferred
    found = [p for p in _actor_files(folder) if p.name.startswith("universal")]
    return found[0] if found else None


MAX_CARD_BYTES = 1 << 20  # a checkpoint's card (``<name>.json``): a few kB; a larger file is not read
MAX_CARD_GAMES = 10_000_000  # a card row claiming more games than this is taken as damaged


def measured_win_rate(checkpoint: Path, edition: str, num_players: int) -> float | None:
    """The win rate over whole games against RuleAgents at this table that the checkpoint's card records
    (``<name>.json`` beside it: its ``evaluation`` rows with ``unit: game``, ``opponent: rule``), pooled over
    every such row (wins over games: a larger measurement weighs more), or None when the card does not
    measure that table; a missing, oversized or damaged card measures nothing."""
    try:
        raw = read_at_most(checkpoint.with_suffix(".json"), MAX_CARD_BYTES)
        card = json.loads(raw) if raw is not None else None
    except (OSError, ValueError, RecursionError):
        return None
    rows = card.get("evaluation") if isinstance(card, dict) else None
    wins = games = 0.0
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        rate, count = row.get("win_rate"), row.get("games")
        if (row.get("edition") == edition and row.get("num_players") == num_players and row.get("unit") == "game"
                and row.get("opponent") == "rule" and isinstance(rate, float) and 0.0 <= rate <= 1.0
                and isinstance(count, int) and not isinstance(count, bool) and 0 < count <= MAX_CARD_GAMES):
            wins += rate * count
            games += count
    return wins / games if games else None


def _checkpoint_file(text: str, directory: Path) -> Path:
    """The checkpoint file ``text`` names: a shipped name, else a path (also tried from the repository root)."""
    if _SHIPPED_NAME.fullmatch(text) and (directory / f"{text}.safetensors").is_file():
        return directory / f"{text}.safetensors"
    path = Path(text)
    if not path.is_file() and not path.is_absolute() and (SOURCE_ROOT / path).is_file():
        path = SOURCE_ROOT / path
    if not path.is_file():
        names = ", ".join(shipped_checkpoints(directory)) or "none"
        raise AgentSpecError(f"no PPO checkpoint {text!r}: give a shipped name ({names}) or the path of a "
                             ".safetensors checkpoint file")
    return path


# ---------------------------------------------------------------------- parsing
@dataclass(frozen=True)
class AgentSpec:
    """A parsed spec: a registered ``name`` or an ``import_path`` (``module:Class``), and options."""

    text: str
    name: str | None = None  # a REGISTRY key
    import_path: tuple[str, str] | None = None  # (module, class) of a package.module:Class spec
    options: dict[str, Any] = field(default_factory=dict)


def parse_value(text: str, where: str = "option") -> bool | int | float | str | None:
    """An option value: ``true``/``false``/``none``, a Python literal number or string, else the text.

    Refuses (``AgentSpecError``, naming ``where``) non-finite numbers and literals that are not
    scalars (lists, dicts...).
    """
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false", "none"):
        return {"true": True, "false": False, "none": None}[lowered]
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return stripped
    if isinstance(value, float) and not math.isfinite(value):
        raise AgentSpecError(f"{where}: value {stripped!r} is not a finite number")
    if value is not None and not isinstance(value, bool | int | float | str):
        raise AgentSpecError(f"{where}: value {stripped!r} is not a number, true/false, none or text")
    return value


def _options(text: str, spec: str, positional: str | None = None) -> dict[str, Any]:
    """``key=value,...``; with ``positional``, a first piece without ``=`` is that option's value."""
    options: dict[str, Any] = {}
    for i, part in enumerate(p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep and i == 0 and positional is not None:
            options[positional] = part
            continue
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier() or key.startswith("_"):
            raise AgentSpecError(f"agent option {part!r} in {spec!r} is not key=value")
        if key in options:
            raise AgentSpecError(f"agent option {key!r} given twice in {spec!r}")
        options[key] = parse_value(value, f"agent {spec!r}")
    return options


def _allowed(allow_import: bool) -> str:
    names = ", ".join(REGISTRY)
    checkpoints = ", ".join(shipped_checkpoints())
    text = (f"agents are {names} (options as name:key=value,...), ppo:NAME of a shipped checkpoint "
            f"({checkpoints or 'none shipped'}) or ppo:PATH of a checkpoint file")
    if allow_import:
        text += ", or package.module:Class[:key=value,...] naming an agents.Agent subclass"
    return text


def parse_spec(spec: object, *, allow_import: bool = False) -> AgentSpec:
    """Parse a spec without building or importing anything; raises ``AgentSpecError``."""
    if not isinstance(spec, str):
        raise AgentSpecError(f"an agent spec is text, got {type(spec).__name__} {spec!r:.60}; "
                             + _allowed(allow_import))
    text = spec.strip()
    if not text or len(text) > MAX_SPEC_LENGTH:
        raise AgentSpecError(f"an agent spec has 1 to {MAX_SPEC_LENGTH} characters, got {len(text)}")
    head, _, rest = text.partition(":")
    if head in REGISTRY:
        return AgentSpec(text, name=head, options=_options(rest, text, "checkpoint" if head in ("ppo", "guided") else None))
    if not _MODULE.fullmatch(head) or not rest:
        raise AgentSpecError(f"unknown agent {text!r}; " + _allowed(allow_import))
    if not allow_import:
        raise AgentSpecError(f"agent {text!r} names a Python module: specs read from files (allow_import=False) may not import code; "
                             + _allowed(False))
    class_name, _, rest = rest.partition(":")
    if not class_name.isidentifier():
        raise AgentSpecError(f"agent {text!r}: {class_name!r} is not a class name; " + _allowed(True))
    return AgentSpec(text, import_path=(head, class_name), options=_options(rest, text))


# ---------------------------------------------------------------------- building
def _accepts(hint: Any, value: Any) -> bool:
    """Whether ``value`` fits the scalar annotation ``hint`` (anything else is left to the constructor)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_accepts(h, value) for h in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is type(None) or hint is None:
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is Callable or hint is Callable:  # a spec's values are data, never functions
        return False
    return True


def _check_file_limits(factory: Callable[..., Any], options: Mapping[str, Any], spec: str) -> None:
    """Refuse an option outside the factory's ``FILE_LIMITS`` (``ISMCTSAgent.FILE_LIMITS``), naming the range."""
    limits: Mapping[str, tuple[float, float]] = getattr(factory, "FILE_LIMITS", {})
    for key, (low, high) in limits.items():
        value = options.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and not low <= value <= high:
            raise AgentSpecError(f"{spec[:80]!r}: {key}={short_repr(value)} is outside {low:g}..{high:g}, the range a spec "
                                 "read from a file (a save, a config, the web app) may ask for; the command line "
                                 "may go further")


def _check_options(factory: Callable[..., Any], options: Mapping[str, Any], spec: str,
                   hidden: frozenset[str] = frozenset()) -> None:
    """Refuse an option the factory does not take, or a value of the wrong type, naming what it takes."""
    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: leave the types to the constructor
        hints = {}
    params = {name: p for name, p in signature.parameters.items()
              if name not in hidden and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    for key, value in options.items():
        if key not in params:
            if takes_any and key not in hidden:
                continue
            allowed = ", ".join(params) or "none"
            raise AgentSpecError(f"agent {spec!r}: unknown option {key!r}; options are {allowed}")
        hint = hints.get(key)
        if hint is not None and not _accepts(hint, value):
            raise AgentSpecError(f"agent {spec!r}: option {key}={value!r} must be {_hint_text(hint)}")


def _hint_text(hint: Any) -> str:
    text = hint.__name__ if isinstance(hint, type) else str(hint)
    return text.replace("NoneType", "none").replace("typing.", "")


def _import_agent_class(module_name: str, class_name: str, spec: str) -> type[Agent]:
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise AgentSpecError(f"cannot import {module_name!r} for agent {spec!r}: {err}") from None
    found = getattr(module, class_name, None)
    if not (isinstance(found, type) and issubclass(found, Agent)):
        if found is None:
            what = "missing"
        elif isinstance(found, type):
            what = f"the class {found.__module__}.{found.__qualname__}"
        else:
            what = f"a {type(found).__name__}"
        raise AgentSpecError(f"agent {spec!r}: {module_name}.{class_name} is {what}, not an agents.Agent subclass; "
                             "nothing was built")
    return found


def make_agent(spec: str, *, allow_import: bool = False, edition: str | None = None,
               num_players: int | None = None, checkpoints: Path | None = None) -> Agent:
    """Build the agent ``spec`` names (module docstring); raises ``AgentSpecError``.

    ``edition`` and ``num_players`` describe the table, so that ``ppo`` picks the shipped
    checkpoint for it; ``checkpoints`` replaces the shipped checkpoints' folder (``SHIPPED_DIR``).
    """
    parsed = parse_spec(spec, allow_import=allow_import)
    hidden: frozenset[str] = frozenset()
    options = dict(parsed.options)
    if parsed.name is not None:
        factory: Callable[..., Agent] = REGISTRY[parsed.name]
        if parsed.name in _TABLE_AWARE:
            hidden = frozenset({"edition", "num_players", "checkpoints"})
    else:
        assert parsed.import_path is not None
        factory = _import_agent_class(*parsed.import_path, parsed.text)
    _check_options(factory, options, parsed.text, hidden)
    if not allow_import:  # a spec from a file: the work it sets per decision is bounded, checked before anything is built
        _check_file_limits(factory, options, parsed.text)
    if hidden:
        options.update(edition=edition, num_players=num_players, checkpoints=checkpoints)
    try:
        agent = factory(**options)
    except AgentSpecError:
        raise
    except (TypeError, ValueError, ArithmeticError, RecursionError) as err:
        raise AgentSpecError(f"cannot build agent {parsed.text!r}: {err}") from None
    if not isinstance(agent, Agent):
        raise AgentSpecError(f"{parsed.text!r} did not build an agents.Agent")
    return agent


def expand_repeats(specs: Iterable[str]) -> list[str]:
    """Specs with ``SPEC*K`` written out K times (the command line's shorthand: ``random*3``)."""
    out: list[str] = []
    for spec in specs:
        head, star, times = spec.rpartition("*")
        out += [head] * int(times) if star and times.isdigit() and head else [spec]
    return out


def describe_agent(agent: Agent) -> str:
    """What an agent is, for display: ``ppo[classic_points]`` for a PPO checkpoint, else its name."""
    if isinstance(agent, PPOAgent):
        return f"ppo[{agent.label}]"
    return agent.name


def agent_label(spec: str, agent: Agent | None = None) -> str:
    """A short display label for a spec: a PPO agent as ``ppo[checkpoint]`` (plus options), a
    ``package.module:Class`` spec as its class name (plus options), else the spec itself."""
    head, sep, rest = spec.strip().partition(":")
    if isinstance(agent, PPOAgent):
        extra = [p.strip() for p in rest.split(",") if "=" in p and not p.strip().startswith("path=")]
        return describe_agent(agent) + (":" + ",".join(extra) if extra else "")
    if sep and head not in REGISTRY:
        return rest
    return spec.strip()

