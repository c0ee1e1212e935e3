"""Agent specs (``agents.registry``): one grammar everywhere, and no spec read from data runs code.

Issue 13 item 1 (a saved game's ``opponents`` ran a shell command) and issue 16 items 1 and 5
(``ppo:PATH`` and ``ppo:path=PATH`` parse the same in ``play``, ``evaluate`` and Python; ``ppo``
picks one checkpoint per table everywhere and is labelled with it).
"""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

import agents.registry as registry
from agents import RandomAgent, RuleAgent
from agents.ismcts import ISMCTSAgent
from agents.ppo_agent import SHIPPED_DIR, PPOAgent
from agents.registry import (
    AgentSpecError,
    agent_label,
    make_agent,
    parse_spec,
    shipped_checkpoint,
    shipped_checkpoint_files,
)
from agents.tournament import evaluate
from uno_env.core import Rules
from uno_env.core.errors import UnoError

HOSTILE = "ctypes._aix:Popen:args='touch PWNED',shell=True"
SHIPPED = (SHIPPED_DIR / "universal.safetensors").is_file() and (SHIPPED_DIR / "classic_points.safetensors").is_file()
needs_shipped = pytest.mark.skipif(not SHIPPED, reason="the shipped checkpoints are not in this checkout")


def test_registry_module_docstring_examples_run() -> None:
    if not SHIPPED:
        pytest.skip("the docstring's ppo example needs the shipped checkpoints")
    result = doctest.testmod(registry, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


# ---------------------------------------------------------------------- hostile specs
def test_a_spec_from_data_never_imports_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "IMPORTED"
    (tmp_path / "evil_agent_module.py").write_text(f"open({str(marker)!r}, 'w').close()\nclass Evil: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    already = "ctypes._aix" in sys.modules
    for spec in (HOSTILE, "evil_agent_module:Evil", "evil_agent_module:Evil:x=1", "os:system", "os.path:join"):
        with pytest.raises(AgentSpecError, match="may not import code") as err:
            make_agent(spec)
        assert isinstance(err.value, ValueError) and isinstance(err.value, UnoError)
        assert "agents are random" in str(err.value)  # says what is allowed
    assert not marker.exists() and "evil_agent_module" not in sys.modules
    assert not (tmp_path / "PWNED").exists()
    assert already or "ctypes._aix" not in sys.modules


def test_an_imported_spec_must_name_an_agent_subclass_before_anything_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    built = tmp_path / "BUILT"
    (tmp_path / "not_agents_module.py").write_text(
        f"def make(**kw):\n    open({str(built)!r}, 'w').close()\n"
        f"class Thing:\n    def __init__(self, **kw):\n        open({str(built)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec, what in [(HOSTILE, "the class subprocess.Popen"), ("not_agents_module:Thing", "the class"),
                       ("not_agents_module:make:x=1", "a function"), ("not_agents_module:Missing", "missing")]:
        with pytest.raises(AgentSpecError, match="not an agents.Agent subclass") as err:
            make_agent(spec, allow_import=True)
        assert what in str(err.value)
    assert not built.exists() and not (tmp_path / "PWNED").exists()
    agent = make_agent("agents.rule_agent:SimpleRuleAgent", allow_import=True)
    assert type(agent).__name__ == "SimpleRuleAgent"
    assert agent_label("agents.rule_agent:SimpleRuleAgent") == "SimpleRuleAgent"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nobody", "unknown agent 'nobody'"),
        ("rule:speed=9", "unknown option 'speed'; options are challenge, urrrhhh_min"),
        ("rule:challenge", "is not key=value"),
        ("rule:challenge=3", "option challenge=3 must be bool"),
        ("rule:bluff_prior='high'", "option bluff_prior='high' must be float"),
        ("rule:bluff_prior=1e999", "is not a finite number"),
        ("rule:bluff_prior=[1]", "is not a number, true/false, none or text"),
        ("rule:challenge=false,challenge=true", "given twice"),
        ("rule:__class__=1", "is not key=value"),
        ("human:input_fn=print", "must be"),  # values are data, never functions
        ("ismcts:iterations=0", "iterations=0 is outside 1..20000"),
        ("ppo:classic,path=x", "names one checkpoint"),
        ("ppo:no_such_checkpoint", "no PPO checkpoint 'no_such_checkpoint'"),
        ("", "1 to 1000 characters"),
        ("rule:" + "(" * 5000, "characters"),
    ],
)
def test_bad_specs_are_typed_errors_that_say_what_is_allowed(spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError, match=None) as err:
        make_agent(spec)
    assert message in str(err.value)


