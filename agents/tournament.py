"""Tournament harness: play agents against each other fairly and report how they did.

Python API::

    from agents import RandomAgent, RuleAgent
    from agents.tournament import evaluate, round_robin
    result = evaluate([RuleAgent(), RandomAgent(), RandomAgent(), RandomAgent()],
                      rules=Rules(edition="monster_high", num_players=4), games=10_000, workers=2)
    print(result.to_markdown())
    ranking = round_robin({"rule": RuleAgent(), "simple": SimpleRuleAgent(), "random": RandomAgent()},
                          rules=Rules(num_players=2), games_per_match=2_000)

Command line: ``uno-env evaluate --agents rule random*3 --edition classic --games 10000``
(``uno-env evaluate --help``; the command lives in ``uno_app.evaluate``).

How games are played, so that results are fair and reproducible:

* A *lineup* is one agent per seat. Games come in *deals*: every deal is played once per
  seat rotation (entry ``i`` of the lineup sits at seat ``(i + r) % n`` in rotation ``r``),
  all rotations with the same deal seed, so each agent gets every seat and every hand
  equally often (duplicate deals). A requested game count is rounded up to whole deals.
* ``unit="round"`` (default) counts one round (one deal of seven cards, until someone goes
  out) as a game; ``unit="game"`` plays whole games to the target score, every round's
  deck shuffled from a seed of its own so later rounds are duplicated across rotations too.
* Every seed comes from ``numpy.random.SeedSequence`` keyed by (seed, deal, rotation,
  lineup entry), and each lineup entry plays with its own copy of its agent, reseeded and
  reset before each game, so results do not depend on the number of worker processes.
* Games run on the core ``Game``; an agent gets ``info = game.view(seat)`` and an
  observation dict holding ``action_mask`` (and the observation vector of
  ``uno_env.observation.observe`` only when its ``needs_observation`` is true).

Reported per agent: win rate with a 95% Wilson interval (a seat's share of wins: a win
shared by k tied seats counts 1/k, partners both win; an agent seated k times scores the
mean of its seats in each game, and the interval counts games), the chance rate (1 /
players, 1/2 for partners), mean points scored per
round (rule 6.3 or 6.4: under standard scoring only the round's winner scores) and mean
decisions per game; a round robin adds OpenSkill (Plackett-Luce) ratings.
"""

from __future__ import annotations

import copy
import csv
import io
import itertools
import json
import math
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from uno_env.core import EDITIONS, Game, Rules
from uno_env.files import atomic_path, atomic_write
from uno_env.progress import Progress
from uno_env.replay import Recorder

from .base import Agent, choose_action
from .registry import agent_label, describe_agent, make_agent

UNITS = ("round", "game")
MAX_WORKERS = 256
"""The most worker processes a match may start (one process each; the training configs' ``eval.workers`` cap)."""
Z95 = 1.959963984540054
DEFAULT_MAX_DECISIONS = 20_000  # per round; a round still running after this many is abandoned


# ---------------------------------------------------------------------- statistics
def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default)."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def derive_seed(*keys: int) -> int:
    """A 63-bit seed from a tuple of non-negative ints (``numpy.random.SeedSequence``)."""
    state = np.random.SeedSequence(list(keys)).generate_state(1, np.uint64)[0]
    return int(state >> np.uint64(1))


# ---------------------------------------------------------------------- records
@dataclass(frozen=True)
class GameRecord:
    """One game's outcome, per lineup entry (not per seat)."""

    deal: int
    rotation: int
    seats: tuple[int, ...]  # the seat each entry sat in
    wins: tuple[float, ...]  # 1 for the winner (each partner), 1/k each when k seats tie, else 0
    points: tuple[int, ...]  # points scored over the game's rounds (rule 6.3 / 6.4)
    decisions: tuple[int, ...]  # decisions each entry took
    ranks: tuple[int, ...]  # finishing place, 0 best, ties share a place
    rounds: int
    finished: bool  # False when a round was abandoned after max_decisions


