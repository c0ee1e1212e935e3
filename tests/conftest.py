"""Marks the tests listed in ``tests/slow_tests.txt`` (measured over 0.15 s) as ``slow``."""

from __future__ import annotations

import pytest

from tests.tools.mark_slow import listed

SLOW = listed()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the ``slow`` marker to every listed test (``make test-fast`` runs ``-m "not slow"``)."""
    for item in items:
        if item.nodeid in SLOW:
            item.add_marker(pytest.mark.slow)
