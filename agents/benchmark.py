"""The benchmark: one fixed protocol that turns an agent into a comparable card.

Python API::

    from agents.benchmark import PROTOCOL, benchmark
    card = benchmark("ppo", edition="classic", players=(2, 4), quick=True, workers=2)
    print(card.to_markdown()); card.write("ppo-card")   # ppo-card.md and ppo-card.json

Command line: ``uno-env benchmark AGENT [--edition E] [--players N ...] [--quick] [--out STEM]``
(``uno_app.benchmark``).

The protocol (``PROTOCOL``, version ``uno-bench/1``) fixes everything a card depends on, so
that two people benchmarking the same agent get the same card and different agents' cards can
be compared:

* the reference pool, in order: ``random``, ``simple``, ``rule``, ``ismcts:iterations=25`` and
  ``ppo``, pinned by the protocol to the checkpoint that was the table's default when the version
  was fixed (``Protocol.pinned_ppo``: ``classic_2p_points`` at classic 2 players, ``classic_points``
  at classic 3-4, ``universal`` at every other table), so that a newer default changes no card;
* the rounds played against each reference: 10,000 (2,000 against ISMCTS), or with ``quick``
  1,000 (100 against ISMCTS); a count is rounded up to whole deals;
* the seed (``PROTOCOL_SEED``) and the tournament harness's rules of play
  (``agents.tournament``): one round per game, seats rotated, duplicate deals (every reference
  meets the same deals), every agent reseeded before each game;
* the layout: against reference R at N players the agent holds one seat and R the other N-1.

Per table (edition x players) a card holds the agent's win rate against each reference with
its 95% Wilson interval and the chance rate (1/N), and an OpenSkill (Plackett-Luce) rating of
the agent against the pool: every rating starts at OpenSkill's default (mu 25, sigma 25/3) and
is updated game by game in a fixed order (deal, then reference in pool order, then seat
rotation) from the finishing places; a reference seated N-1 times takes the mean of its seats'
updates. The ratings are then shifted so that ``rule``'s mu is 25 (``RATING_ANCHOR``; a shift
changes no Plackett-Luce probability), so a card's agent mu reads as its strength above or
below ``rule``. The references are rated only against the agent, so the win rates are the
primary numbers; ratings compare agents benchmarked at the same table and protocol version.

The JSON card is a function of the agent, the protocol, the table and the package version
only (no times, no worker count): byte for byte the same on every run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from uno_env.core import EDITIONS, EditionName, Rules
from uno_env.files import atomic_write

from .human import HumanAgent
from .registry import AgentSpecError, agent_label, make_agent
from .tournament import GameRecord, MatchResult, evaluate

__all__ = ["PROTOCOL", "PROTOCOL_SEED", "PROTOCOL_VERSION", "RATING_ANCHOR", "Card", "Protocol", "Reference",
           "ReferenceResult", "TableCard", "benchmark"]

PROTOCOL_VERSION = "uno-bench/1"
PROTOCOL_SEED = 24004
RATING_ANCHOR = ("rule", 25.0)  # the reference whose mu every card shifts to this value
_DIGITS = 6  # floats in a card are rounded to this many decimals, so that cards compare as text


@dataclass(frozen=True)
class Reference:
    """One opponent of the pool and the rounds played against it."""

    spec: str  # an agent spec (agents.registry)
    rounds: int  # rounds against it in a full card
    quick_rounds: int  # rounds against it in a ``quick`` card


@dataclass(frozen=True)
class Protocol:
    """Everything a card depends on besides the agent and the table; change it, change the version."""

    version: str = PROTOCOL_VERSION
    seed: int = PROTOCOL_SEED
    references: tuple[Reference, ...] = (
        Reference("random", 10_000, 1_000),
        Reference("simple", 10_000, 1_000),
        Reference("rule", 10_000, 1_000),
        Reference("ismcts:iterations=25", 2_000, 100),
        Reference("ppo", 10_000, 1_000),
    )
    anchor: str = RATING_ANCHOR[0]  # a reference's spec: its mu is shifted to ``anchor_mu``
    anchor_mu: float = RATING_ANCHOR[1]
    # The shipped checkpoint the ``ppo`` reference plays, per (edition, players); ``pinned_ppo_default`` elsewhere.
    pinned_ppo: tuple[tuple[str, int, str], ...] = (
        ("classic", 2, "classic_2p_points"), ("classic", 3, "classic_points"), ("classic", 4, "classic_points"))
    pinned_ppo_default: str = "universal"

    def reference_spec(self, spec: str, edition: str, players: int) -> str:
        """The spec a reference plays at a table: ``ppo`` as the checkpoint the protocol pins, others as they are."""
        if spec != "ppo":
            return spec
        pins = {(e, n): name for e, n, name in self.pinned_ppo}
        return f"ppo:{pins.get((edition, players), self.pinned_ppo_default)}"

    def __post_init__(self) -> None:
        specs = [r.spec for r in self.references]
        if not specs or len(set(specs)) != len(specs):
            raise ValueError(f"a protocol needs distinct references, got {specs}")
        if self.anchor not in specs:
            raise ValueError(f"the rating anchor {self.anchor!r} is not a reference ({', '.join(specs)})")
        for r in self.references:
            if min(r.rounds, r.quick_rounds) < 1:
                raise ValueError(f"rounds against {r.spec} must be positive, got {r.rounds} and {r.quick_rounds}")

    def to_dict(self) -> dict[str, Any]:
        """The protocol as plain data (it heads every card)."""
        return {"version": self.version, "seed": self.seed, "unit": "round",
                "references": [asdict(r) for r in self.references],
                "rating": {"model": "openskill PlackettLuce", "anchor": self.anchor, "anchor_mu": self.anchor_mu},
                "layout": "against reference R at N players the agent holds one seat and R the other N-1; "
                          "seats rotated, duplicate deals"}


PROTOCOL = Protocol()


@dataclass(frozen=True)
class ReferenceResult:
    """The agent's results against one reference at one table."""

    reference: str  # the reference's spec
    label: str  # what it played as (``ppo[classic_2p_points]``)
    rounds: int
    wins: float  # the agent's wins (a tie shared by k seats counts 1/k)
    win_rate: float
    ci_low: float  # 95% Wilson interval of win_rate
    ci_high: float
    chance: float
    unfinished: int  # rounds abandoned after the harness's decision limit (won by nobody)
    mu: float  # the reference's rating after the table's games (anchored)
    sigma: float