@dataclass
class AgentStats:
    """One agent's aggregate over a match (or over all its matches in a round robin)."""

    label: str
    seats: int  # lineup entries with this label
    games: int
    wins: float
    win_rate: float
    ci_low: float
    ci_high: float
    chance: float
    points_per_round: float
    decisions_per_game: float


def chance_rate(rules: Rules) -> float:
    """A seat's win rate when every seat plays alike: 1/2 for partners, else 1/players."""
    return 0.5 if rules.teams else 1.0 / rules.num_players


def _aggregate(label: str, samples: list[tuple[GameRecord, int]], rules: Rules) -> AgentStats:
    """Pool the results of (record, entry) samples carrying one label.

    A label seated k times in a game scores the mean of its k seats' wins there; the
    interval takes those per-game scores as the trials (exact for one seat or for partners,
    conservative for several rival seats).
    """
    trials = len(samples)
    wins = sum(rec.wins[e] for rec, e in samples)
    rounds = sum(rec.rounds for rec, _ in samples)
    points = sum(rec.points[e] for rec, e in samples)
    decisions = sum(rec.decisions[e] for rec, e in samples)
    games = len({id(rec) for rec, _ in samples})
    seats = trials // games if games else 0
    low, high = wilson_interval(wins / seats, games) if games else (0.0, 1.0)
    return AgentStats(
        label=label,
        seats=seats,
        games=games,
        wins=wins,
        win_rate=wins / trials if trials else 0.0,
        ci_low=low,
        ci_high=high,
        chance=chance_rate(rules),
        points_per_round=points / rounds if rounds else 0.0,
        decisions_per_game=decisions / trials if trials else 0.0,
    )


_COLUMNS = ("agent", "seats", "games", "wins", "win_rate", "ci_low", "ci_high", "chance", "points_per_round",
            "decisions_per_game")


def _row(s: AgentStats) -> list[Any]:
    return [s.label, s.seats, s.games, round(s.wins, 3), round(s.win_rate, 4), round(s.ci_low, 4),
            round(s.ci_high, 4), round(s.chance, 4), round(s.points_per_round, 2), round(s.decisions_per_game, 1)]


def _markdown_stats(stats: Sequence[AgentStats]) -> list[str]:
    lines = ["| agent | seats | games | wins | win rate | 95% CI | chance | points/round | decisions/game |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for s in stats:
        wins = f"{s.wins:g}" if s.wins == int(s.wins) else f"{s.wins:.2f}"
        lines.append(
            f"| {s.label} | {s.seats} | {s.games} | {wins} | {100 * s.win_rate:.1f}% | "
            f"{100 * s.ci_low:.1f}-{100 * s.ci_high:.1f}% | {100 * s.chance:.0f}% | {s.points_per_round:.1f} | "
            f"{s.decisions_per_game:.1f} |"
        )
    return lines


def _settings_line(rules: Rules, unit: str, games: int, deals: int, seed: int, elapsed: float, workers: int) -> str:
    options = {k: v for k, v in rules.to_dict().items() if k not in ("edition", "num_players")
               and v != getattr(_DEFAULT_RULES, k)}
    extra = ", ".join(f"{k}={v}" for k, v in options.items())
    return (f"{EDITIONS[rules.edition].title} ({rules.edition}), {rules.num_players} players, "
            f"{games} {unit}s ({deals} deals x {rules.num_players} seat rotations), seed {seed}"
            + (f", {extra}" if extra else "") + f"; {elapsed:.1f} s on {workers} worker(s)")


_DEFAULT_RULES = Rules()


def _plot(labels: Sequence[str], stats: Sequence[AgentStats], path: str | os.PathLike[str], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.6 * len(stats) + 1.6))
    ys = list(range(len(stats)))[::-1]
    rates = [100 * s.win_rate for s in stats]
    err = [[100 * (s.win_rate - s.ci_low) for s in stats], [100 * (s.ci_high - s.win_rate) for s in stats]]
    ax.barh(ys, rates, xerr=err, color="#4c72b0", ecolor="black", capsize=4)
    for chance in sorted({s.chance for s in stats}):
        ax.axvline(100 * chance, color="#c44e52", linestyle="--", linewidth=1, label=f"chance {100 * chance:.0f}%")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels)
    ax.set_xlabel("win rate (%), 95% Wilson interval")
    ax.set_xlim(0, 100)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format=os.path.splitext(os.fspath(path))[1][1:].lower() or "png")
    plt.close(fig)


