"""Agents that play ``uno_env``: one interface, ``agent.act(observation, info) -> int``.

>>> from agents import RuleAgent, RandomAgent
>>> from agents.tournament import evaluate
>>> result = evaluate([RuleAgent(), RandomAgent(), RandomAgent(), RandomAgent()], games=200)

``agents.base`` documents the interface and ``choose_action(agent, game)``, the one way to
drive an agent at a seat (used by the tournament, the terminal game and the web server);
``agents.registry`` builds agents from specs (``make_agent("rule:challenge=false")``);
``agents.tournament`` is the evaluation harness (also ``uno-env evaluate``).
"""

from .base import Agent, action_mask, agent_observation, choose_action, legal_action_ids
from .human import HumanAgent
from .ismcts import ISMCTSAgent
from .ppo_agent import PPOAgent as PPOAgent  # noqa: F401 (re-exported)
from .random_agent import RandomAgent
from .registry import REGISTRY, AgentSpecError, make_agent
from .rule_agent import RuleAgent, SimpleRuleAgent

__all__ = ["REGISTRY", "Agent", "AgentSpecError", "HumanAgent", "ISMCTSAgent", "RandomAgent", "RuleAgent",
           "SimpleRuleAgent", "action_mask", "agent_observation", "choose_action", "legal_action_ids", "make_agent"]
