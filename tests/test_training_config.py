"""Training configs as untrusted data: numbers finite and in range, names under runs/, no code from a config."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

pytest.importorskip("yaml")

from training.cli import main  # noqa: E402
from training.run import config as config_module  # noqa: E402
from training.run.config import (  # noqa: E402
    ConfigError,
    TrainConfig,
    commented_defaults,
    config_from_dict,
    load_config,
    parse_overrides,
)

ROOT = Path(__file__).resolve().parent.parent

FLOAT_KEYS = [("ppo", "learning_rate"), ("ppo", "clip_range"), ("ppo", "ent_coef"), ("ppo", "vf_coef"),
              ("ppo", "gamma"), ("ppo", "gae_lambda"), ("ppo", "max_grad_norm"), ("env", "reward_scale"),
              ("env", "truncation_reward"), ("pool", "baseline_share"), ("pool", "latest_share"),
              ("imitation", "learning_rate")]


def _set(section: str, key: str, value: Any) -> dict[str, Any]:
    return {section: {key: value}}


@pytest.mark.parametrize("section, key", FLOAT_KEYS)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_every_float_key_refuses_nan_and_infinity_naming_the_key(section: str, key: str, value: float) -> None:
    with pytest.raises(ConfigError, match=rf"{section}\.{key}: expected a finite number"):
        config_from_dict(_set(section, key, value))


@pytest.mark.parametrize("data, key", [
    (_set("ppo", "learning_rate", 5.0), "ppo.learning_rate"),
    (_set("ppo", "learning_rate", 0.0), "ppo.learning_rate"),
    (_set("ppo", "clip_range", -0.1), "ppo.clip_range"),
    (_set("ppo", "ent_coef", 2.0), "ppo.ent_coef"),
    (_set("ppo", "vf_coef", -1.0), "ppo.vf_coef"),
    (_set("ppo", "max_grad_norm", 0.0), "ppo.max_grad_norm"),
    (_set("ppo", "hidden", [128, 100_000]), "ppo.hidden"),
    (_set("env", "reward_scale", 0.0), "env.reward_scale"),
    (_set("env", "reward_scale", 1e9), "env.reward_scale"),
    (_set("env", "truncation_reward", -1e300), "env.truncation_reward"),
    (_set("env", "max_turns", 0), "env.max_turns"),
    (_set("imitation", "learning_rate", 3.0), "imitation.learning_rate"),
    ({"seed": 2**70}, "seed"),
    ({"seed": 2**32}, "seed"),
    ({"seed": -1}, "seed"),
    (_set("eval", "seed", 2**32), "eval.seed"),
    ({"total_steps": 10**30}, "total_steps"),
])
def test_numbers_out_of_range_are_refused_naming_the_key(data: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config_from_dict(data)


def test_the_largest_seed_numpy_takes_is_accepted() -> None:
    assert config_from_dict({"seed": 2**32 - 1}).seed == 2**32 - 1


@pytest.mark.parametrize("name", ["../../../elsewhere", "/tmp/abs", "a/b", "..", ".", "", ".hidden", "x" * 101,
                                  "run name", "run\x00"])
def test_run_names_that_would_leave_runs_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="name: "):
        config_from_dict({"name": name})


def test_a_plain_run_name_stays_under_runs() -> None:
    config = config_from_dict({"name": "my-run_2.b"})
    assert config.output_dir() == Path("runs/my-run_2.b")


@pytest.mark.parametrize("overrides, message", [
    ({"seed.x": 1}, "seed is a value"),
    ({"ppo.hidden.0": 4}, "ppo.hidden is a value"),
    ({"ppo..n_envs": 4}, "none empty"),
    ({"nosuch.key": 1}, "unknown key nosuch"),
])
def test_bad_overrides_are_config_errors(tmp_path: Path, overrides: dict[str, Any], message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("seed: 3\nppo:\n  hidden: [8]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path, overrides)


@pytest.mark.parametrize("pair, message", [
    ("seed.x=1", "seed: expected an integer"),
    ("ppo.n_envs=[", "not valid YAML"),
    ("noequals", "KEY=VALUE"),
    ("=3", "KEY=VALUE"),
    ("ppo.learning_rate=.nan", "ppo.learning_rate: expected a finite number"),
    ("name=../../x", "name: "),
])
def test_bad_set_on_the_command_line_is_one_clear_line_and_status_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pair: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("total_steps: 64\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(path), "--set", pair, "--run-dir", str(tmp_path / "run")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()  # nothing was written


def test_yaml_tags_that_build_python_objects_are_refused(tmp_path: Path) -> None:
    canary = tmp_path / "PWNED"
    path = tmp_path / "evil.yaml"
    path.write_text(f"seed: !!python/object/apply:os.system ['touch {canary}']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)
    assert not canary.exists()


def test_deeply_nested_and_oversized_configs_are_refused(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("env: " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_config(deep)
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * 2_000_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="at most"):
        load_config(big)
    with pytest.raises(ConfigError, match="at most"):
        load_config("/dev/zero")  # endless: read no further than a config can be


@pytest.mark.parametrize("where", ["pool", "teacher", "eval"])
def test_an_agent_spec_naming_a_python_callable_in_a_config_runs_nothing(tmp_path: Path, where: str) -> None:
    canary = tmp_path / "PWNED"
    spec = f"uno_env.files:atomic_write:path='{canary}',data='x'"  # a real callable that writes a file
    data = {"pool": {"pool": {"baselines": [spec]}}, "teacher": {"imitation": {"teacher": spec}},
            "eval": {"eval": {"matchups": [{"edition": "classic", "num_players": 2, "opponent": spec}]}}}[where]
    with pytest.raises(ConfigError, match="allowed|registered|agents are"):
        config_from_dict(data)
    assert not canary.exists()


# ---------------------------------------------------------------------- --print-default-config
def test_print_default_config_is_the_defaults_with_a_comment_on_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    main(["--print-default-config"])
    text = capsys.readouterr().out
    assert config_from_dict(yaml.safe_load(text)) == TrainConfig()

    def expected(node: Any, prefix: str) -> list[str]:
        keys = []
        for name in type(node).model_fields:
            keys.append(prefix + name)
            if isinstance(getattr(node, name), BaseModel):
                keys += expected(getattr(node, name), f"{prefix}{name}.")
        return keys

    printed, commented, section = [], [], ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith(("#", "- ")):
            continue
        key = line.split(":")[0]
        if not key.startswith(" "):
            section = key
        printed.append(key.strip() if not key.startswith(" ") else f"{section}.{key.strip()}")
        if lines[i - 1].lstrip().startswith("# "):
            commented.append(printed[-1])
    assert printed == expected(TrainConfig(), "")
    assert commented == printed


def _sections() -> list[type[BaseModel]]:
    return [TrainConfig, *(info.annotation for info in TrainConfig.model_fields.values()
                           if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)),
            config_module.Matchup]


def test_every_config_field_has_a_description_and_every_section_a_docstring() -> None:
    for cls in _sections():
        assert " ".join((cls.__doc__ or "").split()), cls
        undocumented = [name for name, info in cls.model_fields.items()
                        if not info.description and not (isinstance(info.annotation, type)
                                                         and issubclass(info.annotation, BaseModel))]
        assert not undocumented, f"{cls.__name__}: {undocumented}"


def _int_bounds(hint: Any, constraints: list[Any]) -> list[tuple[Any, Any]]:
    """(low, high) of every integer a value of ``hint`` holds (a list's items, a union's members)."""
    import typing

    while typing.get_origin(hint) is typing.Annotated:
        hint, *extra = typing.get_args(hint)
        for item in extra:
            constraints = [*constraints, *getattr(item, "metadata", [item])]
    if hint is int:
        low = next((getattr(c, n) for c in constraints for n in ("ge", "gt") if getattr(c, n, None) is not None), None)
        high = next((getattr(c, n) for c in constraints for n in ("le", "lt") if getattr(c, n, None) is not None), None)
        return [(low, high)]
    return [bound for member in typing.get_args(hint) for bound in _int_bounds(member, [])]


def test_every_integer_in_the_schema_has_a_lower_and_an_upper_bound() -> None:
    seen = 0
    for cls in _sections():
        for name, info in cls.model_fields.items():
            for low, high in _int_bounds(info.annotation, list(info.metadata)):
                seen += 1
                assert low is not None and high is not None and high <= 2**62, f"{cls.__name__}.{name}: {low}, {high}"
    assert seen >= 30  # the counts, sizes, seeds and resource settings of every section


def test_configs_are_frozen() -> None:
    config = config_from_dict({})
    with pytest.raises(ValidationError, match="frozen"):
        config.seed = 3  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        config.ppo.n_envs = 3  # type: ignore[misc]


def test_commented_defaults_wrap_long_docs_as_comment_lines() -> None:
    text = commented_defaults()
    assert all(len(line) <= 102 for line in text.splitlines() if line.lstrip().startswith("#"))


def test_print_default_config_has_help_text() -> None:
    out = subprocess.run([sys.executable, "-m", "training.cli", "--help"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0
    assert "--print-default-config" in out.stdout and "comment" in out.stdout


# ---------------------------------------------------------------------- the train extra
def test_train_without_the_train_extra_names_the_pip_command(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("total_steps: 64\n", encoding="utf-8")
    script = ("import sys\n"
              "sys.modules['yaml'] = None  # as if the train extra were not installed\n"
              "from training.cli import main\n"
              f"main(['--config', {str(config)!r}])\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and 'pip install "uno-env[train]"' in out.stderr and "yaml" in out.stderr


# ---------------------------------------------------------------------- YAML aliases (issue 27.3)
def _alias_bomb(leaf: str) -> str:
    """A billion-laughs document: nine levels of nine aliases each, about 387M leaves once expanded."""
    lines = [f"a0: &a0 [{leaf}]"]
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\nseed: *a9\n"


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb('"lol"'), encoding="utf-8")
    assert path.stat().st_size < 600  # a few hundred bytes
    with pytest.raises(ConfigError, match=r"aliases \(\*a0\) are refused"):
        load_config(path)


def test_a_single_alias_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "alias.yaml"
    path.write_text("seed: &s 3\neval:\n  seed: *s\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"aliases \(\*s\) are refused"):
        load_config(path)


def test_an_alias_bomb_given_to_set_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("total_steps: 64\n", encoding="utf-8")
    bomb = "{" + _alias_bomb("1").replace("\n", ", ").rstrip(", ") + "}"
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(path), "--set", f"seed={bomb}", "--run-dir", str(tmp_path / "run")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--set seed: YAML aliases" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text", ["seed: " + "9" * 5000 + "\n", "name: 2001-13-45\n"])
def test_a_scalar_yaml_cannot_build_is_a_config_error_in_a_file_and_in_set(tmp_path: Path, text: str) -> None:
    """A 5,000-digit int (past Python's 4,300-digit limit) or an impossible date was a raw ValueError from PyYAML;
    found by ``tests/soak/soak_configs.py``."""
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="a value that cannot be read") as refused:
        load_config(path)
    assert len(str(refused.value)) < 300
    key, _, value = text.strip().partition(": ")
    with pytest.raises(ConfigError, match=f"--set {key}: a value that cannot be read"):
        parse_overrides([f"{key}={value}"])


def test_refusal_messages_cut_long_values_short() -> None:
    with pytest.raises(ConfigError) as refused:
        config_from_dict({"seed": ["x" * 10_000] * 10_000})
    assert "seed: expected an integer" in str(refused.value) and len(str(refused.value)) < 300
    with pytest.raises(ConfigError, match="seed: an integer of 16610 bits is out of range") as huge:
        config_from_dict({"seed": 10**5000})
    assert len(str(huge.value)) < 300


# ---------------------------------------------------------------------- resource bounds (issue 27.4)
@pytest.mark.parametrize("data, message", [
    (_set("eval", "workers", 100_000), r"eval\.workers: must be in \[1, 256\]"),
    ({"ppo": {"n_envs": 100_000, "vec_env": "subproc", "batch_size": 256}}, r"ppo\.n_envs: must be in \[1, 256\]"),
    ({"ppo": {"n_envs": 100_000, "batch_size": 256}}, r"ppo\.n_envs: must be in \[1, 65536\]"),
    ({"ppo": {"n_envs": 512, "vec_env": "sharded", "workers": 300, "batch_size": 256}}, r"ppo\.workers: must be in \[1, 256\]"),
    ({"ppo": {"n_envs": 16, "vec_env": "sharded", "workers": 17, "batch_size": 256}}, r"ppo\.workers: must be 1 to ppo\.n_envs \(16\)"),
    ({"ppo": {"n_envs": 4096, "n_steps": 2048}}, r"ppo\.n_steps: .*\(8388608\) is over 4194304"),
    (_set("imitation", "decisions", 10**9), r"imitation\.decisions: must be in \[1, 10000000\]"),
    (_set("rllib", "num_env_runners", 1000), r"rllib\.num_env_runners: must be in \[0, 256\]"),
    ({"torch_threads": 100_000}, r"torch_threads: must be in \[1, 256\]"),
    ({"trainer": "batched", "pool": {"baselines": ["random"]}, "batched": {"num_tables": 10_000_000}},
     r"batched\.num_tables: must be in \[1, 1048576\]"),
])
def test_resource_settings_beyond_their_documented_bound_are_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_dict(data)


def test_resource_settings_at_their_bound_are_accepted() -> None:
    config = config_from_dict({"eval": {"workers": 256}, "torch_threads": 256,
                               "ppo": {"n_envs": 256, "vec_env": "subproc", "batch_size": 256}})
    assert (config.eval.workers, config.torch_threads, config.ppo.n_envs) == (256, 256, 256)



@pytest.mark.parametrize("spec, message", [("nosuch", "unknown agent 'nosuch'"), ("rule:bogus=1", "unknown option 'bogus'")])
@pytest.mark.parametrize("where", ["pool", "eval"])
def test_agent_specs_are_checked_by_the_registry_at_load(where: str, spec: str, message: str) -> None:
    data = {"pool": {"pool": {"baselines": ["rule", spec]}},
            "eval": {"eval": {"matchups": [{"edition": "classic", "num_players": 2, "opponent": spec}]}}}[where]
    key = {"pool": r"pool\.baselines", "eval": r"eval\.matchups\[0\]\.opponent"}[where]
    with pytest.raises(ConfigError, match=rf"{key}: .*{message}"):
        config_from_dict(data)


def test_the_rllib_config_refuses_an_alias_bomb_too(tmp_path: Path) -> None:
    pytest.importorskip("pettingzoo")
    from training.rllib.trainer import rllib_config

    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb('"lol"'), encoding="utf-8")
    with pytest.raises(ConfigError, match="aliases"):
        rllib_config(str(path))
    with pytest.raises(ConfigError, match="aliases"):
        rllib_config(None, ["seed=[&a [1], *a]"])


def test_a_configs_search_baseline_is_held_to_the_file_limits() -> None:
    with pytest.raises(ConfigError, match=r"pool\.baselines: .*iterations=1000000000 is outside"):
        config_from_dict({"pool": {"baselines": ["rule", "ismcts:iterations=1000000000"]}})


# ---------------------------------------------------------------------- messages from the schema
@pytest.mark.parametrize("data, message", [
    (_set("ppo", "n_epochs", "4"), 'ppo.n_epochs: expected an integer in [1, 1000], got \'4\' (a string: write a number '
                                   'without quotes; YAML reads 3e-4 as text, 3.0e-4 as a number) (default: 4)'),
    (_set("ppo", "gamma", 1.5), "ppo.gamma: must be in (0, 1], got 1.5 (default: 0.99)"),
    (_set("env", "episode", "set"), 'env.episode: expected one of round, game, got \'set\' (default: "round")'),
    (_set("ppo", "hidden", [64, 0]), "ppo.hidden[1]: must be in [1, 4096], got 0 (default: [128, 128])"),
    (_set("env", "edition", 7), 'env.edition: expected a string or a list (1 to 64 items), each a string, got 7 '
                                '(default: "classic")'),
    (_set("env", "num_players", [2, 12]), "env.num_players[1]: must be in [2, 10], got 12 (default: 2)"),
    (_set("pool", "deterministic", "no"), "pool.deterministic: expected true or false, got 'no' (default: false)"),
])
def test_refusals_name_the_key_what_it_allows_and_its_default(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        config_from_dict(data)
    assert str(refused.value) == message


def test_a_yaml_float_without_a_dot_is_text_and_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("ppo:\n  learning_rate: 3e-4\n", encoding="utf-8")  # YAML 1.1 (PyYAML): a string
    with pytest.raises(ConfigError, match=r"ppo\.learning_rate: expected a number in \(0, 1\], got '3e-4' .*3\.0e-4"):
        load_config(path)
    path.write_text("ppo:\n  learning_rate: 3.0e-4\n  vf_coef: 1\n", encoding="utf-8")
    config = load_config(path)
    assert config.ppo.learning_rate == 3e-4 and config.ppo.vf_coef == 1.0 and isinstance(config.ppo.vf_coef, float)


def test_several_problems_report_the_first_and_count_the_rest() -> None:
    with pytest.raises(ConfigError, match=r"^seed: .* \(and 2 more problems\)$"):
        config_from_dict({"seed": -1, "ppo": {"n_envs": 0}, "eval": {"games": 0}})


@pytest.mark.parametrize("old, new", [("lr", "ppo.learning_rate"), ("lambda_", "ppo.gae_lambda"),
                                      ("entropy_coeff", "ppo.ent_coef"), ("minibatch_size", "ppo.batch_size"),
                                      ("num_epochs", "ppo.n_epochs"), ("iterations", "rllib.iterations"),
                                      ("num_env_runners", "rllib.num_env_runners"), ("out", "run_dir")])
def test_a_former_rllib_settings_key_is_refused_naming_the_key_that_replaced_it(old: str, new: str) -> None:
    with pytest.raises(ConfigError, match=rf"^unknown key {old} \(known: .*\); .* is now {re.escape(new)}$"):
        config_from_dict({old: 1})


@pytest.mark.parametrize("data, message", [
    (_set("ppo", "n_envs", 4), r"ppo\.n_envs: the rllib trainer does not read this key .*default 8"),
    (_set("pool", "size", 3), r"pool\.size: the rllib trainer does not read"),
    ({"total_steps": 5}, r"total_steps: the rllib trainer does not read"),
    (_set("env", "edition", ["classic"]), r"env\.edition: the rllib trainer plays one edition"),
    (_set("env", "edition", "all"), r"env\.edition: the rllib trainer plays one edition"),
    (_set("env", "num_players", [2, 3]), r"env\.num_players: the rllib trainer plays one table size"),
    ({"ppo": {"batch_size": 512}, "rllib": {"train_batch_size": 256}}, r"ppo\.batch_size: 512 is over rllib\.train"),
    (_set("rllib", "opponents", {"snapshot": 0.0}), r"rllib\.opponents: needs a weight above 0"),
    (_set("rllib", "opponents", {"grandmaster": 1.0}), r"rllib\.opponents: unknown agent 'grandmaster'"),
    (_set("rllib", "opponents", {"uno_env.files:atomic_write": 1.0}), r"rllib\.opponents: .*may not import"),
])
def test_the_rllib_trainer_refuses_what_it_cannot_run_naming_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_dict({"trainer": "rllib", **data})


def test_the_rllib_section_reads_the_shared_names_and_ignores_the_sb3_divisibility() -> None:
    config = config_from_dict({"trainer": "rllib", "ppo": {"batch_size": 200, "learning_rate": 1e-4},
                               "rllib": {"train_batch_size": 600, "iterations": 2}})
    assert (config.ppo.batch_size, config.ppo.learning_rate, config.rllib.iterations) == (200, 1e-4, 2)
    with pytest.raises(ConfigError, match=r"ppo\.batch_size: 200 must divide"):
        config_from_dict({"ppo": {"batch_size": 200}})  # sb3 and batched split each rollout into equal minibatches


def test_the_shipped_rllib_config_loads_as_trainer_rllib() -> None:
    pytest.importorskip("pettingzoo")
    from training.rllib.trainer import env_config, rllib_config

    config = rllib_config(ROOT / "configs" / "rllib" / "self_play.yaml", ["rllib.iterations=5", 'run_dir="out"'])
    assert (config.trainer, config.rllib.iterations, config.output_dir()) == ("rllib", 5, Path("out"))
    assert (config.ppo.hidden, config.ppo.activation, config.env.max_turns) == ([256, 256], "relu", 2000)
    assert env_config(config) == {"edition": "classic", "num_players": 2, "max_players": 10, "episode": "round",
                                  "max_turns": 2000, "opponents": {"snapshot": 0.5, "rule": 0.25, "random": 0.25},
                                  "seed": 0}
    with pytest.raises(ConfigError, match="unknown key iterations .* is now rllib.iterations"):
        rllib_config(None, ["iterations=5"])


def test_uno_env_train_sends_an_rllib_config_to_its_own_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(ROOT / "configs" / "rllib" / "self_play.yaml"), "--run-dir", str(tmp_path / "run")])
    assert stopped.value.code == 2
    assert "trainer: rllib is run by python -m training.rllib" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_the_printed_defaults_say_what_each_key_allows() -> None:
    text = commented_defaults()
    comments = " ".join(line.strip().lstrip("# ") for line in text.splitlines() if line.lstrip().startswith("#"))
    for allowed in ("Allowed: an integer in [0, 4294967295].", "Allowed: one of sb3, batched, rllib.",
                    "Allowed: a number in (0, 1].", "Allowed: an integer in [1, 1048576]."):
        assert allowed in comments
    leaves = [line for line in text.splitlines() if ":" in line and not line.lstrip().startswith(("#", "- "))
              and not line.rstrip().endswith(":")]
    assert comments.count("Allowed:") == len(leaves) + 1  # each leaf, and eval.matchups (a list of sections)


def test_the_refusal_shown_in_the_training_docs_is_what_the_command_prints(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shown = "ppo.gamma: must be in (0, 1], got 1.5 (default: 0.99)"
    assert f"uno-env train: c.yaml: {shown}" in (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    path = tmp_path / "c.yaml"
    path.write_text("total_steps: 64\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        main(["--config", str(path), "--set", "ppo.gamma=1.5", "--run-dir", str(tmp_path / "run")])
    assert stopped.value.code == 2 and capsys.readouterr().err == f"uno-env train: {path}: {shown}\n"