REPORT_FORMATS = ("md", "csv", "json")  # what ``write`` can write, by file name extension


def _write(text_by_ext: Mapping[str, Callable[[], str]], path: str | os.PathLike[str]) -> None:
    """Write one report atomically (a temporary file renamed over ``path``)."""
    path = os.fspath(path)
    ext = path.rsplit(".", 1)[-1].lower()
    if ext not in text_by_ext:
        raise ValueError(f"cannot write {path!r}: use a .md, .csv or .json file name")
    atomic_write(path, text_by_ext[ext]())


@dataclass
class MatchResult:
    """Every game of one lineup, with aggregates and writers."""

    labels: list[str]  # one per lineup entry
    rules: Rules
    unit: str
    deals: int
    seed: int
    records: list[GameRecord]
    elapsed: float = 0.0
    workers: int = 1

    @property
    def games(self) -> int:
        """Games played (deals x rotations)."""
        return len(self.records)

    @property
    def unfinished(self) -> int:
        """Games abandoned after ``max_decisions`` (counted as won by nobody)."""
        return sum(not r.finished for r in self.records)

    @property
    def decisions_per_game(self) -> float:
        """Mean decisions per game, all seats together."""
        return sum(sum(r.decisions) for r in self.records) / max(1, self.games)

    def stats(self) -> list[AgentStats]:
        """Aggregates per distinct label, in lineup order."""
        out = []
        for label in dict.fromkeys(self.labels):
            entries = [i for i, lab in enumerate(self.labels) if lab == label]
            out.append(_aggregate(label, [(r, e) for r in self.records for e in entries], self.rules))
        return out

    def summary(self) -> str:
        """One line describing the settings."""
        return _settings_line(self.rules, self.unit, self.games, self.deals, self.seed, self.elapsed, self.workers)

    def to_markdown(self) -> str:
        """A Markdown table with a settings line."""
        lines = [self.summary(), "", *_markdown_stats(self.stats()), "",
                 f"Mean decisions per game (all seats): {self.decisions_per_game:.1f}"
                 + (f"; {self.unfinished} game(s) abandoned" if self.unfinished else "")]
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        """One CSV row per agent label."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(_COLUMNS)
        for s in self.stats():
            writer.writerow(_row(s))
        return buffer.getvalue()

    def to_dict(self) -> dict[str, Any]:
        """Settings and aggregates as plain data."""
        return {
            "rules": self.rules.to_dict(), "unit": self.unit, "games": self.games, "deals": self.deals,
            "seed": self.seed, "lineup": list(self.labels), "elapsed_s": round(self.elapsed, 3),
            "workers": self.workers, "decisions_per_game": self.decisions_per_game, "unfinished": self.unfinished,
            "agents": [asdict(s) for s in self.stats()],
        }

    def to_json(self) -> str:
        """``to_dict`` as JSON text."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the Markdown (.md), CSV (.csv) or JSON (.json) report."""
        _write({"md": self.to_markdown, "csv": self.to_csv, "json": self.to_json}, path)

    def plot(self, path: str | os.PathLike[str]) -> None:
        """A PNG bar chart of win rates with their intervals."""
        stats = self.stats()
        _plot([s.label for s in stats], stats, path, self.summary().split(";")[0])


@dataclass
class Rating:
    """An OpenSkill rating."""

    label: str
    mu: float
    sigma: float
    ordinal: float  # mu - 3 sigma, the conservative estimate used for ranking


