"""Agents by name, for the command line and configs: ``make_agent("rule:challenge=false")``.

A spec is ``name`` or ``name:key=value,key=value``; values are read as Python literals
where they parse (``3``, ``0.5``, ``true``/``false``, ``none``) and as strings otherwise.
``name`` is a registered name (``random``, ``random-uniform``, ``simple``, ``rule``,
``human``) or ``package.module:ClassName`` (then options follow after a second colon,
``agents.ismcts:ISMCTSAgent:iterations=200``).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from typing import Any

from .base import Agent
from .human import HumanAgent
from .ismcts import ISMCTSAgent
from .ppo_agent import PPOAgent
from .random_agent import RandomAgent
from .rule_agent import RuleAgent, SimpleRuleAgent

REGISTRY: dict[str, Callable[..., Agent]] = {
    "random": RandomAgent,
    "random-uniform": lambda **kw: RandomAgent(uniform=True, **kw),
    "simple": SimpleRuleAgent,
    "rule": RuleAgent,
    "human": HumanAgent,
    "ismcts": ISMCTSAgent,
    "ppo": PPOAgent.from_spec,
}


def _value(text: str) -> Any:
    lowered = text.strip().lower()
    if lowered in ("true", "false", "none"):
        return {"true": True, "false": False, "none": None}[lowered]
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def _options(text: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"agent option {part!r} is not key=value")
        options[key.strip().replace("-", "_")] = _value(value)
    return options


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec (see the module docstring); raises ValueError."""
    spec = spec.strip()
    if spec.split(":", 1)[0] in REGISTRY:
        name, _, rest = spec.partition(":")
        factory: Callable[..., Agent] = REGISTRY[name]
    elif ":" in spec and "." in spec.split(":", 1)[0]:
        module_name, _, rest = spec.partition(":")
        class_name, _, rest = rest.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"cannot load agent {spec!r}: {err}") from None
    else:
        raise ValueError(
            f"unknown agent {spec!r}; agents are {', '.join(REGISTRY)} or package.module:ClassName"
        )
    try:
        agent = factory(**_options(rest))
    except TypeError as err:
        raise ValueError(f"bad options for agent {spec!r}: {err}") from None
    if not isinstance(agent, Agent):
        raise ValueError(f"{spec!r} did not build an agents.Agent")
    return agent


def agent_label(spec: str) -> str:
    """A short display label for a spec: the spec itself, minus any module path."""
    head, sep, rest = spec.partition(":")
    if "." in head and sep:
        return rest
    return spec
