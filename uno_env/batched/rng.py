"""The batched engine's randomness: a counter-based hash, one stream per table.

Every table owns a 32-bit ``key`` and a ``counter``. Each random event of a table (a deck
shuffle, a reshuffle of the discard pile, the choice of a first dealer) uses the numbers
``draw(key, counter, i)`` for ``i = 0, 1, ...`` and then advances that table's counter by one.
The numbers are pure functions of ``(key, counter, i)`` computed in 64-bit integer arithmetic
that never overflows, so a table's trajectory depends on nothing but its own key and the
actions taken at it: not on the batch size, the other tables or (by design) the device.

A shuffle of ``n`` cards sorts them by the keys ``draw(key, counter, i) * 128 + i`` (unique,
so the order is total). ``shuffle_order`` computes the same permutation in plain Python, so a
test can make ``uno_env.core.Game`` shuffle exactly as a table does.
"""

from __future__ import annotations

import torch

from ..core.cards import MAX_DECK_SIZE

__all__ = ["MASK32", "shuffle_order", "table_keys", "uniform_ints", "random_keys", "draw_python"]

MASK32 = 0xFFFFFFFF
# Multipliers below 2**31, so a 32-bit value times one stays below 2**63 (no int64 overflow).
_M1 = 0x21F0AAAD
_M2 = 0x735A2D97
_STEP = 0x9E3779B9  # times an index below 2**24: still far below 2**63
_SORT_SCALE = 1 << MAX_DECK_SIZE.bit_length()  # 128 > the largest deck, so key * 128 + position is unique


def _mix(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash of ``x`` (int64 values in ``[0, 2**32)``)."""
    x = x ^ (x >> 16)
    x = (x * _M1) & MASK32
    x = x ^ (x >> 15)
    x = (x * _M2) & MASK32
    return x ^ (x >> 15)


def _mix_python(x: int) -> int:
    x ^= x >> 16
    x = (x * _M1) & MASK32
    x ^= x >> 15
    x = (x * _M2) & MASK32
    return x ^ (x >> 15)


def _stream(key: torch.Tensor, counter: torch.Tensor) -> torch.Tensor:
    return _mix((key + _mix(counter & MASK32)) & MASK32)


def random_keys(key: torch.Tensor, counter: torch.Tensor, n: int) -> torch.Tensor:
    """``(B, n)`` int64 values in ``[0, 2**32)``: ``draw(key[b], counter[b], i)`` for ``i < n``."""
    base = _stream(key, counter)[:, None]
    index = torch.arange(n, device=key.device, dtype=torch.int64)[None, :]
    return _mix((base + index * _STEP) & MASK32)


def uniform_ints(key: torch.Tensor, counter: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """``(B,)`` int64: ``draw(key, counter, 0) % high`` (a uniform pick up to a 2**-24 bias)."""
    return random_keys(key, counter, 1)[:, 0] % high


def shuffle_keys(key: torch.Tensor, counter: torch.Tensor, length: torch.Tensor, width: int) -> torch.Tensor:
    """``(B, width)`` sort keys: unique per position below ``length``, larger than all of them beyond."""
    keys = random_keys(key, counter, width) * _SORT_SCALE
    position = torch.arange(width, device=key.device, dtype=torch.int64)[None, :]
    beyond = position >= length[:, None]
    return torch.where(beyond, (MASK32 + 1) * _SORT_SCALE + position, keys + position)


def table_keys(seed: int, num_tables: int, device: torch.device) -> torch.Tensor:
    """The 32-bit key of every table of a batch seeded with ``seed`` (any Python int)."""
    base = _mix_python(seed & MASK32) ^ _mix_python((seed >> 32) & MASK32)
    tables = torch.arange(num_tables, device=device, dtype=torch.int64)
    return _mix((tables * _STEP + base) & MASK32)


def draw_python(key: int, counter: int, i: int) -> int:
    """``draw(key, counter, i)`` in plain Python (the same number the tensors give)."""
    base = _mix_python((key + _mix_python(counter & MASK32)) & MASK32)
    return _mix_python((base + i * _STEP) & MASK32)


def shuffle_order(key: int, counter: int, n: int) -> list[int]:
    """The permutation a table with ``key`` applies at ``counter`` to ``n`` cards.

    Position ``j`` of the shuffled list holds the card that was at ``order[j]``: the engine
    shuffles the lists ``uno_env.core.Game`` shuffles (the canonical deck, top first once
    shuffled; the discard pile under its top card, bottom first) in the same orientation.
    """
    return sorted(range(n), key=lambda i: draw_python(key, counter, i) * _SORT_SCALE + i)
