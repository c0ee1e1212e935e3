"""``uno-env benchmark``: an agent's benchmark card under the fixed protocol ``uno-bench/1``.

::

    uno-env benchmark ppo --quick
    uno-env benchmark mypkg.agents:MyAgent --players 2 4 --workers 2 --out cards/my-agent

A thin command over ``agents.benchmark``: the agent is a spec (``agents.registry``; typed
here, so ``package.module:Class`` is allowed), played against the protocol's reference pool at
each ``--players`` table of ``--edition``. Only the protocol's two sizes are offered, full
(default) and ``--quick``, so that every card is comparable with every other of its kind. The
card goes to stdout as Markdown; ``--out STEM`` also writes ``STEM.md`` and ``STEM.json``
(atomically). Every argument and the output paths are checked before the first game (a bad one
exits with status 2 and plays nothing); progress and the time taken go to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time

from agents.benchmark import PROTOCOL, benchmark
from agents.registry import AgentSpecError
from uno_env.core import EDITIONS

from .evaluate import _positive_int, check_writable

__all__ = ["build_parser", "main", "output_stem"]


def output_stem(path: str) -> str:
    """The stem ``--out`` writes ``.md`` and ``.json`` beside: the path less a ``.md`` or ``.json`` ending."""
    for ext in (".md", ".json"):
        if path.lower().endswith(ext) and len(path) > len(ext):
            return path[: -len(ext)]
    return path


def build_parser() -> argparse.ArgumentParser:
    """The ``uno-env benchmark`` argument parser (every flag has a help line)."""
    pool = ", ".join(r.spec for r in PROTOCOL.references)
    rounds = ", ".join(f"{r.spec} {r.rounds:,}/{r.quick_rounds:,}" for r in PROTOCOL.references)
    parser = argparse.ArgumentParser(
        prog="uno-env benchmark",
        description=f"Benchmark an agent under the fixed protocol {PROTOCOL.version}: win rates (95% Wilson "
                    f"intervals) against the reference pool ({pool}) and an OpenSkill rating, per table size.",
        epilog="examples:\n  uno-env benchmark ppo --quick\n"
               "  uno-env benchmark mypkg.agents:MyAgent --players 2 4 --workers 2 --out cards/my-agent\n"
               f"rounds per reference (full/quick): {rounds}; seed {PROTOCOL.seed}; one round per game,\n"
               "  seats rotated, duplicate deals; the agent holds one seat, the reference all the others.\n"
               "agents: as for uno-env evaluate (random, simple, rule, ismcts, guided, ppo, ppo:NAME, ppo:PATH,\n"
               "  package.module:Class; options as name:key=value,key=value).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("agent", metavar="AGENT", help="the agent spec to benchmark")
    parser.add_argument("--edition", default="classic", choices=sorted(EDITIONS), help="which deck (default classic)")
    parser.add_argument("--players", type=int, nargs="+", default=[2], metavar="N",
                        help="table sizes, each 2 to 10 (default 2); several make one card with a section each")
    parser.add_argument("--quick", action="store_true",
                        help="the protocol's quick size (a tenth of the rounds; a few minutes on 2 cores)")
    parser.add_argument("--workers", type=_positive_int, default=1,
                        help="worker processes (the card does not depend on it; default 1)")
    parser.add_argument("--out", metavar="STEM", help="also write the card to STEM.md and STEM.json")
    parser.add_argument("--no-progress", action="store_true", help="print no progress on stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``uno-env benchmark``; returns the exit status (2 for bad arguments, nothing played)."""
    args = build_parser().parse_args(argv)
    stem = output_stem(args.out) if args.out else None
    start = time.perf_counter()
    try:
        if stem is not None:
            check_writable(stem + ".md", ["md"], "--out")
            check_writable(stem + ".json", ["json"], "--out")
        card = benchmark(args.agent, args.edition, args.players, quick=args.quick, workers=args.workers,
                         progress=not args.no_progress)
    except (AgentSpecError, ValueError, TypeError) as err:
        print(f"uno-env benchmark: error: {err}", file=sys.stderr)
        return 2
    print(card.to_markdown(), end="", flush=True)
    if stem is not None:
        try:
            paths = card.write(stem)
        except OSError as err:  # the disk filled or the folder went away while playing
            print(f"uno-env benchmark: error: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
            return 1
        print(f"wrote {paths[0]} and {paths[1]}", file=sys.stderr)
    print(f"benchmarked in {time.perf_counter() - start:.1f} s on {args.workers} worker(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
