"""A batched UNO engine in torch (documentation to follow)."""

from .engine import DEFAULT_MAX_TURNS, UNSUPPORTED_OPTIONS, BatchedUno, State
from .tables import Tables

__all__ = ["BatchedUno", "DEFAULT_MAX_TURNS", "State", "Tables", "UNSUPPORTED_OPTIONS"]
