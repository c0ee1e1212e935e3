"""uno_env: UNO for reinforcement learning.

The rules engine is ``uno_env.core`` (pure Python). The RL adapters load on first use, so that
``import uno_env.core`` never imports PettingZoo, Gymnasium or torch:

* ``uno_env.env(**kwargs)`` / ``uno_env.raw_env(**kwargs)``: the PettingZoo AEC environment
  (``uno_env.uno_v0``, documented there), registered as ``uno_env/uno-v0`` for
  ``pettingzoo.make("aec", ...)``;
* ``uno_env.SingleAgentEnv``: a Gymnasium single-agent wrapper (``uno_env.single_agent``),
  registered as ``uno_env/UnoSingleAgent-v0`` for ``gymnasium.make``;
* ``uno_env.MaskInObservation(gym_env)``: the single-agent env's observation as
  ``{"obs", "mask"}``, where Tianshou reads an action mask (``uno_env.single_agent``);
* ``uno_env.rllib_observations(aec_env)``: the env's observations keyed for Ray RLlib's
  action-masking RLModule (``uno_env.rllib``; Ray is not imported);
* ``uno_env.round_robin(aec_env)``: the seats act in a fixed cycle (a seat waits while another
  decides), so a learner that stores one stream of the table's transitions (Tianshou) gives
  every seat its own terminal reward (``uno_env.turns``);
* ``uno_env.observe(game, seat, max_players=10)`` / ``uno_env.action_mask(game, seat)``: the
  observation encoder (``uno_env.observation``, numpy only).

Registration: Gymnasium and PettingZoo fill their registries only from imports (Gymnasium 1.x
dropped its entry-point plugins, PettingZoo never had them), and ``import uno_env`` must not import
either (``uno_env.core`` stays free of them). So ``import uno_env`` registers
``uno_env/UnoSingleAgent-v0`` and ``uno_env/uno-v0`` with whichever of the two libraries is
already imported, and the other one right after it is first imported, in any order: a one-shot
import hook that removes itself once both are registered. So the ids work after a plain
``import uno_env``, also where a library imports Gymnasium only when called (TorchRL's
``GymEnv``)::

    import uno_env
    import gymnasium as gym

    env = gym.make("uno_env/UnoSingleAgent-v0")

``uno_env.register_envs()`` registers both at once (importing both libraries); idempotent.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Callable
from typing import Any

__version__ = "0.1.0"

ENV_ID = "uno_env/uno-v0"
"""The PettingZoo AEC registry id (``pettingzoo.make("aec", ENV_ID)``)."""
GYM_ID = "uno_env/UnoSingleAgent-v0"
"""The Gymnasium registry id of ``SingleAgentEnv`` (``gymnasium.make(GYM_ID)``)."""

_LAZY = {
    "env": "uno_env.uno_v0",
    "raw_env": "uno_env.uno_v0",
    "observe": "uno_env.observation",
    "action_mask": "uno_env.observation",
    "OBSERVATION_VERSION": "uno_env.observation",
    "SingleAgentEnv": "uno_env.single_agent",
    "MaskInObservation": "uno_env.single_agent",
    "rllib_observations": "uno_env.rllib",
    "round_robin": "uno_env.turns",
}

__all__ = ["ENV_ID", "GYM_ID", "MaskInObservation", "SingleAgentEnv", "action_mask", "env", "observe", "raw_env", "register_envs",
           "rllib_observations", "round_robin"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'uno_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def register_envs() -> None:
    """Register ``uno_env/uno-v0`` with PettingZoo and ``uno_env/UnoSingleAgent-v0`` with Gymnasium.

    Imports both libraries; idempotent. A PettingZoo without a registry (before 1.27) is
    skipped: ``uno_env.env()`` works there all the same.
    """
    register_gymnasium()
    register_pettingzoo()


def register_gymnasium() -> None:
    """Register ``uno_env/UnoSingleAgent-v0`` in Gymnasium's registry (idempotent)."""
    import gymnasium

    if GYM_ID not in gymnasium.registry:
        gymnasium.register(GYM_ID, entry_point="uno_env.single_agent:SingleAgentEnv")


def register_pettingzoo() -> None:
    """Register ``uno_env/uno-v0`` in PettingZoo's AEC registry (idempotent; needs PettingZoo 1.27+)."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError:  # PettingZoo before 1.27 has no registry
        return
    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point="uno_env.uno_v0:env")


class _ThenRegister(importlib.abc.Loader):
    """A library's own loader, then ``register()`` once the library has finished importing."""

    def __init__(self, loader: Any, register: Callable[[], None]) -> None:
        self.loader = loader
        self.register = register

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self.loader  # the library's own loader from now on
        self.register()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Registers uno_env's ids right after Gymnasium or PettingZoo is imported; removes itself after both.

    A lookup alone (``importlib.util.find_spec``, as TorchRL does to see what is installed) registers
    nothing: the registration runs when the library's module is executed. The spec comes from the
    finders after this one, asked as the import system asks them (never from ``sys.modules``, so an
    imported module's own spec is never changed), with no state of its own between calls, so
    imports in other threads and nested lookups are answered alike.
    """

    def __init__(self, pending: dict[str, Callable[[], None]]) -> None:
        self.pending = pending

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.pending:
            return None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if type(finder).__name__ == _RegisterOnImport.__name__ or find is None:  # itself, or one left by a reload
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _ThenRegister(spec.loader, lambda: self.registered(fullname))
                return spec
        return None

    def registered(self, library: str) -> None:
        """Register with ``library``, just imported; leave ``sys.meta_path`` once none is pending.

        A registration that fails warns instead of raising: the import of the library itself
        succeeded, and ``uno_env.register_envs()`` names the error when called.
        """
        register = self.pending.pop(library, None)
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)
        if register is None:
            return
        try:
            register()
        except Exception as error:  # noqa: BLE001 (an import of someone else's library must not fail here)
            warnings.warn(f"uno_env could not register its env ids with {library}: {error!r}; "
                          "call uno_env.register_envs() to see the error", RuntimeWarning, stacklevel=2)


def _register_now_or_on_import() -> None:
    """Register with the libraries already imported, and hook the import of the others."""
    pending: dict[str, Callable[[], None]] = {}
    for library, register in (("gymnasium", register_gymnasium), ("pettingzoo", register_pettingzoo)):
        if library in sys.modules:
            register()
        else:
            pending[library] = register
    hooked = [finder for finder in sys.meta_path if type(finder).__name__ == _RegisterOnImport.__name__]
    if pending and not hooked:  # one hook per interpreter, also after importlib.reload(uno_env)
        sys.meta_path.insert(0, _RegisterOnImport(pending))


_register_now_or_on_import()