@dataclass
class RoundRobinResult:
    """Every match of a round robin, overall aggregates and OpenSkill ratings."""

    labels: list[str]
    matches: list[MatchResult]
    ratings: list[Rating]  # best first
    elapsed: float = 0.0
    workers: int = 1
    overall: list[AgentStats] = field(default_factory=list)

    def to_markdown(self) -> str:
        """Ratings and overall results, then one line per match."""
        first = self.matches[0]
        by_label = {s.label: s for s in self.overall}
        lines = [
            f"Round robin of {len(self.labels)} agents, {len(self.matches)} match(es) of {first.games} "
            f"{first.unit}s each; " + first.summary().split(", ", 2)[0] + f", {first.rules.num_players} players, "
            f"seed {first.seed}; {self.elapsed:.1f} s on {self.workers} worker(s)",
            "",
            "| rank | agent | OpenSkill mu | sigma | ordinal | games | win rate | 95% CI | chance |",
            "|---:|---|---:|---:|---:|---:|---:|---|---:|",
        ]
        for i, r in enumerate(self.ratings, 1):
            s = by_label[r.label]
            lines.append(f"| {i} | {r.label} | {r.mu:.2f} | {r.sigma:.2f} | {r.ordinal:.2f} | {s.games} | "
                         f"{100 * s.win_rate:.1f}% | {100 * s.ci_low:.1f}-{100 * s.ci_high:.1f}% | "
                         f"{100 * s.chance:.0f}% |")
        lines += ["", "| match | " + " | ".join(f"win rate {i + 1}" for i in range(first.rules.num_players)) + " |",
                  "|---|" + "---:|" * first.rules.num_players]
        for m in self.matches:
            rates = [f"{s.label} {100 * s.win_rate:.1f}% ({100 * s.ci_low:.1f}-{100 * s.ci_high:.1f})"
                     for s in m.stats()]
            lines.append(f"| {' vs '.join(m.labels)} | " + " | ".join(rates) + " |")
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        """One row per agent: overall aggregates and rating."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([*_COLUMNS, "mu", "sigma", "ordinal"])
        by_label = {s.label: s for s in self.overall}
        for r in self.ratings:
            writer.writerow([*_row(by_label[r.label]), round(r.mu, 3), round(r.sigma, 3), round(r.ordinal, 3)])
        return buffer.getvalue()

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain data."""
        return {"agents": list(self.labels), "ratings": [asdict(r) for r in self.ratings],
                "overall": [asdict(s) for s in self.overall], "matches": [m.to_dict() for m in self.matches],
                "elapsed_s": round(self.elapsed, 3), "workers": self.workers}

    def to_json(self) -> str:
        """``to_dict`` as JSON text."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the Markdown (.md), CSV (.csv) or JSON (.json) report."""
        _write({"md": self.to_markdown, "csv": self.to_csv, "json": self.to_json}, path)

    def plot(self, path: str | os.PathLike[str]) -> None:
        """A PNG bar chart of overall win rates with their intervals, best rated first."""
        by_label = {s.label: s for s in self.overall}
        stats = [by_label[r.label] for r in self.ratings]
        first = self.matches[0]
        _plot([s.label for s in stats], stats, path,
              f"round robin, {first.rules.edition}, {first.rules.num_players} players")


# ---------------------------------------------------------------------- playing
def _round_deck(rules: Rules, seed: int, deal: int, round_number: int) -> list[str]:
    """The shuffled deck for a later round of a whole game, the same in every rotation."""
    edition = EDITIONS[rules.edition]
    kinds = edition.deck()
    rng = np.random.Generator(np.random.PCG64(derive_seed(seed, 2, deal, round_number)))
    order = rng.permutation(len(kinds))
    return [edition.code(kinds[i]) for i in order]


