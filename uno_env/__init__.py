"""uno_env: UNO for reinforcement learning.

The rules engine is ``uno_env.core`` (pure Python). The RL adapters load lazily, so that
``import uno_env.core`` never imports PettingZoo, Gymnasium or torch:

* ``uno_env.env(**kwargs)`` / ``uno_env.raw_env(**kwargs)``: the PettingZoo AEC environment
  (``uno_env.env``), registered as ``uno_env/uno-v0`` for ``pettingzoo.make("aec", ...)``;
* ``uno_env.observe(game, seat, max_players=10)`` / ``uno_env.action_mask(game, seat)``: the
  observation encoder (``uno_env.observation``, numpy only);
* ``uno_env.SingleAgentEnv``: a Gymnasium single-agent wrapper (``uno_env.single_agent``).

Registration: PettingZoo 1.27 fills its registry only from imports (it has no entry-point
discovery), so importing ``uno_env`` registers ``uno_env/uno-v0`` at once when PettingZoo is
already imported, and otherwise as soon as PettingZoo is imported later (a one-shot import
hook; importing ``uno_env.env`` registers too).
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
from typing import Any

__version__ = "0.1.0"

ENV_ID = "uno_env/uno-v0"

_LAZY = {
    "env": "uno_env.env",
    "raw_env": "uno_env.env",
    "observe": "uno_env.observation",
    "action_mask": "uno_env.observation",
    "OBSERVATION_VERSION": "uno_env.observation",
    "SingleAgentEnv": "uno_env.single_agent",
}

__all__ = ["ENV_ID", "SingleAgentEnv", "action_mask", "env", "observe", "raw_env", "register_envs"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'uno_env' has no attribute {name!r}")
    loaded = importlib.import_module(module)
    # ``uno_env.env`` is the submodule itself, which is callable as the ``env()`` factory.
    value = loaded if module == f"uno_env.{name}" else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def register_envs() -> None:
    """Register ``uno_env/uno-v0`` in PettingZoo's AEC registry (imports PettingZoo; idempotent)."""
    from pettingzoo.env_registry.registration import aec_registry, register

    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point="uno_env.env:env")


class _RegisterWhenPettingZooLoads(importlib.abc.MetaPathFinder):
    """Registers the env right after ``pettingzoo`` itself has finished importing."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "pettingzoo":
            return None
        _remove_hook()
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module: Any) -> None:
            original(module)
            try:
                del loader.exec_module  # back to the class's method
            except AttributeError:
                pass
            _register_if_possible()

        loader.exec_module = exec_module
        return spec


def _register_if_possible() -> None:
    try:
        register_envs()
    except ImportError:  # a PettingZoo older than 1.27 has no registry; uno_env.env() still works
        pass


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterWhenPettingZooLoads)]


if "pettingzoo" in sys.modules:
    _register_if_possible()
elif not any(isinstance(f, _RegisterWhenPettingZooLoads) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterWhenPettingZooLoads())