def test_a_spec_that_is_not_text_is_refused() -> None:
    for spec in (1, None, ["rule"], {"name": "rule"}, b"rule"):
        with pytest.raises(AgentSpecError, match="an agent spec is text"):
            make_agent(spec)  # type: ignore[arg-type]


def test_deeply_nested_option_values_stay_text_or_are_refused() -> None:
    with pytest.raises(AgentSpecError):
        make_agent("rule:bluff_prior=" + "[" * 900 + "]" * 900)


# ---------------------------------------------------------------------- registered names and options
def test_registered_names_build_with_typed_options() -> None:
    rule = make_agent("rule:challenge=false,urrrhhh_min=3,bluff_prior=1")
    assert isinstance(rule, RuleAgent) and rule.challenge is False and rule.urrrhhh_min == 3
    uniform = make_agent("random-uniform:seed=4")
    assert isinstance(uniform, RandomAgent) and uniform.uniform
    assert make_agent("ismcts:iterations=5,prior=none").prior is None  # type: ignore[attr-defined]
    assert parse_spec("  rule  ").name == "rule"  # whitespace around the spec is trimmed
    assert parse_spec("rule:challenge=false").options == {"challenge": False}


# ---------------------------------------------------------------------- ppo checkpoints
def _tiny(path: Path, editions: list[str], tables: list[int], reward: str = "win") -> Path:
    import numpy as np

    from agents.ppo_agent import write_checkpoint
    from uno_env.observation import NUM_ACTIONS, observation_size

    rng = np.random.default_rng(0)
    size = observation_size(10)
    tensors = {"obs_scale": np.ones(size, np.float32),
               "hidden.0.weight": rng.normal(0, 0.3, (4, size)).astype(np.float32),
               "hidden.0.bias": np.zeros(4, np.float32),
               "action.weight": rng.normal(0, 0.3, (NUM_ACTIONS, 4)).astype(np.float32),
               "action.bias": np.zeros(NUM_ACTIONS, np.float32)}
    meta = {"max_players": 10, "observation_size": size, "hidden": [4], "activation": "tanh", "editions": editions,
            "num_players": tables, "steps": 0, "seed": 0, "config": {"env": {"reward": reward}}}
    write_checkpoint(path, tensors, meta)
    return path