def play_game(agents: Sequence[Agent], rules: Rules, deal: int, rotation: int, *, seed: int = 0,
              unit: str = "round", max_decisions: int = DEFAULT_MAX_DECISIONS,
              record: Callable[[Game, list[Agent]], Recorder] | None = None) -> GameRecord:
    """Play one game of a lineup (entry ``i`` at seat ``(i + rotation) % n``); agents are reseeded and reset.

    ``record(game, agent_at_each_seat)`` returns a ``uno_env.replay.Recorder`` of the new game,
    which then takes every step (``uno-env evaluate --replays``).
    """
    n = rules.num_players
    seats = tuple((i + rotation) % n for i in range(n))
    entry_at = [0] * n
    for entry, seat in enumerate(seats):
        entry_at[seat] = entry
    for entry, agent in enumerate(agents):
        agent.seed(derive_seed(seed, 1, deal, rotation, entry))
        agent.reset()
    game = Game(rules, seed=derive_seed(seed, 0, deal))
    recorder = record(game, [agents[entry_at[s]] for s in range(n)]) if record is not None else None
    step: Callable[[int], None] = recorder.step if recorder is not None else game.step
    next_round: Callable[..., None] = recorder.next_round if recorder is not None else game.next_round
    decisions = [0] * n
    points = [0] * n
    rounds = 0
    finished = True
    while True:
        steps = 0
        while not game.is_round_over:
            acting = game.current_player
            assert acting is not None
            step(choose_action(agents[entry_at[acting]], game, acting))
            decisions[acting] += 1
            steps += 1
            if steps >= max_decisions:
                finished = False
                break
        if not finished:
            break
        rounds += 1
        for s in range(n):
            points[s] += game.round_points[s]
        if unit == "round" or game.is_game_over:
            break
        next_round(deck=_round_deck(rules, seed, deal, rounds + 1))
    wins = [0.0] * n
    if finished:
        if rules.teams:  # partners: every seat of the winning team wins
            winner = game.round_winner if unit == "round" else game.winners[0]
            assert winner is not None
            for s in range(winner % 2, n, 2):
                wins[s] = 1.0
        else:
            winners = [game.round_winner] if unit == "round" else game.winners
            for w in winners:
                assert w is not None
                wins[w] = 1.0 / len(winners)
    ranks = _ranks(game, unit, finished, wins)
    return GameRecord(
        deal=deal, rotation=rotation, seats=seats,
        wins=tuple(wins[s] for s in seats), points=tuple(points[s] for s in seats),
        decisions=tuple(decisions[s] for s in seats), ranks=tuple(ranks[s] for s in seats),
        rounds=max(rounds, 1), finished=finished,
    )


def _ranks(game: Game, unit: str, finished: bool, wins: list[float]) -> list[int]:
    """Finishing places per seat: winners first, then by cards' points left (a round) or score (a game)."""
    n = game.num_players
    keys: list[tuple[float, float]]
    if unit == "round" or not finished:
        keys = [(-wins[s], game.hand_value(s)) for s in range(n)]
    elif game.rules.scoring == "standard":
        keys = [(-wins[s], -game.scores[s]) for s in range(n)]
    else:
        keys = [(-wins[s], game.scores[s]) for s in range(n)]
    return [sum(1 for other in keys if other < keys[s]) for s in range(n)]


# Work is split into chunks of deals; each worker holds its own copies of every lineup's agents.
_WORKER: dict[str, Any] = {}