@dataclass(frozen=True)
class TableCard:
    """The agent at one table: results against every reference and its rating."""

    players: int
    agent_label: str  # what the agent played as at this table
    references: tuple[ReferenceResult, ...]
    mu: float
    sigma: float
    ordinal: float  # mu - 3 sigma


@dataclass(frozen=True)
class Card:
    """A benchmark card: the protocol, the agent, the edition and one ``TableCard`` per table size."""

    agent: str  # the spec benchmarked
    edition: str
    quick: bool
    protocol: Protocol
    tables: tuple[TableCard, ...]
    package_version: str
    official: bool = field(default=True)  # False when ``protocol`` is not ``PROTOCOL``

    def to_dict(self) -> dict[str, Any]:
        """The card as plain data (what ``to_json`` writes)."""
        return {"card": "uno-env benchmark", "protocol": self.protocol.to_dict(), "official": self.official,
                "quick": self.quick, "agent": self.agent, "edition": self.edition,
                "uno_env_version": self.package_version, "tables": [asdict(t) for t in self.tables]}

    def to_json(self) -> str:
        """The card as JSON text: byte for byte the same for the same agent, protocol, table and version."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    def to_markdown(self) -> str:
        """The card as Markdown: a heading, the protocol line, one table per table size."""
        mode = "quick" if self.quick else "full"
        version = self.protocol.version + ("" if self.official else " (modified protocol: not comparable)")
        lines = [f"# Benchmark card: `{self.agent}`", "",
                 f"Protocol {version}, {mode}; {EDITIONS[self.edition].title} ({self.edition}); seed "
                 f"{self.protocol.seed}; one round per game, seats rotated, duplicate deals; against reference R at "
                 f"N players the agent holds one seat and R the other N-1; uno-env {self.package_version}."]
        for t in self.tables:
            lines += ["", f"## {t.players} players: {t.agent_label}", "",
                      "| reference | rounds | win rate | 95% Wilson CI | chance | reference mu |",
                      "|---|---:|---:|---|---:|---:|"]
            for r in t.references:
                lines.append(f"| {r.label} | {r.rounds} | {100 * r.win_rate:.1f}% | "
                             f"{100 * r.ci_low:.1f}-{100 * r.ci_high:.1f}% | {100 * r.chance:.0f}% | {r.mu:.2f} |")
            lines += ["", f"OpenSkill (Plackett-Luce, {self.protocol.anchor} anchored at mu "
                          f"{self.protocol.anchor_mu:g}): mu {t.mu:.2f}, sigma {t.sigma:.2f}, ordinal {t.ordinal:.2f}."]
            unfinished = sum(r.unfinished for r in t.references)
            if unfinished:
                lines.append(f"{unfinished} round(s) abandoned at the decision limit (won by nobody).")
        return "\n".join(lines) + "\n"

    def write(self, stem: str | os.PathLike[str]) -> tuple[str, str]:
        """Write ``STEM.md`` and ``STEM.json`` atomically; the two paths."""
        base = os.fspath(stem)
        paths = (base + ".md", base + ".json")
        atomic_write(paths[0], self.to_markdown())
        atomic_write(paths[1], self.to_json())
        return paths


def _round(x: float) -> float:
    return round(float(x), _DIGITS)


def _check_table(spec: str, edition: str, players: Sequence[int]) -> list[tuple[Rules, str]]:
    """The rules of every table and the agent's label there; raises before anything is played."""
    if not isinstance(spec, str):
        raise TypeError(f"the agent is a spec string, got {type(spec).__name__}")
    if not players:
        raise ValueError("players: name at least one table size")
    if len(set(players)) != len(players):
        raise ValueError(f"players lists a table size twice: {list(players)}")
    tables = []
    for n in players:
        rules = Rules(edition=cast(EditionName, edition), num_players=n)  # Rules checks the name
        agent = make_agent(spec, allow_import=True, edition=edition, num_players=n)
        if isinstance(agent, HumanAgent):
            raise AgentSpecError("a benchmark plays thousands of rounds: a human agent cannot be benchmarked")
        tables.append((rules, agent_label(spec, agent)))
    return tables


