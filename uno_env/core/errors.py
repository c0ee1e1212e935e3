"""Typed errors raised by the rules engine.

Every error that bad input can cause is a ``ValueError`` subclass, so callers that only
care about "the input was wrong" can catch ``ValueError``; each message says what is
allowed. An error never leaves a game half-changed.
"""

from __future__ import annotations


class UnoError(Exception):
    """Base class of every error the engine raises on purpose."""


class IllegalActionError(UnoError, ValueError):
    """An action that is not among ``Game.legal_actions()`` right now."""


class ActionTextError(UnoError, ValueError):
    """Action text that does not parse (``play R7``, ``draw``, ``color blue``, ...)."""


class CardCodeError(UnoError, ValueError):
    """A card code that the edition does not have (``R7``, ``W4``, ``WU``, ...)."""


class DeckError(UnoError, ValueError):
    """A stacked deck that is not exactly one copy of the edition's deck."""


class RulesError(UnoError, ValueError):
    """An unknown edition or option, or an option value outside its allowed set."""


class UnknownOptionError(RulesError, TypeError):
    """A keyword that is no rule option: also a ``TypeError``, Python's error for an unexpected argument.

    Libraries that probe an env with optional keywords catch ``TypeError`` and retry without them
    (TorchRL's ``GymEnv`` passes ``frameskip`` so).
    """


class StateError(UnoError, ValueError):
    """A saved game (``Game.from_dict``) that is malformed or inconsistent."""


class SeatError(UnoError, ValueError):
    """A seat that is not an int from 0 to ``num_players - 1``."""


class GameFlowError(UnoError):
    """A call that the game's phase does not allow (``next_round`` mid-round, ...)."""
