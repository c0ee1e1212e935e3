"""rule_net: the network fitted to RuleAgent's decisions (training.tools.rule_net, agents/checkpoints/rule_net.*)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from agents import PPOAgent
from agents.ppo_agent import SHIPPED_DIR, read_checkpoint, write_checkpoint
from agents.registry import make_agent, shipped_checkpoint
from agents.tournament import evaluate, play_game
from training.run.config import ConfigError, config_from_dict, load_config
from uno_env.core import EDITIONS, Rules
from uno_env.observation import observation_size

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = SHIPPED_DIR / "rule_net.safetensors"
needs_shipped = pytest.mark.skipif(not SHIPPED.is_file(), reason="rule_net is not in this checkout")
VARIANTS = [{"uno_call": "auto"}, {"allow_bluff": False}, {"scoring": "lowest"}, {"stacking": True},
            {"seven_zero": True}, {"draw_until_playable": True}]


def _tiny_config(tmp_path: Path, **imitation: object) -> Path:
    data = {"name": "tiny", "seed": 5,
            "env": {"edition": "all", "num_players": [2, 3, 6], "skip_forced": True, "max_turns": 1000,
                    "rules": {"stacking": [False, True]}},
            "ppo": {"hidden": [16], "activation": "relu", "vf_coef": 0.0},
            "imitation": {"teacher": "rule", "decisions": 300, "epochs": 2, **imitation}}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_rule_net_config_loads_and_covers_every_edition_table_size_and_rule_option() -> None:
    config = load_config(ROOT / "configs" / "rule_net.yaml")
    assert config.name == "rule_net" and config.imitation.teacher == "rule"
    assert config.env.editions() == list(EDITIONS)
    assert config.env.table_sizes() == list(range(2, 11)) and config.env.max_players == 10
    assert observation_size(config.env.max_players) == 1009
    assert set(config.env.rules) == {"uno_call", "allow_bluff", "scoring", "stacking", "seven_zero",
                                      "draw_until_playable"}
    for key, values in config.env.rules.items():  # the default in most rounds, the variant in some
        default = getattr(Rules(), key)
        assert values.count(default) > len(values) / 2 and len(set(values)) == 2, key
    assert not config.ppo.privileged_critic


@pytest.mark.slow  # 3.5 s alone here
def test_a_tiny_imitation_only_fit_writes_a_loadable_checkpoint(tmp_path: Path) -> None:
    from training.tools.rule_net import fit

    out = tmp_path / "net.safetensors"
    stats = fit(load_config(_tiny_config(tmp_path)), out)
    agent = PPOAgent.load(out)
    meta = agent.metadata
    assert meta["steps"] == 0 and meta["imitates"] == "rule" and meta["hidden"] == [16]
    assert meta["editions"] == list(EDITIONS) and meta["num_players"] == [2, 3, 6]
    assert meta["imitation"] == stats and stats["epoch"] == 2 and stats["decisions"] >= 600  # two fresh passes
    result = evaluate([agent, "rule", "rule"], Rules(num_players=3), 3, seed=0)
    assert result.games == 3


@pytest.mark.slow
def test_a_tiny_rule_net_run_writes_its_config_and_agreement_card_and_repeats_exactly(tmp_path: Path) -> None:
    from training.tools import rule_net

    path = _tiny_config(tmp_path)
    out = tmp_path / "net.safetensors"
    rule_net.main(["--config", str(path), "--out", str(out), "--agreement", "200"])
    meta = PPOAgent.load(out).metadata
    remade = load_config(out.with_suffix(".yaml"))  # the config it was made with, as data
    assert meta["config"] == remade.to_dict() == load_config(path).to_dict()
    card = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    cells = {(r["edition"], r["num_players"], json.dumps(r["rules"])) for r in card["agreement"]}
    assert ("all", "as trained", json.dumps({"stacking": [False, True]})) in cells
    assert ("classic", 2, "{}") in cells and ("masters_of_the_universe", 6, "{}") in cells
    assert ("classic", 2, json.dumps({"stacking": True})) in cells  # each variant alone
    assert all(0 <= r["agreement"] <= 1 and r["decisions"] >= 200 for r in card["agreement"])
    assert "| classic | 2 | defaults |" in out.with_suffix(".md").read_text(encoding="utf-8")
    # same config, same seed: the same network
    again = tmp_path / "again.safetensors"
    rule_net.main(["--config", str(path), "--out", str(again), "--agreement", "0"])
    first, second = read_checkpoint(out)[0], read_checkpoint(again)[0]
    assert all(np.array_equal(first[k], second[k]) for k in first)


def test_rule_net_agreement_counts_the_teachers_moves_it_picks(tmp_path: Path) -> None:
    from training.sb3.imitation import play_demonstrations
    from training.tools.rule_net import agreement

    config = config_from_dict({"env": {"num_players": 3, "skip_forced": True}, "imitation": {"teacher": "rule"}})
    demos = play_demonstrations(config, 400, seed=4)

    class Oracle:  # the teacher's own moves, replayed in order: full agreement
        metadata = {"observation_size": observation_size(10)}

        def choose(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            assert len(observations) == len(demos)
            return demos.actions

    share, count = agreement(Oracle(), config, 400, seed=4)
    assert (share, count) == (1.0, len(demos))

    class FirstLegal:  # the lowest legal id: agrees with the teacher only sometimes
        metadata = Oracle.metadata

        def choose(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return masks.argmax(axis=1)

    share, _ = agreement(FirstLegal(), config, 400, seed=4)
    assert 0 < share < 1


def test_rule_net_refuses_a_config_without_a_teacher(tmp_path: Path) -> None:
    from training.tools.rule_net import fit

    config = load_config(_tiny_config(tmp_path, teacher=""))
    with pytest.raises(ConfigError, match="imitation.teacher"):
        fit(config, tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()
    out = subprocess.run([sys.executable, "-m", "training.tools.rule_net", "--config", str(tmp_path / "tiny.yaml"),
                          "--set", "ppo.hiden=[8]"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and "ppo.hiden" in out.stderr


def test_ppo_never_picks_a_checkpoint_that_imitates_another_agent(tmp_path: Path) -> None:
    from tests.test_ppo_agent import _random_checkpoint

    _random_checkpoint(tmp_path / "universal.safetensors")
    tensors, meta = read_checkpoint(_random_checkpoint(tmp_path / "a_net.safetensors"))
    meta["num_players"] = [2]  # more specialised than universal, and first by name
    write_checkpoint(tmp_path / "a_net.safetensors", tensors, meta)
    assert shipped_checkpoint("classic", 2, tmp_path).name == "a_net.safetensors"
    meta["imitates"] = "rule"
    write_checkpoint(tmp_path / "a_net.safetensors", tensors, meta)
    assert shipped_checkpoint("classic", 2, tmp_path).name == "universal.safetensors"
    agent = make_agent("ppo:a_net", checkpoints=tmp_path)
    assert isinstance(agent, PPOAgent) and agent.metadata["imitates"] == "rule"


@needs_shipped
def test_shipped_rule_net_loads_by_name_and_is_never_the_default_ppo() -> None:
    agent = make_agent("ppo:rule_net")
    assert isinstance(agent, PPOAgent) and agent.label == "rule_net"
    meta = agent.metadata
    assert meta["imitates"] == "rule" and meta["steps"] == 0
    assert meta["editions"] == list(EDITIONS) and meta["num_players"] == list(range(2, 11))
    assert meta["max_players"] == 10 and meta["observation_size"] == 1009  # widened from 839
    assert meta["widened_from_observation_version"] == 1  # written before the rule 3.4 ruling
    for edition in EDITIONS:
        for n in range(2, 11):
            assert shipped_checkpoint(edition, n).name != "rule_net.safetensors"
    # a shipped checkpoint stays small (the 256x256 network of the others: 1.2 MB)
    assert SHIPPED.stat().st_size < 2_000_000


@needs_shipped
def test_shipped_rule_net_card_reports_its_measurements() -> None:
    card = json.loads(SHIPPED.with_suffix(".json").read_text(encoding="utf-8"))
    rows = {(r["edition"], r["num_players"], r["opponent"]): r for r in card["evaluation"]}
    duel = rows["classic", 2, "rule"]
    assert duel["games"] >= 10_000 and duel["ci_high"] - duel["ci_low"] <= 0.02  # +-1 point
    for edition in EDITIONS:
        for n in (2, 4, 6):
            assert rows[edition, n, "rule"]["games"] >= 2_000
    assert card["size_bytes"] == SHIPPED.stat().st_size
    assert card["agreement"][0]["edition"] == "all" and card["agreement"][0]["decisions"] >= 20_000


@needs_shipped
@pytest.mark.slow
def test_shipped_rule_net_plays_legal_moves_at_every_edition_table_size_and_rule_option() -> None:
    agent = PPOAgent.load(SHIPPED)
    tables = [Rules(edition=edition, num_players=n) for edition in EDITIONS for n in range(2, 11)]
    tables += [Rules(num_players=4, **options) for options in VARIANTS + [{"teams": True}, {"elimination": True}]]
    for rules in tables:  # rule_net at every seat; an illegal move raises IllegalActionError
        record = play_game([agent] * rules.num_players, rules, deal=0, rotation=0, seed=rules.num_players,
                           max_decisions=300)
        assert sum(record.decisions) >= min(300, 2 * rules.num_players)


@needs_shipped
@pytest.mark.slow
def test_shipped_rule_net_plays_every_seat_of_a_mixed_batched_engine_batch_as_ppo_agent_does() -> None:
    import torch

    from uno_env.batched import BatchedUno

    agent = PPOAgent.load(SHIPPED)
    tensors = {k: torch.as_tensor(v) for k, v in read_checkpoint(SHIPPED)[0].items()}
    layers = [(tensors[f"hidden.{i}.weight"], tensors[f"hidden.{i}.bias"]) for i in range(len(agent.metadata["hidden"]))]

    def logits(observation: torch.Tensor) -> torch.Tensor:  # the checkpoint's network, in torch, batched
        x = observation * tensors["obs_scale"]
        for weight, bias in layers:
            x = torch.relu(x @ weight.T + bias)
        return x @ tensors["action.weight"].T + tensors["action.bias"]

    n = 36  # every edition x table size 2-10 in one batch, some tables under a rule option
    env = BatchedUno(num_tables=n, edition=[e for e in EDITIONS for _ in range(9)], num_players=list(range(2, 11)) * 4,
                     episode="round", seed=3, stacking=[i % 5 == 1 for i in range(n)],
                     seven_zero=[i % 5 == 2 for i in range(n)], draw_until_playable=[i % 5 == 3 for i in range(n)])
    state = env.reset()
    for _ in range(40):  # an illegal action would raise IllegalActionError naming the table
        scores = logits(state.observation)
        assert np.allclose(scores.numpy(), agent.logits(state.observation.numpy()), atol=1e-4)
        state = env.step(torch.where(state.action_mask, scores, -torch.inf).argmax(1))
