"""``uno-env benchmark`` (issue 24.4): the protocol, the card, its determinism, the refusals, the CLI.

Games are played under a tiny protocol (a few rounds per reference) that only tests use; its
cards are marked as not official. The protocol's real numbers are pinned as data.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

from agents.benchmark import PROTOCOL, PROTOCOL_SEED, PROTOCOL_VERSION, Card, Protocol, Reference, _rate, benchmark
from agents.registry import AgentSpecError
from agents.tournament import GameRecord, MatchResult, evaluate, wilson_interval
from uno_app import benchmark as benchmark_cli
from uno_app import cli
from uno_env.core import Rules, RulesError

# a few rounds against every reference (ISMCTS cheapened too): for tests only
TINY = replace(PROTOCOL, references=tuple(
    Reference("ismcts:iterations=2" if r.spec.startswith("ismcts") else r.spec, 6, 4) for r in PROTOCOL.references))
TINY_RULE = replace(TINY, references=(Reference("random", 6, 4), Reference("rule", 6, 4)))


def _never() -> None:
    raise AssertionError("a game was started")


@functools.cache
def _tiny_card(spec: str = "simple", players: tuple[int, ...] = (2, 3)) -> Card:
    return benchmark(spec, players=players, quick=True, protocol=TINY)


@functools.cache
def _rule_card() -> Card:
    """Cheaper: against random and rule only."""
    return benchmark("simple", players=(2, 3), quick=True, protocol=TINY_RULE)


# ---------------------------------------------------------------------- the protocol
def test_the_protocol_is_the_issues_and_changing_it_needs_a_new_version() -> None:
    assert PROTOCOL.version == PROTOCOL_VERSION == "uno-bench/1" and PROTOCOL.seed == PROTOCOL_SEED == 24004
    assert [(r.spec, r.rounds, r.quick_rounds) for r in PROTOCOL.references] == [
        ("random", 10_000, 1_000), ("simple", 10_000, 1_000), ("rule", 10_000, 1_000),
        ("ismcts:iterations=25", 2_000, 100), ("ppo", 10_000, 1_000)]
    assert (PROTOCOL.anchor, PROTOCOL.anchor_mu) == ("rule", 25.0)
    assert Protocol() == PROTOCOL and TINY != PROTOCOL


def test_the_ppo_reference_is_pinned_by_the_protocol_not_by_todays_default() -> None:
    from agents.registry import shipped_checkpoint

    assert PROTOCOL.reference_spec("ppo", "classic", 2) == "ppo:classic_2p_points"
    assert PROTOCOL.reference_spec("ppo", "classic", 4) == "ppo:classic_points"
    assert PROTOCOL.reference_spec("ppo", "classic", 6) == "ppo:universal"
    assert PROTOCOL.reference_spec("ppo", "monster_high", 2) == "ppo:universal"
    assert PROTOCOL.reference_spec("rule", "classic", 4) == "rule"
    # the default moved on (a checkpoint shipped later plays ppo at 4 and 6 players); uno-bench/1's cards did not
    assert shipped_checkpoint("classic", 4).stem != "classic_points"  # type: ignore[union-attr]
    card = benchmark("simple", players=[4], quick=True, protocol=replace(TINY_RULE, references=(
        Reference("rule", 4, 4), Reference("ppo", 4, 4))))
    assert card.tables[0].references[-1].label == "ppo[classic_points]"


@pytest.mark.parametrize(("references", "message"), [
    ((), "distinct references"),
    ((Reference("rule", 2, 2), Reference("rule", 4, 4)), "distinct references"),
    ((Reference("random", 2, 2),), "anchor 'rule' is not a reference"),
    ((Reference("rule", 2, 0),), "must be positive"),
])
def test_a_protocol_is_checked_when_made(references: tuple[Reference, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replace(PROTOCOL, references=references)


# ---------------------------------------------------------------------- the card
def test_the_card_holds_every_reference_at_every_table_with_wilson_intervals() -> None:
    card = _tiny_card()
    assert not card.official and card.quick and card.agent == "simple" and card.edition == "classic"
    assert [t.players for t in card.tables] == [2, 3]
    for table in card.tables:
        n = table.players
        assert table.agent_label == "simple"
        assert [r.reference for r in table.references] == [r.spec for r in TINY.references]
        assert table.references[-1].label == ("ppo[classic_2p_points]" if n == 2 else "ppo[classic_points]")
        for row in table.references:
            assert row.rounds == math.ceil(4 / n) * n  # quick rounds, rounded up to whole deals
            assert row.chance == round(1 / n, 6)
            assert row.win_rate == round(row.wins / row.rounds, 6)
            low, high = wilson_interval(row.wins, row.rounds)
            assert (row.ci_low, row.ci_high) == (round(low, 6), round(high, 6))
        anchor = next(r for r in table.references if r.reference == "rule")
        assert anchor.mu == 25.0  # every rating shifted so that the anchor sits at its mu
        assert table.ordinal == pytest.approx(table.mu - 3 * table.sigma, abs=1e-5)


def test_the_win_rates_are_the_tournament_harness_results_with_the_protocol_seed() -> None:
    card = benchmark("simple", players=[3], quick=True, protocol=TINY_RULE)
    row = card.tables[0].references[1]  # simple against two rule agents at 3 players
    result = evaluate(["simple", "rule", "rule"], Rules(num_players=3), 4, labels=["agent", "ref", "ref"],
                      seed=PROTOCOL_SEED)
    assert (row.reference, row.rounds, row.wins) == ("rule", result.games, round(result.stats()[0].wins, 6))


def test_a_full_card_plays_the_full_rounds() -> None:
    card = benchmark("random", players=[2], quick=False, protocol=TINY_RULE)
    assert not card.quick and [r.rounds for r in card.tables[0].references] == [6, 6]


def test_the_same_agent_gets_the_same_card_byte_for_byte() -> None:
    first = _rule_card()
    again = benchmark("simple", players=(2, 3), quick=True, protocol=TINY_RULE)
    assert again.to_json() == first.to_json() and again.to_markdown() == first.to_markdown()
    data = json.loads(first.to_json())
    assert data["protocol"]["version"] == "uno-bench/1" and data["official"] is False
    assert "elapsed" not in first.to_json() and "workers" not in first.to_json()
    other = benchmark("random", players=(2,), quick=True, protocol=TINY_RULE)
    assert other.to_json() != first.to_json()  # the card is the agent's


def test_the_card_does_not_depend_on_the_number_of_workers() -> None:
    assert benchmark("simple", players=(2, 3), quick=True, protocol=TINY, workers=2).to_json() == \
        _tiny_card().to_json()


def test_the_markdown_card_says_the_protocol_and_each_rate() -> None:
    card = _rule_card()
    text = card.to_markdown()
    assert text.startswith("# Benchmark card: `simple`\n")
    assert "Protocol uno-bench/1 (modified protocol: not comparable), quick; UNO (classic); seed 24004" in text
    assert "the agent holds one seat and R the other N-1" in text
    assert "## 2 players: simple" in text and "## 3 players: simple" in text
    row = card.tables[0].references[0]
    assert (f"| random | {row.rounds} | {100 * row.win_rate:.1f}% | {100 * row.ci_low:.1f}-{100 * row.ci_high:.1f}% "
            f"| 50% |") in text
    assert f"mu {card.tables[0].mu:.2f}, sigma {card.tables[0].sigma:.2f}" in text


def test_write_makes_the_markdown_and_json_beside_the_stem(tmp_path: Path) -> None:
    card = _rule_card()
    md, js = card.write(tmp_path / "card")
    assert Path(md).read_text() == card.to_markdown() and Path(js).read_text() == card.to_json()


# ---------------------------------------------------------------------- the rating
def _record(deal: int, rotation: int, ranks: tuple[int, ...]) -> GameRecord:
    n = len(ranks)
    wins = tuple(1.0 if r == 0 else 0.0 for r in ranks)
    return GameRecord(deal=deal, rotation=rotation, seats=tuple((i + rotation) % n for i in range(n)), wins=wins,
                      points=(0,) * n, decisions=(1,) * n, ranks=ranks, rounds=1, finished=True)


def _match(records: list[GameRecord], n: int) -> MatchResult:
    return MatchResult(labels=["agent"] + ["reference"] * (n - 1), rules=Rules(num_players=n), unit="round",
                       deals=len(records), seed=0, records=records)


def test_ratings_follow_the_games_by_deal_then_reference_then_rotation() -> None:
    a = [_record(0, 0, (0, 1)), _record(0, 1, (1, 0)), _record(1, 0, (0, 1))]
    b = [_record(0, 0, (1, 0)), _record(0, 1, (1, 0))]
    agent, refs = _rate(TINY_RULE, [_match(a, 2), _match(b, 2)], 2)
    model = PlackettLuce()
    me, ra, rb = model.rating(), model.rating(), model.rating()
    for rec, ref in [(a[0], "a"), (a[1], "a"), (b[0], "b"), (b[1], "b"), (a[2], "a")]:
        other = ra if ref == "a" else rb
        (me,), (other,) = model.rate([[me], [other]], ranks=list(rec.ranks))
        ra, rb = (other, rb) if ref == "a" else (ra, other)
    assert (agent.mu, agent.sigma) == (me.mu, me.sigma)
    assert [(r.mu, r.sigma) for r in refs] == [(ra.mu, ra.sigma), (rb.mu, rb.sigma)]
    assert refs[1].mu > 25 > refs[0].mu  # b beat the agent twice, a lost to it twice in three


def test_a_reference_in_several_seats_takes_the_mean_of_their_updates() -> None:
    agent, (ref,) = _rate(TINY_RULE, [_match([_record(0, 0, (2, 0, 1))], 3)], 3)
    model = PlackettLuce()
    (me,), (first,), (second,) = model.rate([[model.rating()] for _ in range(3)], ranks=[2, 0, 1])
    assert (agent.mu, agent.sigma) == (me.mu, me.sigma)
    assert ref.mu == pytest.approx((first.mu + second.mu) / 2) and ref.sigma == pytest.approx(
        (first.sigma + second.sigma) / 2)
    assert agent.mu < 25 < ref.mu


# ---------------------------------------------------------------------- refusals, before any game
@pytest.mark.parametrize(("spec", "edition", "players", "error", "message"), [
    ("nobody", "classic", [2], AgentSpecError, "unknown agent 'nobody'"),
    ("human", "classic", [2], AgentSpecError, "human agent cannot be benchmarked"),
    ("rule", "uno_deluxe", [2], RulesError, "uno_deluxe"),
    ("rule", "classic", [11], RulesError, "num_players must be an int from 2 to 10"),
    ("rule", "classic", [1], RulesError, "num_players must be an int from 2 to 10"),
    ("rule", "classic", [2, 2], ValueError, "table size twice"),
    ("rule", "classic", [], ValueError, "at least one table size"),
    ("os:system", "classic", [2], AgentSpecError, "os"),
])
def test_bad_arguments_are_refused_before_any_game(spec: str, edition: str, players: list[int],
                                                   error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        benchmark(spec, edition, players, protocol=TINY, check=_never)


def test_a_protocol_must_be_a_protocol() -> None:
    with pytest.raises(TypeError, match="agents.benchmark.Protocol"):
        benchmark("rule", protocol={"version": "uno-bench/1"}, check=_never)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the command
def test_the_command_prints_and_writes_the_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(benchmark_cli, "benchmark", functools.partial(benchmark, protocol=TINY_RULE))
    stem = tmp_path / "cards" / "rule"
    stem.parent.mkdir()
    assert cli.main(["benchmark", "rule", "--players", "2", "3", "--quick", "--out", f"{stem}.json",
                     "--no-progress"]) == 0
    out, err = capsys.readouterr()
    card = benchmark("rule", players=(2, 3), quick=True, protocol=TINY_RULE)
    assert out == card.to_markdown()
    assert Path(f"{stem}.json").read_text() == card.to_json() and Path(f"{stem}.md").read_text() == out
    assert "wrote " in err and "benchmarked in " in err


@pytest.mark.parametrize(("args", "message"), [
    (["nobody"], "unknown agent 'nobody'"),
    (["rule", "--players", "2", "2"], "table size twice"),
    (["rule", "--players", "11"], "num_players must be an int from 2 to 10"),
    (["rule", "--edition", "nope"], "invalid choice: 'nope'"),
    (["rule", "--workers", "0"], "must be a positive integer"),
    (["rule", "--out", "no/such/folder/card"], "does not exist"),
    (["rule", "--rounds", "5"], "unrecognized arguments: --rounds"),  # the CLI offers only full and --quick
])
def test_the_command_refuses_bad_arguments_with_status_2(args: list[str], message: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(benchmark_cli, "benchmark", functools.partial(benchmark, protocol=TINY, check=_never))
    assert cli.main(["benchmark", *args]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_output_stem_drops_a_card_extension() -> None:
    assert [benchmark_cli.output_stem(p) for p in ("c", "c.md", "c.JSON", "c.txt", ".md")] == [
        "c", "c", "c", "c.txt", ".md"]


def test_every_flag_has_a_help_line() -> None:
    for action in benchmark_cli.build_parser()._actions:  # noqa: SLF001 - argparse keeps its arguments here
        assert action.help, action.option_strings


def test_the_docs_reference_table_is_the_one_the_kept_quick_cards_make() -> None:
    from benchmarks.reference_table import CARDS, ORDER, table

    page = (Path(__file__).resolve().parents[1] / "docs" / "agents.md").read_text(encoding="utf-8")
    shown = page.split("<!-- reference-table:start -->\n")[1].split("<!-- reference-table:end -->")[0]
    assert shown == table()
    for path in CARDS.glob("*.json"):
        card = json.loads(path.read_text(encoding="utf-8"))
        assert card["protocol"]["version"] == PROTOCOL_VERSION and card["quick"] and card["official"]
        assert card["agent"] in ORDER and {t["players"] for t in card["tables"]} == {2, 4}


def test_the_reference_table_has_a_row_for_every_shipped_checkpoint() -> None:
    """The README says every shipped agent's card is in the table: each checkpoint by name, the baselines and the search."""
    from agents.registry import shipped_checkpoints
    from benchmarks.reference_table import ORDER

    assert shipped_checkpoints()
    assert {f"ppo:{name}" for name in shipped_checkpoints()} | {"random", "simple", "rule", "ppo"} <= set(ORDER)
    assert [spec for spec in ORDER if spec.split(":")[0] == "guided"] == ["guided:playouts=64"]
