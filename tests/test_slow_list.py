"""The measured slow list: parsed from a --durations report, kept across runs, applied at collection."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools import mark_slow

REPORT = """\
============================= slowest durations ==============================
0.40s call     tests/test_a.py::test_slow[flags3-you are player 1]
0.05s setup    tests/test_a.py::test_slow[flags3-you are player 1]
0.10s call     tests/test_a.py::test_quick
0.12s call     tests/test_b.py::test_two_parts
0.08s teardown tests/test_b.py::test_two_parts
"""


def test_durations_add_setup_call_and_teardown_and_keep_spaces_in_ids() -> None:
    seconds = mark_slow.durations(REPORT)
    assert seconds["tests/test_a.py::test_slow[flags3-you are player 1]"] == pytest.approx(0.45)
    assert seconds["tests/test_b.py::test_two_parts"] == pytest.approx(0.20)
    assert set(seconds) == {"tests/test_a.py::test_slow[flags3-you are player 1]", "tests/test_a.py::test_quick",
                            "tests/test_b.py::test_two_parts"}


def test_a_run_lists_its_slow_tests_and_keeps_listed_tests_it_did_not_measure(tmp_path: Path) -> None:
    report, target = tmp_path / "durations.log", tmp_path / "slow.txt"
    report.write_text(REPORT, encoding="utf-8")
    target.write_text("# old\ntests/test_c.py::test_not_run\ntests/test_a.py::test_quick\n", encoding="utf-8")
    assert mark_slow.main([str(report), "--list", str(target)]) == 0
    assert mark_slow.listed(target) == {"tests/test_a.py::test_slow[flags3-you are player 1]",
                                        "tests/test_b.py::test_two_parts", "tests/test_c.py::test_not_run"}


def test_a_report_without_durations_is_refused(tmp_path: Path) -> None:
    report = tmp_path / "empty.log"
    report.write_text("1 passed in 0.1s\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        mark_slow.main([str(report), "--list", str(tmp_path / "slow.txt")])
    assert not (tmp_path / "slow.txt").exists()


def test_collection_marks_exactly_the_listed_tests_slow() -> None:
    from tests import conftest

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid, self.markers = nodeid, []

        def add_marker(self, marker: object) -> None:
            self.markers.append(marker)

    assert len(conftest.SLOW) > 100  # the measured list is in place
    listed_id = sorted(conftest.SLOW)[0]
    items = [Item(listed_id), Item("tests/test_slow_list.py::not_listed")]
    conftest.pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [m.name for m in items[0].markers] == ["slow"] and items[1].markers == []  # type: ignore[attr-defined]
