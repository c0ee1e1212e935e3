"""Rewrite ``tests/slow_tests.txt`` from a pytest run's ``--durations=0`` report.

``make test-fast`` leaves out every test marked ``slow``: those marked in the code
(``@pytest.mark.slow``) and those listed in ``tests/slow_tests.txt``, which ``tests/conftest.py``
marks at collection. The list holds the tests whose setup, call and teardown together took more
than ``--threshold`` seconds in a measured run::

    pytest -q -n 2 -m "not slow" --durations=0 --durations-min=0 > durations.log
    python -m tests.tools.mark_slow durations.log          # keeps the tests already listed

A test is never taken off the list by a run that did not include it.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

LIST = Path(__file__).resolve().parents[1] / "slow_tests.txt"
LINE = re.compile(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(tests/\S.*?)\s*$")
HEADER = """\
# Tests marked slow by their measured duration (tests/conftest.py reads this file; make test-fast
# leaves them out). Each took more than {threshold} s (setup + call + teardown) in a measured run;
# regenerate with `python -m tests.tools.mark_slow DURATIONS_LOG` (see tests/tools/mark_slow.py).
"""


def durations(report: str) -> Counter[str]:
    """Seconds per test node id in a ``--durations=0`` report."""
    seconds: Counter[str] = Counter()
    for line in report.splitlines():
        match = LINE.match(line)
        if match:
            seconds[match.group(2)] += float(match.group(1))
    return seconds


def listed(path: Path = LIST) -> set[str]:
    """Node ids in the list (comments and blank lines skipped)."""
    if not path.is_file():
        return set()
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a pytest --durations=0 --durations-min=0 report")
    parser.add_argument("--threshold", type=float, default=0.15, help="seconds (default 0.15)")
    parser.add_argument("--list", type=Path, default=LIST, help="the list to rewrite (default tests/slow_tests.txt)")
    args = parser.parse_args(argv)
    measured = durations(args.report.read_text(encoding="utf-8"))
    if not measured:
        parser.error(f"{args.report} holds no --durations lines")
    keep = {node for node in listed(args.list) if node not in measured}
    slow = keep | {node for node, seconds in measured.items() if seconds > args.threshold}
    args.list.write_text(HEADER.format(threshold=args.threshold) + "".join(f"{n}\n" for n in sorted(slow)),
                    encoding="utf-8")
    print(f"{len(slow)} tests listed slow in {args.list} ({len(measured)} measured)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