def test_ppo_path_and_path_option_parse_the_same(tmp_path: Path) -> None:
    path = _tiny(tmp_path / "mine.safetensors", ["classic"], [2])
    for spec in (f"ppo:{path}", f"ppo:path={path}", f"ppo:{path},deterministic=false"):
        agent = make_agent(spec)
        assert isinstance(agent, PPOAgent) and agent.label == "mine"
        assert agent_label(spec, agent).startswith("ppo[mine]")
    assert agent_label(f"ppo:{path},deterministic=false", make_agent(f"ppo:{path},deterministic=false")) == \
        "ppo[mine]:deterministic=false"
    # Python's evaluate and the command line take both forms too
    for spec in (f"ppo:{path}", f"ppo:path={path}"):
        result = evaluate([spec, "rule"], Rules(num_players=2), games=2, max_decisions=3000)
        assert result.labels == ["ppo[mine]", "rule"]
    for spec in (f"ppo:{path}", f"ppo:path={path}"):
        out = subprocess.run([sys.executable, "-m", "uno_app.cli", "evaluate", "--agents", spec, "rule", "--games",
                              "2", "--no-progress"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert "| ppo[mine] |" in out.stdout


def _card(checkpoint: Path, rows: list[dict[str, object]]) -> None:
    """A card beside ``checkpoint`` recording ``rows`` (classic, against rule, whole games unless given)."""
    full = [{"edition": "classic", "opponent": "rule", "unit": "game", "games": 400, **row} for row in rows]
    checkpoint.with_suffix(".json").write_text(json.dumps({"evaluation": full}))


def test_ppo_picks_the_strongest_checkpoint_its_cards_measure_at_the_table(tmp_path: Path) -> None:
    points = _tiny(tmp_path / "classic_points.safetensors", ["classic"], [2, 3, 4], reward="score")
    rounds = _tiny(tmp_path / "classic.safetensors", ["classic"], [2, 3, 4])
    assert shipped_checkpoint("classic", 3, tmp_path) == points  # no card measures 3 players: points first
    _card(rounds, [{"num_players": 3, "win_rate": 0.36}, {"num_players": 4, "win_rate": 0.2}])
    assert shipped_checkpoint("classic", 3, tmp_path) == rounds  # measured beats unmeasured
    _card(points, [{"num_players": 3, "win_rate": 0.34}, {"num_players": 4, "win_rate": 0.26},
                   {"num_players": 2, "win_rate": 0.9, "unit": "round"},  # rounds and other opponents do not count
                   {"num_players": 2, "win_rate": 0.9, "opponent": "random"}])
    assert shipped_checkpoint("classic", 3, tmp_path) == rounds  # the higher measured rate
    assert shipped_checkpoint("classic", 4, tmp_path) == points
    assert shipped_checkpoint("classic", 2, tmp_path) == points  # measured nowhere at 2: points first again
    _card(points, [{"num_players": 3, "win_rate": 0.40, "games": 100}, {"num_players": 3, "win_rate": 0.34, "games": 900}])
    assert registry.measured_win_rate(points, "classic", 3) == pytest.approx(0.346)  # pooled: wins over games
    assert shipped_checkpoint("classic", 3, tmp_path) == rounds  # 34.6% over 1,000 games < 36%
    _card(points, [{"num_players": 3, "win_rate": 0.40, "games": True}, {"num_players": 3, "win_rate": 0.4, "games": None},
                   {"num_players": 3, "win_rate": 0.4, "games": 10**12}])
    assert registry.measured_win_rate(points, "classic", 3) is None  # rows without a sound game count weigh nothing
    for damaged in (b"{not json", b"[" * 100_000, b" " * (registry.MAX_CARD_BYTES + 1),
                    json.dumps({"evaluation": [{"edition": "classic", "opponent": "rule", "unit": "game",
                                                "num_players": 3, "win_rate": "1.0"}]}).encode()):
        rounds.with_suffix(".json").write_bytes(damaged)
        assert registry.measured_win_rate(rounds, "classic", 3) is None
        assert shipped_checkpoint("classic", 3, tmp_path) == points  # a damaged card measures nothing


def test_the_shipped_ppo_at_each_classic_table_is_the_best_its_cards_measured() -> None:
    for n in range(2, 7):
        measured = {}
        for path in shipped_checkpoint_files():  # actors, not critics
            card = json.loads(path.with_suffix(".json").read_text())
            rows = [row for row in card["evaluation"] if row["edition"] == "classic"
                    and row["num_players"] == n and row["opponent"] == "rule" and row["unit"] == "game"]
            if rows and n in card["num_players"] and "imitates" not in card:
                measured[path.stem] = (sum(row["win_rate"] * row["games"] for row in rows)
                                       / sum(row["games"] for row in rows))
        assert len(measured) >= 2, f"fewer than two shipped checkpoints measured at {n} players"
        assert shipped_checkpoint("classic", n).stem == max(measured, key=measured.__getitem__), n  # type: ignore[union-attr]


def test_a_file_that_is_not_a_checkpoint_is_a_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x00" * 64)
    for spec in (f"ppo:{bad}", f"ppo:path={bad}", f"ppo:{tmp_path}"):
        with pytest.raises(AgentSpecError):
            make_agent(spec)


def test_ppo_picks_the_tables_checkpoint(tmp_path: Path) -> None:
    universal = _tiny(tmp_path / "universal.safetensors", ["classic", "monster_high"], list(range(2, 11)))
    specialist = _tiny(tmp_path / "classic.safetensors", ["classic"], [2, 3, 4])
    points = _tiny(tmp_path / "classic_points.safetensors", ["classic"], [2, 3, 4], reward="score")
    assert shipped_checkpoint("classic", 4, tmp_path) == points
    rounds_2p = _tiny(tmp_path / "classic_2p.safetensors", ["classic"], [2])  # more specialised, on round wins
    assert shipped_checkpoint("classic", 2, tmp_path) == points  # points first: they decide whole games
    points_2p = _tiny(tmp_path / "classic_2p_points.safetensors", ["classic"], [2], reward="score")
    assert shipped_checkpoint("classic", 2, tmp_path) == points_2p  # then the most specialised
    assert shipped_checkpoint("classic", 3, tmp_path) == points
    points_2p.unlink()
    rounds_2p.unlink()
    assert shipped_checkpoint("classic", 5, tmp_path) == universal
    assert shipped_checkpoint("monster_high", 2, tmp_path) == universal
    assert shipped_checkpoint(directory=tmp_path) == universal
    points.unlink()
    assert shipped_checkpoint("classic", 2, tmp_path) == specialist
    agent = make_agent("ppo", edition="classic", num_players=3, checkpoints=tmp_path)
    assert agent_label("ppo", agent) == "ppo[classic]"
    assert agent_label("ppo", make_agent("ppo", checkpoints=tmp_path)) == "ppo[universal]"
    assert agent_label("ppo:classic", make_agent("ppo:classic", checkpoints=tmp_path)) == "ppo[classic]"
    with pytest.raises(AgentSpecError, match="no shipped PPO checkpoint"):
        make_agent("ppo", checkpoints=tmp_path / "empty")


@needs_shipped
def test_evaluate_ppo_plays_the_same_checkpoint_as_play() -> None:
    result = evaluate(["ppo", "rule"], Rules(edition="classic", num_players=2), games=2, max_decisions=3000)
    assert result.labels[0] == f"ppo[{shipped_checkpoint('classic', 2).stem}]" == "ppo[classic_2p_long_points]"  # type: ignore[union-attr]
    result = evaluate(["ppo", "rule"], Rules(edition="monster_high", num_players=2), games=2, max_decisions=3000)
    assert result.labels[0] == "ppo[universal]"


@pytest.mark.parametrize(("spec", "message"), [
    ("ismcts:iterations=1000000000", r"iterations=1000000000 is outside 1\.\.20000"),
    ("ismcts:time_budget=1e9", r"time_budget=1000000000\.0 is outside 0\.001\.\.5"),
    ("ismcts:expand_after=0,exploration=-1e308", r"expand_after=0 is outside 1\.\.10000"),  # checked before building
    ("ismcts:expand_after=1000000", r"expand_after=1000000 is outside 1\.\.10000"),
])
def test_a_spec_from_a_file_may_set_the_work_per_decision_only_within_file_limits(spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec)  # allow_import=False: a save, a config, the web app
    agent = make_agent("ismcts:iterations=20000,time_budget=5")  # the limits themselves
    assert isinstance(agent, ISMCTSAgent) and agent.iterations == 20000


def test_the_command_line_may_ask_for_more_work_but_never_for_an_agent_that_cannot_play() -> None:
    agent = make_agent("ismcts:iterations=1000000", allow_import=True)
    assert isinstance(agent, ISMCTSAgent) and agent.iterations == 1_000_000
    for spec, message in (("ismcts:exploration=-1e308", "exploration must be a finite number >= 0"),
                          ("ismcts:expand_after=0", "expand_after must be an int >= 1"),
                          ("ismcts:epsilon=2", "epsilon must be a probability"),
                          ("ismcts:confidence=-1", "confidence must be a finite number >= 0")):
        with pytest.raises(AgentSpecError, match=message):
            make_agent(spec, allow_import=True)


def test_a_saves_and_the_web_apps_opponents_are_held_to_the_file_limits() -> None:
    from uno_app.terminal import make_opponent
    from uno_app.web.seats import SpecError, build_seat

    with pytest.raises(AgentSpecError, match="outside"):
        make_opponent("ismcts:time_budget=1e9", None, [])  # a save's opponents (allow_import=False)
    with pytest.raises(SpecError, match="unknown opponent"):  # the web app offers its own list, no options
        build_seat("ismcts:iterations=1000000000", "classic", 4, seed=1)