def _init_worker(lineups: Sequence[Sequence[Agent]], rules: Sequence[Rules], seed: int, unit: str,
                 max_decisions: int) -> None:
    """A pool worker's start. The pool ends its workers with SIGTERM (on leaving the ``with``). A Python-level
    handler inherited through fork (training.run.interrupt.StopRequests, around make demo's evaluation) runs only
    between bytecodes: a SIGTERM landing just before a worker's blocking wait for its next task was lost, and the
    join hung. So a worker takes SIGTERM's default; the process that plays in-process keeps its own handler."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _load_lineups(lineups, rules, seed, unit, max_decisions)


def _load_lineups(lineups: Sequence[Sequence[Agent]], rules: Sequence[Rules], seed: int, unit: str,
                  max_decisions: int) -> None:
    copies = [[copy.deepcopy(a) for a in lineup] for lineup in lineups]
    _WORKER.update(lineups=copies, rules=rules, seed=seed, unit=unit, max_decisions=max_decisions)


def _play_chunk(task: tuple[int, int, int], check: Callable[[], None] = lambda: None) -> tuple[int, list[GameRecord]]:
    match, start, stop = task
    agents = _WORKER["lineups"][match]
    rules = _WORKER["rules"][match]
    records = []
    for deal in range(start, stop):
        for rotation in range(rules.num_players):
            check()
            records.append(play_game(agents, rules, deal, rotation, seed=_WORKER["seed"], unit=_WORKER["unit"],
                                     max_decisions=_WORKER["max_decisions"]))
    return match, records


def _chunks(num_matches: int, deals: int, workers: int) -> list[tuple[int, int, int]]:
    size = max(1, min(25, deals // max(1, 8 * workers)))
    return [(m, start, min(deals, start + size)) for start in range(0, deals, size) for m in range(num_matches)]


CHECK_EVERY_S = 0.1  # while worker processes play, ``check`` is called at least this often


def _run(lineups: Sequence[Sequence[Agent]], rules: Sequence[Rules], deals: int, seed: int, unit: str,
         workers: int, progress: bool, max_decisions: int, description: str,
         check: Callable[[], None] | None = None) -> list[list[GameRecord]]:
    """Play ``deals`` deals of every lineup (all rotations); records sorted by deal and rotation.

    ``check`` is called before every game (and every ``CHECK_EVERY_S`` while workers play); an
    exception it raises abandons the run (the worker processes are terminated).
    """
    check = check or (lambda: None)
    check()
    tasks = _chunks(len(lineups), deals, workers)
    total = sum((stop - start) * rules[m].num_players for m, start, stop in tasks)
    results: list[list[GameRecord]] = [[] for _ in lineups]
    with Progress(f"{description}:", total, "games", enabled=progress, transient=True) as bar:
        if workers <= 1:  # in this process: its signal handlers (a training run's StopRequests) stay as they are
            _load_lineups(lineups, rules, seed, unit, max_decisions)
            try:
                for task in tasks:
                    match, records = _play_chunk(task, check)
                    results[match] += records
                    bar.advance(len(records))
            finally:
                _WORKER.clear()
        else:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            with context.Pool(workers, _init_worker, (lineups, rules, seed, unit, max_decisions)) as pool:
                chunks = pool.imap_unordered(_play_chunk, tasks)
                while True:
                    check()
                    try:
                        match, records = chunks.next(timeout=CHECK_EVERY_S)
                    except multiprocessing.TimeoutError:
                        continue
                    except StopIteration:
                        break
                    results[match] += records
                    bar.advance(len(records))
    for records in results:
        records.sort(key=lambda r: (r.deal, r.rotation))
    return results


def _as_agent(item: Agent | str, rules: Rules) -> tuple[Agent, str]:
    """An agent and its label; a spec is built as on the command line (``ppo`` picks the table's checkpoint)."""
    if isinstance(item, Agent):
        return item, describe_agent(item)
    if isinstance(item, str):
        agent = make_agent(item, allow_import=True, edition=rules.edition, num_players=rules.num_players)
        return agent, agent_label(item, agent)
    raise TypeError(f"an agent is an agents.Agent or a spec string, got {type(item).__name__}")


def _check(unit: str, workers: int, seed: int, games: int) -> None:
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive int, got {games!r}")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be an int from 1 to {MAX_WORKERS} (a process each), got {workers!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed}")


