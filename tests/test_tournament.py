"""Tournament harness (agents/tournament.py): fairness, statistics, determinism, reports, CLI."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agents import Agent, RandomAgent, RuleAgent, SimpleRuleAgent
from agents.tournament import MAX_WORKERS, evaluate, play_game, round_robin, wilson_interval
from uno_app import cli
from uno_env.core import IllegalActionError, Rules
from uno_env.observation import observation_size

ROOT = Path(__file__).resolve().parent.parent


class SpyAgent(RandomAgent):
    """A random agent that notes what it is given (class-level, so every copy writes here)."""

    name = "spy"
    first_hands: ClassVar[list[tuple[int, str, tuple[str, ...]]]] = []
    observations: ClassVar[list[Mapping[str, Any]]] = []

    def __init__(self, tag: str = "spy", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tag = tag

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        assert observation is not None
        self.observations.append(observation)
        if len(info["discard_pile"]) == 1 and set(info["hand_sizes"]) == {7}:
            self.first_hands.append((info["seat"], self.tag, tuple(info["hand"])))
        return super().act(observation, info)


class VectorAgent(RandomAgent):
    """An agent that asks for the observation vector."""

    name = "vector"
    needs_observation = True
    shapes: ClassVar[set[tuple[int, ...]]] = set()

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        assert observation is not None
        self.shapes.add(observation["observation"].shape)
        return super().act(observation, info)


class IllegalAgent(Agent):
    """Always answers with an action that is never legal."""

    name = "illegal"

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        return 79  # swap +9: illegal at any table without seven-zero


def test_seat_rotation_gives_every_agent_every_seat_equally() -> None:
    lineup = [RuleAgent(), SimpleRuleAgent(), RandomAgent(), RandomAgent(uniform=True)]
    result = evaluate(lineup, Rules(num_players=4), games=12, labels=["a", "b", "c", "d"])
    assert result.games == 12 and result.deals == 3
    for entry in range(4):
        assert Counter(r.seats[entry] for r in result.records) == {0: 3, 1: 3, 2: 3, 3: 3}
    for record in result.records:
        assert sorted(record.seats) == [0, 1, 2, 3]
    two = evaluate(["rule", "random"], Rules(num_players=2), games=7)  # rounded up to whole deals
    assert two.games == 8 and Counter(r.seats[0] for r in two.records) == {0: 4, 1: 4}


def test_rotations_replay_the_same_deal() -> None:
    SpyAgent.first_hands.clear()
    lineup = [SpyAgent(tag=t) for t in "abc"]
    for rotation in range(3):
        play_game(lineup, Rules(num_players=3), deal=5, rotation=rotation, seed=9)
    firsts = SpyAgent.first_hands
    assert len(firsts) == 3
    assert len({(seat, hand) for seat, _, hand in firsts}) == 1  # same seat, same seven cards
    assert {tag for _, tag, _ in firsts} == {"a", "b", "c"}  # held by a different agent each time


@pytest.mark.parametrize(("successes", "trials", "low", "high"), [
    (0, 10, 0.0, 0.27753),
    (10, 10, 0.72247, 1.0),
    (5, 10, 0.23659, 0.76341),
    (81, 263, 0.25529, 0.36621),  # roots of (p - 81/263)^2 = z^2 p (1 - p) / 263
])
def test_wilson_interval_matches_known_values(successes: int, trials: int, low: float, high: float) -> None:
    got = wilson_interval(successes, trials)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_wilson_interval_without_trials_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_same_seed_same_results_whatever_the_number_of_workers() -> None:
    lineup = ["rule", "random", "simple", "random"]
    one = evaluate(lineup, Rules(num_players=4), games=32, seed=3, workers=1)
    again = evaluate(lineup, Rules(num_players=4), games=32, seed=3, workers=1)
    two = evaluate(lineup, Rules(num_players=4), games=32, seed=3, workers=2)
    assert one.records == again.records == two.records
    other = evaluate(lineup, Rules(num_players=4), games=32, seed=4, workers=1)
    assert other.records != one.records


def test_round_robin_ratings_do_not_depend_on_workers() -> None:
    agents = {"rule": RuleAgent(), "simple": SimpleRuleAgent(), "random": RandomAgent()}
    one = round_robin(agents, Rules(num_players=2), games_per_match=40, seed=1, workers=1)
    two = round_robin(agents, Rules(num_players=2), games_per_match=40, seed=1, workers=2)
    assert [m.labels for m in one.matches] == [["rule", "simple"], ["rule", "random"], ["simple", "random"]]
    assert one.ratings == two.ratings
    assert one.ratings[-1].label == "random"
    assert {s.label: s.games for s in one.overall} == {"rule": 80, "simple": 80, "random": 80}


def test_whole_games_run_to_the_target_score() -> None:
    result = evaluate(["rule", "random"], Rules(num_players=2, target_score=100), games=4, unit="game")
    for record in result.records:
        assert record.finished and record.rounds >= 1 and sum(record.wins) == 1
        assert max(record.points) >= 100


def test_partners_share_their_wins() -> None:
    result = evaluate(["rule", "random", "rule", "random"], Rules(num_players=4, teams=True), games=8)
    for record in result.records:
        assert sum(record.wins) == 2 and record.wins[0] == record.wins[2]
    stats = {s.label: s for s in result.stats()}
    assert stats["rule"].chance == 0.5 and stats["rule"].win_rate + stats["random"].win_rate == 1


def test_observation_vector_only_for_agents_that_need_it() -> None:
    SpyAgent.observations.clear()
    VectorAgent.shapes.clear()
    evaluate([SpyAgent(), VectorAgent()], Rules(num_players=2), games=2)
    assert VectorAgent.shapes == {(observation_size(),)}
    assert SpyAgent.observations and all(set(o) == {"action_mask"} for o in SpyAgent.observations)
    assert all(o["action_mask"].sum() >= 1 for o in SpyAgent.observations)


def test_an_illegal_choice_names_the_agent() -> None:
    with pytest.raises(IllegalActionError, match="IllegalAgent"):
        evaluate([IllegalAgent(), RandomAgent()], Rules(num_players=2), games=2)


def test_a_round_past_the_decision_limit_is_abandoned_and_won_by_nobody() -> None:
    result = evaluate(["random", "random"], Rules(num_players=2), games=2, max_decisions=3)
    assert result.unfinished == 2 and all(sum(r.wins) == 0 for r in result.records)
    assert "2 game(s) abandoned" in result.to_markdown()


def test_a_small_tournament_end_to_end_writes_every_report(tmp_path: Path) -> None:
    result = evaluate(["rule", "random", "random", "random"], Rules(edition="monster_high", num_players=4),
                      games=16, seed=2, progress=True)
    stats = result.stats()
    assert [s.label for s in stats] == ["rule", "random"] and [s.seats for s in stats] == [1, 3]
    assert stats[0].games == 16 and stats[0].wins + stats[1].wins == pytest.approx(16)
    for s in stats:
        assert s.ci_low <= s.win_rate <= s.ci_high and s.chance == 0.25 and s.decisions_per_game > 0
    for ext in ("md", "csv", "json"):
        result.write(str(tmp_path / f"out.{ext}"))
    markdown = (tmp_path / "out.md").read_text()
    assert "UNO Monster High (monster_high), 4 players, 16 rounds (4 deals x 4 seat rotations)" in markdown
    assert "| rule | 1 | 16 |" in markdown
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out.csv").read_text())))
    assert [r["agent"] for r in rows] == ["rule", "random"] and float(rows[0]["win_rate"]) == pytest.approx(
        round(stats[0].win_rate, 4))
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["games"] == 16 and data["rules"]["edition"] == "monster_high" and len(data["agents"]) == 2
    result.plot(str(tmp_path / "win.png"))
    assert (tmp_path / "win.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=".md, .csv or .json"):
        result.write(str(tmp_path / "out.txt"))


def test_cli_evaluate_plays_and_writes_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md, js, png = tmp_path / "r.md", tmp_path / "r.json", tmp_path / "r.png"
    assert cli.main(["evaluate", "--agents", "rule", "random*2", "--edition", "angry_birds", "--games", "6",
                     "--rule", "uno_call=auto", "--out", str(md), "--out", str(js), "--plot", str(png),
                     "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "UNO Angry Birds (angry_birds), 3 players, 6 rounds" in printed and "uno_call=auto" in printed
    assert md.read_text() == printed and json.loads(js.read_text())["lineup"] == ["rule", "random", "random"]
    assert png.exists()
    assert cli.main(["evaluate", "--round-robin", "--agents", "rule", "simple", "random", "--games", "4",
                     "--no-progress", "--out", str(tmp_path / "rr.csv")]) == 0
    assert "OpenSkill" in capsys.readouterr().out
    assert len((tmp_path / "rr.csv").read_text().splitlines()) == 4
    assert cli.main(["evaluate", "--agents", "rule", "nobody", "--no-progress"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err


@pytest.mark.parametrize("workers", [0, MAX_WORKERS + 1, 100_000, True, 2.0])
def test_a_worker_count_outside_one_to_the_cap_is_refused_before_any_process_starts(workers: object) -> None:
    with pytest.raises(ValueError, match=f"workers must be an int from 1 to {MAX_WORKERS}"):
        evaluate(["random", "random"], Rules(num_players=2), games=2, workers=workers)  # type: ignore[arg-type]


def test_a_match_played_in_this_process_keeps_the_callers_sigterm_handler() -> None:
    """With one worker the games run here: a training run's StopRequests must still see a SIGTERM after it."""
    def keep_running(signum: int, frame: object) -> None:
        pass

    previous = signal.signal(signal.SIGTERM, keep_running)
    try:
        evaluate(["random", "random"], Rules(num_players=2), 2, workers=1)
        assert signal.getsignal(signal.SIGTERM) is keep_running
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_pool_workers_die_on_sigterm_whatever_handler_the_parent_installed(tmp_path: Path) -> None:
    """The pool ends its workers with SIGTERM. A Python-level handler inherited through fork (training's
    StopRequests, around make demo's evaluation) runs only between bytecodes, so a SIGTERM landing just
    before a worker's blocking wait was lost and the pool's join hung for ever (seen in make demo). Workers
    take SIGTERM's default, here under a parent handler that would keep them alive; the parent's is kept."""
    seen = tmp_path / "seen.txt"
    code = textwrap.dedent(f"""
        import signal
        from agents import RandomAgent
        from agents.tournament import evaluate
        from uno_env.core import Rules

        class Probe(RandomAgent):
            def act(self, observation, info):
                with open({str(seen)!r}, "a") as out:
                    out.write(f"{{signal.getsignal(signal.SIGTERM) is signal.SIG_DFL}}\\n")
                return super().act(observation, info)

        def keep_running(signum, frame):
            pass

        signal.signal(signal.SIGTERM, keep_running)
        for _ in range(3):
            evaluate([Probe(seed=0), "random"], Rules(num_players=2), 16, workers=2)
        print("parent's handler kept:", signal.getsignal(signal.SIGTERM) is keep_running)
    """)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=ROOT, start_new_session=True)
    try:
        out, err = process.communicate(timeout=120)  # a hang guard: it takes seconds
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the stuck workers too
        process.communicate()
        pytest.fail("a worker outlived the pool's SIGTERM: evaluate never returned")
    assert process.returncode == 0, err
    assert "parent's handler kept: True" in out
    assert set(seen.read_text().split()) == {"True"}