def _mean_rating(model: Any, seats: Sequence[Any]) -> Any:
    """One rating from a reference's seats' updated ratings: the mean mu and the mean sigma."""
    return model.rating(mu=sum(r.mu for r in seats) / len(seats), sigma=sum(r.sigma for r in seats) / len(seats))


def _rate(protocol: Protocol, results: Sequence[MatchResult], players: int) -> tuple[Any, list[Any]]:
    """The agent's and every reference's OpenSkill rating from a table's games, in the protocol's order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    agent = model.rating()
    refs = [model.rating() for _ in results]
    by_deal: list[list[list[GameRecord]]] = []
    for i, result in enumerate(results):
        for rec in result.records:
            while len(by_deal) <= rec.deal:
                by_deal.append([[] for _ in results])
            by_deal[rec.deal][i].append(rec)
    for deal in by_deal:
        for i, records in enumerate(deal):
            for rec in records:  # sorted by rotation (the harness sorts them)
                # a distinct rating object per seat: openskill takes one object seated twice as one player
                teams = [[agent]] + [[model.rating(mu=refs[i].mu, sigma=refs[i].sigma)] for _ in range(players - 1)]
                updated = model.rate(teams, ranks=list(rec.ranks))
                agent = updated[0][0]
                refs[i] = _mean_rating(model, [team[0] for team in updated[1:]])
    return agent, refs


def _table(spec: str, label: str, rules: Rules, protocol: Protocol, quick: bool, workers: int, progress: bool,
           check: Callable[[], None] | None) -> TableCard:
    n = rules.num_players
    results = []
    ref_labels = []
    for ref in protocol.references:
        played = protocol.reference_spec(ref.spec, rules.edition, n)
        opponent = make_agent(played, edition=rules.edition, num_players=n)
        ref_labels.append(agent_label(played, opponent))
        results.append(evaluate([spec] + [opponent] * (n - 1), rules, ref.quick_rounds if quick else ref.rounds,
                                labels=["agent"] + ["reference"] * (n - 1), seed=protocol.seed, workers=workers,
                                progress=progress, check=check))
    rating, ref_ratings = _rate(protocol, results, n)
    shift = protocol.anchor_mu - ref_ratings[[r.spec for r in protocol.references].index(protocol.anchor)].mu
    rows = []
    for ref, ref_label, result, ref_rating in zip(protocol.references, ref_labels, results, ref_ratings, strict=True):
        stats = result.stats()[0]
        rows.append(ReferenceResult(
            reference=ref.spec, label=ref_label, rounds=result.games, wins=_round(stats.wins),
            win_rate=_round(stats.win_rate), ci_low=_round(stats.ci_low), ci_high=_round(stats.ci_high),
            chance=_round(stats.chance), unfinished=result.unfinished, mu=_round(ref_rating.mu + shift),
            sigma=_round(ref_rating.sigma)))
    mu = rating.mu + shift
    return TableCard(players=n, agent_label=label, references=tuple(rows), mu=_round(mu), sigma=_round(rating.sigma),
                     ordinal=_round(mu - 3 * rating.sigma))


def benchmark(spec: str, edition: str = "classic", players: Sequence[int] = (2,), *, quick: bool = False,
              workers: int = 1, progress: bool = False, check: Callable[[], None] | None = None,
              protocol: Protocol = PROTOCOL) -> Card:
    """Benchmark the agent ``spec`` at each table size of ``players`` under ``protocol``: its card.

    Every spec, the edition and the table sizes are checked before the first game
    (``AgentSpecError``, ``RulesError``, ``ValueError``). ``workers`` changes the time taken,
    never the card (your own agent class: a ``package.module:Class`` spec). ``protocol`` other than ``PROTOCOL``
    gives a card marked as not official (for tests and experiments; the command line offers
    only ``PROTOCOL``, full or quick).
    """
    from uno_env import __version__

    if not isinstance(protocol, Protocol):
        raise TypeError(f"protocol must be an agents.benchmark.Protocol, got {type(protocol).__name__}")
    tables = _check_table(spec, edition, list(players))
    for ref in protocol.references:  # a reference that cannot be built stops the run before it starts
        for rules, _ in tables:
            make_agent(ref.spec, edition=rules.edition, num_players=rules.num_players)
    cards = tuple(_table(spec, label, rules, protocol, quick, workers, progress, check)
                  for rules, label in tables)
    return Card(agent=spec.strip(), edition=edition, quick=quick, protocol=protocol, tables=cards,
                package_version=str(__version__), official=protocol == PROTOCOL)