def evaluate(agents: Sequence[Agent | str], rules: Rules | None = None, games: int = 1000, *,
             labels: Sequence[str] | None = None, seed: int = 0, unit: str = "round", workers: int = 1,
             progress: bool = False, max_decisions: int = DEFAULT_MAX_DECISIONS,
             check: Callable[[], None] | None = None) -> MatchResult:
    """Play one lineup (one agent or spec per seat) for about ``games`` games (rounded up to whole deals).

    ``check`` (if given) is called before every game, and at least every 0.1 s while worker
    processes play; an exception it raises abandons the evaluation (a Ctrl-C handler's way out).
    """
    _check(unit, workers, seed, games)
    if rules is None:
        rules = Rules(num_players=len(agents))
    built = [_as_agent(a, rules) for a in agents]
    lineup = [a for a, _ in built]
    names = list(labels) if labels is not None else [label for _, label in built]
    if len(names) != len(lineup):
        raise ValueError(f"{len(names)} labels for {len(lineup)} agents")
    if rules.num_players != len(lineup):
        raise ValueError(f"the rules seat {rules.num_players} players but the lineup has {len(lineup)} agents")
    deals = max(1, math.ceil(games / rules.num_players))
    start = time.perf_counter()
    (records,) = _run([lineup], [rules], deals, seed, unit, workers, progress, max_decisions,
                      " vs ".join(dict.fromkeys(names)), check)
    return MatchResult(labels=names, rules=rules, unit=unit, deals=deals, seed=seed, records=records,
                       elapsed=time.perf_counter() - start, workers=workers)


def round_robin(agents: Mapping[str, Agent | str] | Sequence[Agent | str], rules: Rules | None = None,
                games_per_match: int = 1000, *, seed: int = 0, unit: str = "round", workers: int = 1,
                progress: bool = False, max_decisions: int = DEFAULT_MAX_DECISIONS) -> RoundRobinResult:
    """Every set of ``rules.num_players`` distinct agents plays a match; OpenSkill rates them all.

    All matches use the same deal seeds. Ratings are updated game by game in a fixed order
    (deal, then match, then rotation) with each game's finishing places, so they too are
    independent of the number of workers.
    """
    from openskill.models import PlackettLuce

    _check(unit, workers, seed, games_per_match)
    rules = rules or Rules(num_players=2)
    items = list(agents.items()) if isinstance(agents, Mapping) else [(None, a) for a in agents]
    built = [(_as_agent(a, rules), key) for key, a in items]
    pool = {(key if key is not None else label): agent for (agent, label), key in built}
    if len(pool) != len(built):
        raise ValueError("round robin agents need distinct labels (pass a dict label -> agent)")
    n = rules.num_players
    if len(pool) < n:
        raise ValueError(f"a round robin at {n} players needs at least {n} distinct agents, got {len(pool)}")
    tables = list(itertools.combinations(pool, n))
    deals = max(1, math.ceil(games_per_match / n))
    start = time.perf_counter()
    all_records = _run([[pool[label] for label in table] for table in tables], [rules] * len(tables), deals, seed,
                       unit, workers, progress, max_decisions, f"round robin ({len(tables)} matches)")
    elapsed = time.perf_counter() - start
    matches = [MatchResult(labels=list(table), rules=rules, unit=unit, deals=deals, seed=seed, records=records,
                           elapsed=elapsed, workers=workers) for table, records in zip(tables, all_records, strict=True)]
    model = PlackettLuce()
    current = {label: model.rating(name=label) for label in pool}
    for deal in range(deals):
        for table, records in zip(tables, all_records, strict=True):
            for rec in records[deal * n:(deal + 1) * n]:
                updated = model.rate([[current[label]] for label in table], ranks=list(rec.ranks))
                for label, team in zip(table, updated, strict=True):
                    current[label] = team[0]
    ratings = sorted((Rating(label, r.mu, r.sigma, r.ordinal()) for label, r in current.items()),
                     key=lambda r: -r.ordinal)
    overall = [
        _aggregate(label, [(rec, table.index(label)) for table, records in zip(tables, all_records, strict=True)
                           if label in table for rec in records], rules)
        for label in pool
    ]
    return RoundRobinResult(labels=list(pool), matches=matches, ratings=ratings, elapsed=elapsed, workers=workers,
                            overall=overall)
