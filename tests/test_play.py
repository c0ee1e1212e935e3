"""``uno-env play``: the real program driven through a pseudo-terminal (pexpect).

Games are kept short and deterministic: a fixed ``--seed`` or a saved position
(``tests.helpers.position``) loaded with ``--load``, a low target, rule-agent opponents
(deterministic), and prompts answered by script (option 1) until the game-over line.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pexpect
import pytest
from rich.console import Console

from agents import RuleAgent
from agents.registry import AgentSpecError, shipped_checkpoint
from tests.helpers import position
from uno_app.terminal import ForgetfulAgent, PlaySession, build_parser, make_opponent, read_save, setup, split_specs
from uno_env.core import EDITIONS, Game
from uno_env.core import actions as A
from uno_env.core.errors import StateError

PROMPT = "your move> "
ROUND_PROMPT = "press Enter for the next round> "
TIMEOUT = 60  # a hang, not speed: the CLI starts slowly on a loaded machine (20 s timed out once at load 9)


def _command() -> list[str]:
    script = Path(sys.executable).with_name("uno-env")
    if script.exists():
        return [str(script), "play"]
    found = shutil.which("uno-env")
    if found:
        return [found, "play"]
    return [sys.executable, "-m", "uno_app.terminal"]


def _as_from_a_shell() -> None:
    """In the child before exec: Ctrl-C's signal as a shell starts a program, whatever the test process's state
    (an ignored or blocked SIGINT is inherited through fork and exec; in full suite runs the game then never
    saw a Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def spawn(*args: str, color: bool = False, cwd: Path | None = None) -> pexpect.spawn:
    """Start ``uno-env play`` in a pseudo-terminal (plain text unless ``color``)."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm-256color" if color else "dumb"
    env["COLUMNS"] = "200"
    argv = _command() + ["--opponents", "rule", "--delay", "0", *args]
    if not color:
        argv.append("--no-color")
    child = pexpect.spawn(argv[0], argv[1:], env=env, encoding="utf-8", timeout=TIMEOUT,
                          dimensions=(50, 200), cwd=str(cwd) if cwd else None, preexec_fn=_as_from_a_shell)
    child.delaybeforesend = None  # answers are scripted; no need to wait for a human's pace
    child.logfile_read = io.StringIO()  # the whole transcript: child.logfile_read.getvalue()
    return child


def drive(child: pexpect.spawn, answer: str = "1", max_prompts: int = 3000) -> str:
    """Answer every prompt with ``answer`` (Enter between rounds) until the game is over."""
    out = []
    for _ in range(max_prompts):
        i = child.expect_exact([PROMPT, ROUND_PROMPT, pexpect.EOF])
        out.append(child.before)
        if i == 0:
            child.sendline(answer)
        elif i == 1:
            child.sendline("")
        else:
            child.close()
            return "".join(out)
    raise AssertionError("the game did not end")


def saved_game(tmp_path: Path, game: Game, name: str = "position.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(game.to_dict()))
    return path


def hand_line(text: str) -> str:
    return re.findall(r"Your hand: [^\r\n]*", text)[-1]


# ---------------------------------------------------------------------- whole games
def test_play_whole_scripted_game_to_the_target_score() -> None:
    child = spawn("--seed", "3", "--target", "30")
    transcript = drive(child)
    assert child.exitstatus == 0
    assert "Traceback" not in transcript
    assert "Seed 3" in transcript
    assert "== UNO - round 1 - first to 30 points ==" in transcript
    assert "Round 1 over:" in transcript  # the scoring summary after the round
    assert re.search(r"player 0 \(you\): \d+ cards? left", transcript)
    assert "GAME OVER:" in child.before
    assert "\x1b[" not in transcript  # --no-color: plain text


def test_play_seed_reproduces_the_game() -> None:
    first = spawn("--seed", "11", "--target", "1", "--players", "3")
    second = spawn("--seed", "11", "--target", "1", "--players", "3")
    one, two = drive(first), drive(second)
    assert one == two
    assert first.before == second.before  # the same game-over line


@pytest.mark.parametrize(
    ("edition", "hand", "moves", "expected"),
    [
        ("classic", ["W", "R1", "Y2", "G3", "B4", "B5", "B6"], [("play W", "You play W"), ("blue", "You name blue")],
         []),
        ("monster_high", ["WU", "B1", "B2", "B3", "G3", "G4", "P5"],
         [("play WU", 'You play WU - "Urrrhhh!"'), ("give blue", '"Urrrhhh!" You give B1 to player 1'),
          ("green", "You name green")],
         ['"Urrrhhh!" You give B2 to player 2', '"Urrrhhh!" You give B3 to player 3']),
        ("angry_birds", ["WK", "R1", "Y2", "G3", "B4", "B5", "B6"],
         [("play WK", "You play WK - King Pig deals!"), ("red", "You name red")],
         ["King Pig deals G1 to player 1", "King Pig deals Y2 to player 2",
          "King Pig deals R3 to player 3 - red: the deal stops"]),
        ("masters_of_the_universe", ["WG", "R1", "B2", "G3", "P4", "P5", "P6"],
         [("play WG", 'You play WG - "By the power of Greyskull... I have the power!"'),
          ("purple", "You name purple")],
         ["By the power of Greyskull, player 1 draws 3 cards", "By the power of Greyskull, player 3 draws 3 cards"]),
    ],
)
def test_play_every_edition_with_its_flavour(tmp_path: Path, edition: str, hand: list[str],
                                             moves: list[tuple[str, str]], expected: list[str]) -> None:
    ed = EDITIONS[edition]
    top = ed.letters[0] + "7"
    draw = ["G1", "Y2", "R3"] if edition == "angry_birds" else []
    game = position(edition, 4, hands={0: hand}, discard=[top], draw=draw, target_score=1)
    child = spawn("--load", str(saved_game(tmp_path, game)))
    child.expect_exact(PROMPT)
    assert f"== {ed.title} - round 1 - first to 1 points ==" in child.before
    for answer, reply in moves:
        child.sendline(answer)
        child.expect_exact(reply)
    child.expect_exact(PROMPT)
    for line in expected:
        assert line in child.logfile_read.getvalue()
    if edition == "monster_high":  # the cards the human gave away are known and shown
        assert re.search(r"player 3 +rule .*you know: B3", child.logfile_read.getvalue())
    child.sendline("1")
    rest = drive(child)
    assert child.exitstatus == 0
    assert "GAME OVER:" in child.before
    assert "Traceback" not in rest


@pytest.mark.parametrize(
    ("flags", "marker"),
    [
        (["--teams", "--stacking", "--seven-zero", "--draw-until-playable", "--target", "50"], "team A"),
        (["--elimination", "--players", "3", "--target", "60"], "(elimination)"),
        (["--uno-call", "auto", "--no-bluff", "--scoring", "lowest", "--target", "50"], "(lowest total wins)"),
        (["--players", "2", "--target", "40", "--seat", "1", "--forgetful", "0.5", "--uno-prompt"], "you are player 1"),
    ],
)
def test_play_rule_options_as_flags_play_to_the_end(flags: list[str], marker: str) -> None:
    child = spawn("--seed", "4", *flags)
    transcript = drive(child)
    assert child.exitstatus == 0
    assert "GAME OVER:" in child.before
    assert marker in transcript
    assert "Traceback" not in transcript


def test_play_never_shows_hidden_cards(tmp_path: Path) -> None:
    nines = ["Y9", "Y9", "G9", "G9", "B9", "B9", "R9"]
    game = position("classic", 3, hands={0: ["R1", "R2", "G3", "G4", "B5", "B6", "Y7"], 1: nines}, discard=["R8"],
                    draw=["Y1"])
    child = spawn("--load", str(saved_game(tmp_path, game)))
    child.expect_exact(PROMPT)
    child.sendline("draw")  # Y1 does not play on R8: a forced keep (rule 3.4), then the others' turns
    child.expect_exact(PROMPT)
    child.sendline("keep")  # their cards stay hidden unless played
    child.expect_exact(PROMPT)
    screen = child.logfile_read.getvalue()
    played = set(re.findall(r"Player 1 plays (\w+)", screen))
    for code in set(nines) - played:
        assert code not in screen
    assert "Player 1 draws a card" in screen or played  # others' draws are counted, not shown
    child.sendline("quit")


# ---------------------------------------------------------------------- input
def test_play_invalid_input_reprompts_and_changes_nothing() -> None:
    child = spawn("--seed", "3", "--target", "30")
    child.expect_exact(PROMPT)
    before = hand_line(child.before)
    for bad, message in [("play Z9", "Cannot read 'play Z9'"), ("99", "There is no option 99"),
                         ("", "Empty input"), ("play G9", "'play G9' is not one of your options now")]:
        child.sendline(bad)
        child.expect_exact(message)
        child.expect_exact(PROMPT)
        assert "nothing was changed" in child.before
    child.sendline("show")
    child.expect_exact(PROMPT)
    assert hand_line(child.before) == before
    child.sendline("help")
    child.expect_exact("Commands: help, show")
    child.sendline("play R7")  # typed text works as well as a number
    child.expect_exact("You play R7")
    child.sendline("quit")
    child.expect_exact("Goodbye.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def wait_until_reading(child: pexpect.spawn) -> None:
    """Wait until ``child`` sleeps in read() on its terminal (Linux's /proc/PID/syscall; elsewhere return at once).

    A Ctrl-C sent the moment the prompt shows can land after the prompt's write but before the read that
    follows: Python's handler only records it, and the read then blocks until the next key (the lost wake-up
    of any Python program's input(); a person's Ctrl-C comes later). It happened once in a busy suite run."""
    syscall = Path(f"/proc/{child.pid}/syscall")
    for _ in range(6000):  # a hang guard only: 60 s of 10 ms waits
        try:
            fields = syscall.read_text().split()
        except OSError:  # no /proc, or not allowed to read it
            return
        if fields[:2] == ["0", "0x0"]:  # read(0, ...), blocked
            return
        time.sleep(0.01)


def _signal_state(child: pexpect.spawn) -> str:
    """What decides whether a Ctrl-C reaches ``child``: its signal masks and threads, the terminal's ISIG,
    and this test process's own SIGINT state (for a failure's message)."""
    import termios
    try:
        status = Path(f"/proc/{child.pid}/status").read_text().splitlines()
        lines = [line for line in status if line.startswith(("Sig", "Shd", "Threads"))]
    except OSError as err:
        lines = [f"no /proc status: {err}"]
    isig = bool(termios.tcgetattr(child.child_fd)[3] & termios.ISIG)
    here = (signal.getsignal(signal.SIGINT), sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
            threading.current_thread() is threading.main_thread())
    return f"child {'; '.join(lines)}; pty ISIG {isig}; test process SIGINT handler, mask, main thread: {here}"


def test_play_ctrl_c_exits_cleanly() -> None:
    child = spawn("--seed", "3")
    child.expect_exact(PROMPT)
    wait_until_reading(child)
    child.sendintr()
    if child.expect_exact(["Interrupted: goodbye", pexpect.TIMEOUT]) == 1:
        pytest.fail(f"no answer to Ctrl-C; {_signal_state(child)}")
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 130


def test_play_colors_by_default_and_plain_with_no_color() -> None:
    child = spawn("--seed", "3", color=True)
    child.expect_exact(PROMPT)
    assert "\x1b[" in child.before  # rich styles the cards
    child.sendline("quit")
    child.expect(pexpect.EOF)
    plain = spawn("--seed", "3")
    plain.expect_exact(PROMPT)
    assert "\x1b[" not in plain.before
    assert "Your hand: R7 Y2 Y6 GD B0 BR W4" in plain.before  # sorted by color then rank
    plain.sendline("quit")
    plain.expect(pexpect.EOF)


# ---------------------------------------------------------------------- save and load
def test_play_save_and_load_resume_the_game(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    child = spawn("--seed", "5", "--target", "40", "--players", "3", cwd=tmp_path)
    child.expect_exact(PROMPT)
    child.sendline("1")
    child.expect_exact(PROMPT)
    before = hand_line(child.before)
    child.sendline(f"save {path}")
    child.expect_exact(f"Saved to {path}")
    child.sendline("save")  # the default file, in the working directory
    child.expect_exact("Saved to uno-save.json")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    data = json.loads(path.read_text())
    assert data["format"] == "uno_env.play" and data["human_seat"] == 0
    assert data["opponents"] == ["rule", "rule"]
    game = Game.from_dict(data["game"])  # the game itself is Game.to_dict()
    assert game.to_dict() == data["game"]
    assert (tmp_path / "uno-save.json").exists()

    resumed = spawn("--load", str(path))
    resumed.expect_exact(PROMPT)
    assert hand_line(resumed.before) == before
    assert hand_line(resumed.before) == "Your hand: " + " ".join(game.view(0)["hand"])
    resumed.sendline("1")
    drive(resumed)
    assert resumed.exitstatus == 0
    assert "GAME OVER:" in resumed.before


def test_play_load_rejects_a_bad_file_cleanly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "uno_env.game", "hands": 3}')
    child = spawn("--load", str(bad))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "is not a saved game" in child.before and "Traceback" not in child.before


@pytest.mark.slow  # several subprocesses
def test_a_saved_games_opponents_never_run_code(tmp_path: Path) -> None:
    import subprocess

    hostile = "ctypes._aix:Popen:args='touch PWNED',shell=True"
    game = position("classic", 4, hands={0: ["R5", "G1"]}, discard=["R7"])
    for opponents in ([hostile], [hostile] * 3, ["rule", "os:system", "rule"]):
        path = tmp_path / "hostile.json"
        path.write_text(json.dumps({"format": "uno_env.play", "version": 1, "human_seat": 0, "opponents": opponents,
                                    "forgetful": 0.0, "seed": 1, "uno_prompt": False, "game": game.to_dict()}))
        before = path.read_bytes()
        out = subprocess.run(_command() + ["--no-color", "--load", str(path)], capture_output=True, text=True,
                             cwd=tmp_path, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "may not import code" in out.stderr and "Traceback" not in out.stderr
        assert not (tmp_path / "PWNED").exists()
        assert path.read_bytes() == before  # nothing changed


# ---------------------------------------------------------------------- decisions
def test_rule_5_1_human_who_forgets_uno_is_caught(tmp_path: Path) -> None:
    game = position("classic", 4, hands={0: ["R5", "G1"]}, discard=["R7"], target_score=500)
    child = spawn("--load", str(saved_game(tmp_path, game)))
    child.expect_exact(PROMPT)
    child.sendline("play R5")
    child.expect_exact("You do not call UNO!")
    child.expect_exact("Player 1 catches you not calling UNO: 2 cards")
    child.expect_exact("You draw ")
    child.sendline("quit")


def test_rule_5_1_human_calls_uno_with_the_play(tmp_path: Path) -> None:
    game = position("classic", 4, hands={0: ["R5", "G1"]}, discard=["R7"])
    child = spawn("--load", str(saved_game(tmp_path, game)))
    child.expect_exact(PROMPT)
    child.sendline("uno")  # said first, alone
    child.expect_exact("UNO! (it counts if this turn leaves you with one card)")
    child.sendline("play R5")
    child.expect_exact("You call UNO!")
    child.expect_exact(PROMPT)
    assert "catches you" not in child.before
    assert re.search(r"player 0 +you +1 card +0 points.*UNO!", child.before)
    child.sendline("quit")


def test_rule_5_2_human_catches_a_forgetful_opponent(tmp_path: Path) -> None:
    game = position("classic", 4, hands={1: ["R5", "G1"]}, discard=["R7"], current=1)
    child = spawn("--load", str(saved_game(tmp_path, game)), "--seat", "2", "--forgetful", "1")
    child.expect_exact("Player 1 has one card and did not call UNO!")
    child.expect_exact("1) catch (player 1 did not call UNO: 2 cards)")
    child.expect_exact(PROMPT)
    child.sendline("1")
    child.expect_exact("You catch player 1 not calling UNO: 2 cards")
    child.sendline("quit")


def test_rule_5_4_human_challenges_a_wild_draw_four(tmp_path: Path) -> None:
    game = position("classic", 4, hands={1: ["W4", "B2"]}, discard=["R7"], current=1)
    child = spawn("--load", str(saved_game(tmp_path, game)), "--seat", "2")
    child.expect_exact("Player 1 played a Wild Draw Four on you (the color before it was red)")
    child.expect_exact("1) challenge (player 1 played W4 on red)")
    child.expect_exact(PROMPT)
    child.sendline("challenge")
    child.expect_exact("Player 1 was not bluffing")
    child.expect_exact("Player 1 shows you their hand: B2")
    child.expect_exact("You draw ")
    child.sendline("quit")


def test_rule_7_4_seven_zero_swap_shows_whose_hand(tmp_path: Path) -> None:
    game = position("classic", 3, hands={0: ["R7", "G1", "G2"], 1: ["B1", "B2", "B3", "B4"]},
                    discard=["R5"], seven_zero=True)
    child = spawn("--load", str(saved_game(tmp_path, game)))
    child.expect_exact(PROMPT)
    child.sendline("play R7")
    child.expect_exact("1) swap +1 (player 1, 4 cards)")
    child.expect_exact(PROMPT)
    child.sendline("swap +1")
    child.expect_exact("You swap hands with player 1")
    child.sendline("quit")


# ---------------------------------------------------------------------- opponents
def test_play_default_ppo_falls_back_to_rule_without_a_checkpoint(tmp_path: Path) -> None:
    child = pexpect.spawn(_command()[0], _command()[1:] + ["--no-color", "--seed", "3", "--checkpoints", str(tmp_path)],
                          encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    child.logfile_read = io.StringIO()
    child.expect_exact("Notice: no shipped PPO checkpoint in")
    child.expect_exact("player 1: rule, player 2: rule, player 3: rule")
    child.expect_exact(PROMPT)
    assert child.logfile_read.getvalue().count("Notice:") == 1  # one line, not one per opponent
    child.sendline("quit")


def _tiny_checkpoint(path: Path, max_players: int) -> Path:
    """A random (untrained) policy in the real checkpoint format, small enough to write in a test."""
    import numpy as np

    from agents.ppo_agent import write_checkpoint
    from uno_env.observation import NUM_ACTIONS, observation_size

    rng = np.random.default_rng(0)
    size = observation_size(max_players)
    tensors = {"obs_scale": np.ones(size, np.float32),
               "hidden.0.weight": rng.normal(0, 0.3, (8, size)).astype(np.float32),
               "hidden.0.bias": np.zeros(8, np.float32),
               "action.weight": rng.normal(0, 0.3, (NUM_ACTIONS, 8)).astype(np.float32),
               "action.bias": np.zeros(NUM_ACTIONS, np.float32)}
    meta = {"max_players": max_players, "observation_size": size, "hidden": [8], "activation": "tanh",
            "editions": list(EDITIONS), "num_players": [2, 3, 4], "steps": 0, "seed": 0, "config": {}}
    write_checkpoint(path, tensors, meta)
    return path


def test_play_default_opponents_play_the_shipped_ppo_checkpoint(tmp_path: Path) -> None:
    _tiny_checkpoint(tmp_path / "universal.safetensors", max_players=4)
    argv = _command() + ["--no-color", "--delay", "0", "--seed", "2", "--target", "1", "--players", "3",
                         "--checkpoints", str(tmp_path), "--opponents", "ppo,rule"]
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    child.delaybeforesend = None
    child.expect_exact("player 1: ppo[universal], player 2: rule")
    transcript = drive(child)
    assert child.exitstatus == 0 and "GAME OVER:" in child.before
    assert "Notice" not in transcript and "Traceback" not in transcript
    assert re.search(r"Player 1 (plays|draws)", transcript)


def test_play_ppo_specs_name_shipped_checkpoints_or_paths(tmp_path: Path) -> None:
    path = _tiny_checkpoint(tmp_path / "universal.safetensors", max_players=4)
    notices: list[str] = []
    agent, label = make_opponent("ppo", tmp_path, notices)
    assert label == "ppo[universal]" and notices == []
    for spec in (f"ppo:{path}", f"ppo:path={path}", "ppo:universal"):  # issue 16 item 1: one grammar
        agent, label = make_opponent(spec, tmp_path, notices)
        assert agent.metadata["max_players"] == 4 and label == "ppo[universal]", spec
    with pytest.raises(AgentSpecError, match="no PPO checkpoint"):
        make_opponent(f"ppo:{tmp_path / 'missing.safetensors'}", tmp_path, notices)


def test_play_ppo_falls_back_when_the_checkpoint_cannot_load(tmp_path: Path) -> None:
    (tmp_path / "universal.safetensors").write_bytes(b"damaged")
    notices: list[str] = []
    agent, label = make_opponent("ppo", tmp_path, notices)
    assert isinstance(agent, RuleAgent) and label == "rule"
    agent, label = make_opponent("ppo", tmp_path, notices)
    assert len(notices) == 1 and "cannot load the PPO checkpoint" in notices[0]
    assert shipped_checkpoint(directory=tmp_path / "nowhere") is None
    with pytest.raises(AgentSpecError):  # a named checkpoint that cannot load is an error, not a fallback
        make_opponent("ppo:universal", tmp_path, notices)


def test_play_ppo_prefers_the_most_specialised_shipped_checkpoint_for_the_table(tmp_path: Path) -> None:
    from agents.ppo_agent import read_checkpoint, write_checkpoint

    universal = _tiny_checkpoint(tmp_path / "universal.safetensors", max_players=10)
    tensors, meta = read_checkpoint(universal)
    classic = tmp_path / "classic.safetensors"
    write_checkpoint(classic, tensors, {**meta, "editions": ["classic"], "num_players": [2, 3, 4]})
    (tmp_path / "damaged.safetensors").write_bytes(b"not a checkpoint")  # skipped, not fatal
    assert shipped_checkpoint("classic", 4, tmp_path) == classic
    assert shipped_checkpoint("monster_high", 4, tmp_path) == universal  # the specialist never saw it
    assert shipped_checkpoint("classic", 3, tmp_path) == classic
    assert shipped_checkpoint(directory=tmp_path) == universal  # no table given: the universal one
    points = tmp_path / "classic_points.safetensors"
    config = {**meta.get("config", {}), "env": {**meta.get("config", {}).get("env", {}), "reward": "score"}}
    write_checkpoint(points, tensors, {**meta, "editions": ["classic"], "num_players": [2, 3, 4], "config": config})
    assert shipped_checkpoint("classic", 4, tmp_path) == points  # equally specialised: trained on points
    assert shipped_checkpoint("monster_high", 2, tmp_path) == universal
    points.unlink()
    notices: list[str] = []
    agent, label = make_opponent("ppo", tmp_path, notices, "classic", 2)
    assert label == "ppo[classic]" and agent.metadata["editions"] == ["classic"] and notices == []


def test_play_opponent_specs_split_on_commas_keep_agent_options() -> None:
    assert split_specs("ppo,rule,rule") == ["ppo", "rule", "rule"]
    assert split_specs("rule:challenge=false,urrrhhh_min=3,random") == [
        "rule:challenge=false,urrrhhh_min=3", "random"]
    assert split_specs("random*2,rule") == ["random", "random", "rule"]


def test_play_forgetful_wrapper_forgets_uno_with_probability_p() -> None:
    info = {**_minimal_view(), "legal_action_ids": [A.UNO, A.NO_UNO], "phase": "uno"}
    always = ForgetfulAgent(RuleAgent(), 1.0, seed=1)
    never = ForgetfulAgent(RuleAgent(), 0.0, seed=1)
    assert always.act(None, info) == A.NO_UNO
    assert never.act(None, info) == A.UNO
    half = ForgetfulAgent(RuleAgent(), 0.5, seed=2)
    calls = [half.act(None, info) for _ in range(200)]
    assert 60 < calls.count(A.NO_UNO) < 140
    play_info = {"legal_action_ids": [A.DRAW], "phase": "play"}
    assert always.act(None, {**_minimal_view(), **play_info}) == A.DRAW  # only UNO calls are forgotten
    with pytest.raises(ValueError):
        ForgetfulAgent(RuleAgent(), 1.5)


def _minimal_view() -> dict[str, object]:
    game = position("classic", 2, hands={0: ["G1"]}, discard=["R7"])
    return dict(game.view(0))


@pytest.mark.slow  # several subprocesses
def test_play_rejects_bad_options() -> None:
    for args, message in [(["--players", "4", "--opponents", "rule,rule"], "needs 1 or 3 specs"),
                          (["--seat", "7"], "--seat must be 0..3"),
                          (["--teams", "--players", "3"], "teams needs an even number"),
                          (["--opponents", "nobody"], "unknown agent 'nobody'")]:
        child = pexpect.spawn(_command()[0], _command()[1:] + ["--no-color", *args], encoding="utf-8",
                              timeout=TIMEOUT)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 2, args
        assert message in child.before, (args, child.before)


# ---------------------------------------------------------------------- saves: refused cleanly, written atomically
def _save(tmp_path: Path, **changes: object) -> Path:
    game = position("classic", 4, hands={0: ["R5", "G1"]}, discard=["R7"])
    data = {"format": "uno_env.play", "version": 1, "human_seat": 0, "opponents": ["rule"] * 3, "forgetful": 0.0,
            "seed": 1, "uno_prompt": False, "game": game.to_dict()}
    data.update(changes)
    path = tmp_path / "save.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"human_seat": None}, "human_seat must be a seat 0..3, got null"),
        ({"human_seat": "0"}, "human_seat must be a seat 0..3"),
        ({"human_seat": True}, "human_seat must be a seat 0..3"),
        ({"human_seat": 4}, "human_seat must be a seat 0..3, got 4"),
        ({"seed": [1]}, "seed must be an int in 0..9223372036854775807, got [1]"),
        ({"seed": -1}, "seed must be an int"),
        ({"seed": 2**64}, "seed must be an int"),
        ({"seed": 1.5}, "seed must be an int"),
        ({"opponents": [1]}, "opponents must be a list of agent specs"),
        ({"opponents": "rule"}, "opponents must be a list of agent specs"),
        ({"opponents": None}, "opponents must be a list of agent specs"),
        ({"opponents": []}, "opponents must be a list of agent specs"),
        ({"forgetful": 2}, "forgetful must be a number in [0, 1]"),
        ({"forgetful": float("nan")}, "forgetful must be a number in [0, 1], got NaN"),
        ({"forgetful": 10**400}, "forgetful must be a number in [0, 1]"),  # found by tests/soak/soak_saves.py
        ({"uno_prompt": "yes"}, "uno_prompt must be true or false"),
        ({"version": 2}, "save version 2, this uno-env reads version 1"),
        ({"cheat": 1}, "unknown key(s) 'cheat'"),
        ({"game": {"hands": 3}}, "is not a saved game"),
        ({"game": None}, "is not a saved game"),
    ],
)
def test_a_bad_save_is_a_typed_error_and_changes_nothing(tmp_path: Path, changes: dict[str, object],
                                                                          message: str) -> None:
    path = _save(tmp_path, **changes)
    before = path.read_bytes()
    with pytest.raises(StateError) as err:
        read_save(path)
    assert message in str(err.value)
    assert path.read_bytes() == before


def test_malformed_save_files_are_typed_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    for text, message in [("not json", "not JSON"), ("[1, 2]", "expected a JSON object"),
                          ("[" * 100_000 + "]" * 100_000, "not JSON")]:
        path.write_text(text)
        with pytest.raises(StateError, match=re.escape(message)):
            read_save(path)
    with pytest.raises(StateError, match="cannot read"):
        read_save(tmp_path / "missing.json")
    assert read_save(_save(tmp_path)).opponents == ["rule"] * 3


@pytest.mark.slow  # several subprocesses
def test_play_load_refuses_a_bad_save_in_one_line(tmp_path: Path) -> None:
    import subprocess

    for changes in ({"human_seat": None}, {"seed": [1]}, {"opponents": [1]}):
        path = _save(tmp_path, **changes)
        out = subprocess.run(_command() + ["--no-color", "--load", str(path)], capture_output=True, text=True,
                             timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert out.stderr.startswith("uno-env play: error: ") and out.stderr.count("\n") == 1


def _session(tmp_path: Path, *args: str) -> tuple[PlaySession, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, color_system=None, no_color=True, width=200, markup=False, highlight=False)
    argv = ["--opponents", "rule", "--delay", "0", "--seed", "3", "--save-file", str(tmp_path / "uno-save.json"),
            *args]
    return setup(build_parser().parse_args(argv), console), buffer


def test_a_failed_save_leaves_the_old_save_whole(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    session, buffer = _session(tmp_path)
    target = tmp_path / "uno-save.json"
    assert session.command("save")
    good = target.read_bytes()
    assert read_save(target).game.to_dict() == session.game.to_dict()
    session.game.step(session.game.legal_actions()[0])

    def disk_full(self: Path, data: bytes) -> int:
        with open(self, "wb") as handle:
            handle.write(data[: len(data) // 2])  # half the file, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", disk_full)
    assert session.command("save")
    assert "Could not save to" in buffer.getvalue() and "No space left on device" in buffer.getvalue()
    assert target.read_bytes() == good  # the old save is whole and still loads
    assert sorted(p.name for p in tmp_path.iterdir()) == ["uno-save.json"]  # no temporary file left


def test_opponents_are_labelled_with_what_they_are(tmp_path: Path) -> None:
    _tiny_checkpoint(tmp_path / "universal.safetensors", max_players=4)
    session, buffer = _session(tmp_path, "--opponents", "ppo,random,rule:challenge=false", "--checkpoints",
                               str(tmp_path))
    assert session.labels == {1: "ppo[universal]", 2: "random", 3: "rule:challenge=false"}
    assert "player 1: ppo[universal], player 2: random, player 3: rule:challenge=false" in buffer.getvalue()
    session.show_table()
    assert re.search(r"player 3 +rule:challenge=false +7 cards", buffer.getvalue())


def test_rule_3_4_an_unplayable_drawn_card_is_kept_without_asking(tmp_path: Path) -> None:
    game = position("classic", 3, hands={0: ["G1", "G2"]}, discard=["R7"], draw=["B3"])
    child = spawn("--load", str(saved_game(tmp_path, game)))
    child.expect_exact(PROMPT)
    child.sendline("draw")
    child.expect_exact(PROMPT)  # the next turn of the human, after the rule agents'
    told = child.before
    child.sendline("quit")
    child.expect(pexpect.EOF)
    assert "You draw B3: it cannot be played, so you keep it." in told
    before_next_turn = told.split("Player 1 plays")[0]
    assert before_next_turn.count("B3") == 1 and "keep the drawn card" not in told  # one line, not three


def test_play_load_of_a_file_that_is_not_a_game_names_the_problem_then_the_keys_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"foo": 1}')
    child = spawn("--load", str(bad))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    lines = [line for line in child.before.splitlines() if line.strip()]
    assert lines[0] == f"uno-env play: error: {bad} is not a saved game: 22 of its 22 keys missing; unknown key 'foo'."
    assert lines[1] == "A saved game (Game.to_dict) has the keys:"
    assert all(len(line) <= 78 for line in lines[1:])
    listed = " ".join(lines[2:])
    assert listed.count("rng_state") == 1 and listed.count("current_player") == 1 and "(and optional log)" in listed


def test_play_load_names_the_few_missing_keys_of_a_nearly_whole_game(tmp_path: Path) -> None:
    data = position("classic", 2, hands={0: ["R5"]}, discard=["R7"]).to_dict()
    del data["known"]
    path = tmp_path / "nearly.json"
    path.write_text(json.dumps({**data, "colour": "red"}))
    with pytest.raises(StateError, match=r"not a saved game: 1 of its 22 keys missing \(known\); unknown key 'colour'\.\n"):
        read_save(path)
