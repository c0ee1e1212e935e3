"""Agents that play ``uno_env``: one interface, ``agent.act(observation, info) -> int``.

>>> from agents import RuleAgent, RandomAgent
>>> from agents.tournament import evaluate
>>> result = evaluate([RuleAgent(), RandomAgent(), RandomAgent(), RandomAgent()], games=200)

``agents.base`` documents the interface; ``agents.tournament`` is the evaluation harness
(also ``uno-env evaluate``).
"""

from .base import Agent, legal_action_ids
from .human import HumanAgent
from .ismcts import ISMCTSAgent
from .ppo_agent import PPOAgent as PPOAgent  # noqa: F401 (re-exported)
from .random_agent import RandomAgent
from .registry import REGISTRY, make_agent
from .rule_agent import RuleAgent, SimpleRuleAgent

__all__ = ["Agent", "HumanAgent", "ISMCTSAgent", "REGISTRY", "RandomAgent", "RuleAgent", "SimpleRuleAgent", "legal_action_ids",
           "make_agent"]
