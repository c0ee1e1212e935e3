"""Marks the tests listed in ``tests/slow_tests.txt`` (measured over 0.15 s) as ``slow``; the ``batched_mirror`` fixture."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.batched_mirror import MirrorRecord, done, start
from tests.tools.mark_slow import listed

SLOW = listed()
MIRRORED: dict[str, dict[str, Any]] = {}  # node id -> MirrorRecord.as_property(), gathered from the reports


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the ``slow`` marker to every listed test (``make test-fast`` runs ``-m "not slow"``)."""
    for item in items:
        if item.nodeid in SLOW:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def batched_mirror(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[MirrorRecord]:
    """Run the test's games on the batched engine too, compared after every step (``tests/batched_mirror.py``)."""
    record = MirrorRecord()
    start(record, request.node.nodeid, monkeypatch)
    yield record
    done(record)
    request.node.user_properties.append(("batched_mirror", record.as_property()))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Gather the mirror records (also from pytest-xdist workers: user_properties travel with the reports)."""
    if report.when == "teardown":
        for name, value in report.user_properties:
            if name == "batched_mirror":
                MIRRORED[report.nodeid] = value


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Totals of the batched mirror: scenarios mirrored, and those not, with their reasons."""
    if not MIRRORED:
        return
    records = list(MIRRORED.values())
    mirrored = [r for r in records if r["not_mirrored"] is None]
    total = Counter[str]()
    for r in mirrored:
        total.update({k: r[k] for k in ("steps", "compared", "deals", "refusals", "rebuilt", "sampled_out")})
    write = terminalreporter.write_line
    write(f"batched mirror: {len(mirrored)} of {len(records)} scenarios ran on both engines "
          f"({total['steps']} steps, {total['compared']} positions compared, {total['deals']} deals, "
          f"{total['refusals']} refusals, {total['rebuilt']} twins rebuilt; "
          f"{total['sampled_out']} steps and deals of sampled scenarios not replayed)")
    for reason, count in Counter(r["not_mirrored"] for r in records if r["not_mirrored"] is not None).most_common():
        write(f"  not mirrored ({count}): {reason}")
    for reason, count in Counter(u for r in mirrored for u in r["unchecked"]).most_common():
        write(f"  not compared, in {count} scenarios: {reason}")
