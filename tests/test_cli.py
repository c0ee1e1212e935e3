"""The ``uno-env`` command (``uno_app.cli``) and its ``evaluate`` and ``watch`` commands.

Issue 16 item 9 (the CLI explains itself), item 10 (evaluate shows progress on a terminal or
not), item 13 (the card-code legend) and issue 13 item 8 (``evaluate`` checks its arguments
and output paths before playing).
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import uno_env
from agents.ppo_agent import SHIPPED_DIR
from agents.registry import shipped_checkpoint
from agents.tournament import evaluate
from uno_app import cli, terminal, watch
from uno_app import evaluate as evaluate_cli
from uno_env.core import EDITIONS, Rules
from uno_env.progress import Progress

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``uno-env ARGS`` in a subprocess (stdout and stderr are pipes, not terminals)."""
    return subprocess.run([sys.executable, "-m", "uno_app.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, stdin=subprocess.DEVNULL)


# ---------------------------------------------------------------------- uno-env --help, --version
def test_help_lists_every_command_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for command in cli.COMMANDS:
        assert re.search(rf"^  {command.name} +{re.escape(command.summary)}$", text, re.M), command.name
    assert re.search(r"^  help +", text, re.M) and "--version" in text
    assert cli.main([]) == 2  # no command: the same help, and a usage error
    assert "commands:" in capsys.readouterr().out


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"uno-env {uno_env.__version__}" == f"uno-env {cli.version()}"


def test_the_console_script_is_the_cli_and_uno_app_is_packaged() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["uno-env"] == "uno_app.cli:main"
    assert "uno_app*" in project["tool"]["setuptools"]["packages"]["find"]["include"]


BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.mark.parametrize("preset", [None, "3"])
def test_the_cli_runs_one_blas_thread_a_process_unless_told_otherwise(preset: str | None) -> None:
    """Importing the entry point sets each BLAS thread variable to 1 before numpy loads; a value the user set stays."""
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    probe = ("import os, sys\n"
             "seen = []  # the variables as numpy starts to load\n"
             "def hook(event, args):\n"
             "    if event == 'import' and args[0] == 'numpy' and not seen:\n"
             f"        seen.append([os.environ.get(v) for v in {BLAS_VARS!r}])\n"
             "sys.addaudithook(hook)\n"
             "import uno_app.cli\n"
             "print(*seen[0])\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", preset or "1", "1"]


def test_unknown_commands_are_refused_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["pley"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'pley' (did you mean 'play'?)" in err and "commands are play, watch" in err
    assert cli.main(["help", "nothing"]) == 2


def test_help_command_shows_a_commands_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["help", "play"]) == 0
    assert "usage: uno-env play" in capsys.readouterr().out
    assert cli.main(["play", "--help"]) == 0
    assert "card codes:" in capsys.readouterr().out


@pytest.mark.parametrize("parser", [terminal.build_parser(), evaluate_cli.build_parser(), watch.build_parser()],
                         ids=["play", "evaluate", "watch"])
def test_every_flag_has_a_help_line(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its arguments here
        assert action.help and action.help != argparse.SUPPRESS, action.option_strings


def test_train_without_the_training_libraries_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if pyyaml were not installed
    assert cli.main(["train", "--print-default-config"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install "uno-env[train]"' in err and "'yaml'" in err


def test_serve_without_the_web_libraries_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [m for m in sys.modules if m == "uno_app.web" or m.startswith("uno_app.web.")]:
        monkeypatch.delitem(sys.modules, name)  # imported afresh, as in a process that never loaded it
    monkeypatch.setitem(sys.modules, "fastapi", None)  # as if the web extra were not installed
    assert cli.main(["serve"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install "uno-env[web]"' in err and "'fastapi'" in err


# ---------------------------------------------------------------------- play's help claims
def test_the_card_legend_reads_as_the_editions_do() -> None:
    legend = terminal.card_legend()
    classic = EDITIONS["classic"]
    for code, color, rank in re.findall(r"\b([RGBY][0-9SRD]) (red|green|blue|yellow) (\d|Skip|Reverse|Draw Two)",
                                        legend):
        kind = classic.kind(code)
        assert classic.colors[kind // 13] == color
        assert {"Skip": 10, "Reverse": 11, "Draw Two": 12}.get(rank, int(rank) if rank.isdigit() else -1) == kind % 13
    for name, ed in EDITIONS.items():
        assert f"{name}  " in legend and ", ".join(f"{x} {c}" for x, c in zip(ed.letters, ed.colors, strict=True)) \
            in legend
        if ed.special_code:
            assert f"{ed.special_code:<4} {ed.special_name} ({name} only)" in legend
    assert "W4   Wild Draw Four" in legend and "R first is red, R second is Reverse" in legend


MAPPING = ("classic_2p_long_points for classic at 2 players, classic_4p_points at 4, classic_3to6 at 3, 5 and 6, "
           "universal for every other table")


@pytest.mark.skipif(not (SHIPPED_DIR / "classic_points.safetensors").is_file(), reason="no shipped checkpoints")
def test_the_ppo_help_names_the_checkpoint_each_table_gets() -> None:
    assert MAPPING in terminal.PPO_HELP
    assert MAPPING in \
        evaluate_cli.build_parser().epilog.replace("\n  ", " ")
    for edition in EDITIONS:
        for players in range(2, 11):
            expected = ("classic_2p_long_points" if edition == "classic" and players == 2
                        else "classic_4p_points" if edition == "classic" and players == 4
                        else "classic_3to6" if edition == "classic" and players in (3, 5, 6) else "universal")
            assert shipped_checkpoint(edition, players).stem == expected, (edition, players)  # type: ignore[union-attr]


# ---------------------------------------------------------------------- evaluate: checks before playing
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "0"], "argument --games: must be a positive integer, got 0"),
        (["--games", "-5"], "argument --games: must be a positive integer, got -5"),
        (["--games", "many"], "must be a positive integer, got 'many'"),
        (["--workers", "0"], "argument --workers: must be a positive integer"),
        (["--seed", "-1"], "argument --seed: must be a non-negative integer"),
        (["--out", "report.txt"], "--out report.txt: use a file name ending in .md, .csv, .json"),
        (["--out", "missing/report.md"], "the directory missing does not exist"),
        (["--out", "."], "is a directory"),
        (["--plot", "chart.jpg"], "--plot chart.jpg: use a file name ending in .png, .svg, .pdf"),
        (["--players", "11"], "num_players"),
        (["--rule", "stacking"], "--rule expects KEY=VALUE"),
        (["--rule", "nonsense=1"], "nonsense"),
    ],
)
def test_evaluate_refuses_bad_arguments_before_playing(tmp_path: Path, args: list[str],
                                                                       message: str) -> None:
    out = run_cli("evaluate", "--agents", "rule", "random", *args, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""  # nothing was played
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # and nothing written


def test_an_unwritable_out_folder_is_refused_before_playing(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    # /sys refuses new files even to root, who may write into a read-only folder
    targets = [str(locked / "r.md")] if os.geteuid() != 0 else []
    targets += ["/sys/r.md"] if Path("/sys").is_dir() else []
    try:
        if not targets:
            pytest.skip("no folder here that this user cannot write")
        for target in targets:
            out = run_cli("evaluate", "--agents", "rule", "random", "--out", target)
            assert out.returncode == 2 and "cannot be written" in out.stderr and out.stdout == "", target
    finally:
        locked.chmod(0o700)


def test_evaluate_in_python_refuses_a_game_count_below_one() -> None:
    for games in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="games must be a positive int"):
            evaluate(["rule", "random"], Rules(num_players=2), games=games)  # type: ignore[arg-type]


@pytest.mark.slow  # several subprocesses
def test_evaluate_writes_reports_and_plot(tmp_path: Path) -> None:
    out = run_cli("evaluate", "--agents", "rule", "random", "--games", "4", "--out", "r.md", "--out", "r.csv",
                  "--plot", "r.svg", "--no-progress", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "r.md").read_text() == out.stdout and out.stderr == ""
    assert (tmp_path / "r.svg").read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.md", "r.svg"]  # no temporary files left


# ---------------------------------------------------------------------- evaluate: progress
def test_evaluate_shows_progress_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    out = run_cli("evaluate", "--agents", "rule", "random", "--games", "4", cwd=tmp_path)
    assert out.returncode == 0
    lines = out.stderr.splitlines()
    assert lines[0] == "rule vs random: 0/4 games"
    assert re.fullmatch(r"rule vs random: 4/4 games done in \d+\.\d s", lines[-1])
    assert "| rule |" in out.stdout and "0/4 games" not in out.stdout  # the report stays clean on stdout


def test_progress_lines_come_at_most_every_interval() -> None:
    """The one reporter (``uno_env.progress``) as the tournament uses it, on a fake clock."""
    now = [0.0]
    stream = io.StringIO()
    with Progress("match:", 100, "games", stream=stream, interval=10.0, clock=lambda: now[0]) as bar:
        for _ in range(10):
            now[0] += 4.0
            bar.advance(10)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "match: 0/100 games"
    assert lines[1:-1] == ["match: 30/100 games (30%), 12 s elapsed, about 28 s left",
                           "match: 60/100 games (60%), 24 s elapsed, about 16 s left",
                           "match: 90/100 games (90%), 36 s elapsed, about 4 s left"]
    assert lines[-1] == "match: 100/100 games done in 40.0 s"
    quiet = io.StringIO()
    with Progress("match:", 100, "games", enabled=False, stream=quiet) as bar:
        bar.advance(100)
    assert quiet.getvalue() == ""


# ---------------------------------------------------------------------- watch
def test_watch_tells_a_reproducible_game(tmp_path: Path) -> None:
    args = ("watch", "--agents", "rule", "random", "random", "--seed", "3", "--rounds", "1", "--no-color")
    first, second = run_cli(*args), run_cli(*args)
    assert first.returncode == 0 and first.stdout == second.stdout
    text = first.stdout
    assert text.startswith("UNO, 3 players, seed 3: player 0 rule, player 1 random, player 2 random")
    assert "-- Round 1:" in text and "Scores after round 1:" in text and "Traceback" not in first.stderr
    assert re.search(r"Player \d draws [RGBY]", text)  # an onlooker sees every card


def test_watch_from_a_seat_shows_only_what_it_may_know() -> None:
    out = run_cli("watch", "--agents", "rule", "--players", "3", "--seed", "3", "--rounds", "1", "--seat", "0",
                  "--no-color")
    assert out.returncode == 0
    assert not re.search(r"Player [12] draws [RGBYW]", out.stdout)  # others' draws are counted
    assert re.search(r"You draw|Player [12] draws (a card|\d+ cards)", out.stdout)


@pytest.mark.slow  # several subprocesses
def test_watch_refuses_bad_options() -> None:
    for args, message in [(["--agents", "rule", "rule", "--players", "3"], "needs 1 or 3 specs"),
                          (["--seat", "5"], "--seat must be 0..3"), (["--rounds", "0"], "--rounds must be"),
                          (["--agents", "nobody"], "unknown agent 'nobody'")]:
        out = run_cli("watch", *args)
        assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_a_human_seat_whose_input_ends_stops_the_game_with_a_message_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from uno_app.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # stdin at EOF from the start
    code = main(["evaluate", "--agents", "human", "rule", "--players", "2", "--games", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert "the input of the human at seat" in err and "ended (stdin closed)" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("entry", ["uno-env play", "uno_app.terminal.main"])
def test_a_saves_human_opponent_whose_input_ends_stops_the_game_with_a_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], entry: str) -> None:
    """Issue 27.4: ``"opponents": ["human"]`` in a save, stdin ending after the player's own move."""
    import json

    from helpers import position

    game = position("classic", 3, hands={0: ["R5", "G1"]}, discard=["R7"])
    path = tmp_path / "save.json"
    path.write_text(json.dumps({"format": "uno_env.play", "version": 1, "human_seat": 0, "opponents": ["human"],
                                "forgetful": 0.0, "seed": 1, "uno_prompt": False, "game": game.to_dict()}))
    before = path.read_bytes()
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n"))  # play R5, then the input ends at seat 1's decision
    argv = ["--no-color", "--delay", "0", "--load", str(path)]
    code = cli.main(["play", *argv]) if entry == "uno-env play" else terminal.main(argv)
    err = capsys.readouterr().err
    assert code == 1
    assert "the input of the human at seat 1 ended (stdin closed)" in err and "the game stops here" in err
    assert "Traceback" not in err
    assert path.read_bytes() == before
