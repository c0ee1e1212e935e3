"""The README and docs/*.md as a new user meets them: every code block runs as written.

Every fenced block says what it is: ``python`` blocks are run, each in a fresh interpreter from a
scratch folder; every command of a ``bash`` block is either run (from one scratch folder per
document, in order, with this environment's ``bin/`` first on ``PATH``, as after
``. .venv/bin/activate``) or listed in ``NOT_RUN`` with the reason; ``text`` blocks are sample
output. A command added to the docs without an entry here fails ``test_every_command_is_run_or_
says_why_not``, and an entry whose command left the docs fails it too, so docs and tests cannot
drift apart. Commands that are not run still have their options checked against ``--help``, and
the inline commands of the prose (``uno-env play --help``, ``python -m training.tools.ship``,
``make test-eco``, ``pip install -e ".[rllib]"``) name modules, targets, extras and options that
exist.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]  # docs/*.md: the site's pages
LINKED = ("examples", "configs")  # folders of the clone a scratch folder links to, for commands that name them
LANGUAGES = {"python", "bash", "text"}


@dataclass(frozen=True)
class Block:
    """A fenced code block: the document, the line of its opening fence, its language and text."""

    document: Path
    line: int
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def blocks(document: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order."""
    found, lines = [], document.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.fullmatch(r"(```+)\s*(\S*)\s*", lines[i])
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence.group(1))
        found.append(Block(document, i + 1, fence.group(2), "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return found


def commands(block: Block) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments and blank lines dropped."""
    joined = block.text.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            found.append(" ".join(shlex.quote(w) if w != "&&" else w for w in words))
    return found


ALL_BLOCKS = [b for d in DOCUMENTS for b in blocks(d)]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.language == "python"]
BASH_COMMANDS = [(b, c) for b in ALL_BLOCKS if b.language == "bash" for c in commands(b)]


# ---------------------------------------------------------------------- what is run, what is not
@dataclass(frozen=True)
class Run:
    """A command the suite runs as written: ``stdin`` is typed into it; ``output`` must appear in it
    (each of them, for a tuple: the figures its document quotes)."""

    stdin: str = ""
    output: str | tuple[str, ...] = ""
    slow: bool = False


PLAY_QUIT = Run(stdin="quit\n", output="Goodbye.")
RUN: dict[str, Run] = {
    "uno-env evaluate --agents rule 'random*3' --edition monster_high --games 1000 --workers 2 --out results.md "
    "--out results.csv --out results.json --plot winrates.png": Run(output="rule", slow=True),
    "uno-env evaluate --agents rule random --unit game --games 100 --rule stacking=true --rule uno_call=auto":
        Run(output="rule", slow=True),
    # The first game is saved, so the --load line has a save to resume.
    "uno-env play": Run(stdin="save\nquit\n", output="Saved to uno-save.json"),
    "uno-env play --edition monster_high --players 4 --opponents ppo,rule,rule": PLAY_QUIT,
    "uno-env play --seed 42 --target 200 --stacking --seven-zero": PLAY_QUIT,
    "uno-env play --load uno-save.json": PLAY_QUIT,
    "uno-env watch": Run(output="wins the game", slow=True),
    "uno-env watch --agents ppo rule random --edition angry_birds --seed 3 --rounds 1": Run(output="Scores after round 1"),
    "uno-env watch --agents 'ppo*4' --seat 0": Run(output="wins the game"),
    "uno-env train --print-default-config": Run(output="total_steps:"),
    # examples/README.md
    # The figures its docstring quotes (seeded: the same weights every run).
    "python examples/train_sb3.py": Run(output=("| ppo[my_policy] | 1 | 200 | 198 | 99.0% |",
                                                "| ppo[my_policy] | 1 | 200 | 150 | 75.0% |"), slow=True),
    "uno-env evaluate --agents ppo:my_policy.safetensors rule --games 200": Run(output="ppo[my_policy]"),
    "python examples/play_checkpoint.py": Run(output="ppo[classic_4p_points]"),
    "python examples/play_checkpoint.py --edition angry_birds --players 3 --seed 1": Run(output="ppo[universal]"),
    "python examples/tournament.py --games 400 --out results": Run(output="OpenSkill", slow=True),
    "python examples/my_agent.py": Run(output="color-hoarder", slow=True),
    "python examples/batched_agent.py": Run(output="rounds on 1024 tables: play_first won", slow=True),
    "PYTHONPATH=examples uno-env evaluate --agents my_agent:ColorHoarder rule --games 200": Run(output="| ColorHoarder |"),
}
NOT_RUN: dict[str, str] = {
    "make demo": "trains for minutes (2 min 41 s to 7 min 54 s measured on 2 shared cores); what it runs is python -m training.tools.quickstart, "
                 "whose interruption and resume tests/test_training_resume.py runs on a short budget",
    "make test": "is this test suite",
    ". .venv/bin/activate": "the suite already runs in that environment: every command here gets its bin/ first on PATH",
    ".venv/bin/uno-env serve": "a web server that runs until stopped, on port 8000; tests/test_web_load.py and "
                               "tests/test_web_browser.py start it on a free port and play through it",
    "pip install .": "installs dependencies from the package index; tests/test_install.py builds the wheel and "
                     "runs uno-env from a fresh venv without the network",
    "pip install '.[train]'": "as pip install . (tests/test_install.py runs uno-env train from the wheel)",
    "pip install -e '.[dev]'": "what make test installs; the suite runs in that environment",
    "pip install torch==2.13.0": "installs from the package index (this environment has torch 2.13.0)",
    "uno-env evaluate --round-robin --agents rule simple random random-uniform --players 2 --games 4000":
        "reproduces the OpenSkill table: 6 matches of 4,000 rounds took 126 s on 2 shared cores (load 8)",
    "python -m training.tools.quickstart": "is make demo (above)",
    "uno-env train --config configs/classic.yaml": "trains for hours (4M steps); tests/test_training.py trains the "
                                                   "same code on short budgets",
    "uno-env train --config configs/classic_points.yaml": "trains for hours (3M steps), as above",
    "uno-env train --config configs/universal.yaml": "trains for hours (1.5M steps), as above",
    "uno-env train --resume runs/universal": "needs an interrupted universal run; tests/test_training_resume.py "
                                             "interrupts and resumes short runs",
    "tensorboard --logdir runs": "a server that runs until stopped",
    "python -m training.tools.ship runs/universal --name universal": "needs a finished universal run; tests/test_training.py "
                                                               "ships short runs",
    "python -m training.tools.bench": "measures throughput: 8 settings x 3 interleaved runs x 16,384 learner steps",
    "python -m training.rllib --config configs/rllib/self_play.yaml": "needs Ray RLlib (.venv-eco, make test-eco); "
                                                                     "tests/test_ecosystem_rllib.py trains a few iterations",
    "python -m training.rllib --config configs/rllib/self_play.yaml --num-env-runners 2": "needs Ray RLlib, as above",
    "python -m training.rllib --config configs/rllib/self_play.yaml --set 'rllib.opponents={rule: 1}' --iterations 20":
        "needs Ray RLlib, as above",
    "uno-env train --config configs/classic_batched.yaml": "trains for hours; tests/test_ppo_batched.py trains the "
                                                           "same code (trainer: batched) on short budgets",
    "PYTHONPATH=. python -m training.batched.gpu_slice --config configs/gpu_classic.yaml --seconds 240":
        "needs a GPU (CUDA); tests/test_ppo_batched.py interrupts and resumes batched runs on the CPU",
    "PYTHONPATH=. python benchmarks/bench_batched.py --device cuda": "needs a GPU (CUDA); the suite has none "
                                                                      "(tests/test_batched.py runs the engine on the CPU)",
}
# Options not checked against --help where --help itself needs what the suite does not install.
NO_HELP = {"training.rllib": "needs Ray RLlib", "tensorboard": "not ours"}

# Python blocks slower than about 2 s on 2 shared cores, by a line they hold (SB3 training: 9 s, the tournament: 7 s,
# any batched-engine block: importing torch and stepping alone took 3 s).
SLOW_PYTHON = ("model.learn(", "result = evaluate(", "from uno_env.batched import BatchedUno")


def _environment() -> dict[str, str]:
    """This interpreter's environment, its bin/ first on PATH (as an activated venv), one thread each."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(OMP_NUM_THREADS="1", NO_COLOR="1", PYTHONHASHSEED="0")
    return env


def _scratch(tmp_path: Path) -> Path:
    """A folder outside the clone, with links to the clone's folders that commands name (examples/...)."""
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    return tmp_path


def _written(folder: Path) -> list[str]:
    """The files the commands wrote in a scratch folder, relative to it (the links to the clone left out)."""
    found = []
    for top, dirs, files in os.walk(folder):  # links to the clone's folders are not followed
        here = Path(top).relative_to(folder)
        dirs[:] = [d for d in dirs if here != Path(".") or d not in LINKED]
        found += [str(here / f) for f in files]
    return sorted(found)


def _not_ignored(paths: list[str]) -> list[str]:
    """Those of ``paths`` (relative to the clone's root) that the clone's .gitignore does not ignore."""
    if not paths or not (ROOT / ".git").exists():
        return []
    done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(paths) + "\n",
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: none ignored
        pytest.skip(f"git check-ignore failed: {done.stderr.strip()}")
    return sorted(set(paths) - set(done.stdout.splitlines()))


def _param(item: object, where: str, slow: bool) -> object:
    return pytest.param(item, id=where, marks=[pytest.mark.slow] if slow else [])


# ---------------------------------------------------------------------- the blocks themselves
def test_every_block_says_what_it_is() -> None:
    untagged = [f"{b.where}: ```{b.language}" for b in ALL_BLOCKS if b.language not in LANGUAGES]
    assert not untagged, f"tag each code block with one of {sorted(LANGUAGES)}: {untagged}"
    for document in DOCUMENTS:  # an indented code block would escape this test
        lines = document.read_text(encoding="utf-8").splitlines()
        fenced = {n for b in blocks(document) for n in range(b.line, b.line + b.text.count("\n") + 2)}
        indented = [i + 1 for i in range(1, len(lines)) if lines[i].startswith("    ") and lines[i].strip()
                    and not lines[i - 1].strip() and (i + 1) not in fenced]
        assert not indented, f"{document.name}: indented code at lines {indented}; fence it (```bash, ```python)"


def test_every_command_is_run_or_says_why_not() -> None:
    found = {c for _, c in BASH_COMMANDS}
    both = set(RUN) & set(NOT_RUN)
    assert not both, f"listed as run and as not run: {both}"
    unlisted = sorted(found - set(RUN) - set(NOT_RUN))
    assert not unlisted, ("commands in the docs that tests/test_docs.py neither runs nor explains "
                          f"(add each to RUN or NOT_RUN): {unlisted}")
    gone = sorted((set(RUN) | set(NOT_RUN)) - found)
    assert not gone, f"listed in tests/test_docs.py but no longer in the docs: {gone}"


@pytest.mark.parametrize("block", [_param(b, b.where, any(line in b.text for line in SLOW_PYTHON))
                                   for b in PYTHON_BLOCKS])
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(block.text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                          env=_environment(), timeout=300)
    assert done.returncode == 0, f"{block.where} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    left = _not_ignored([f for f in _written(tmp_path) if f != script.name])
    assert not left, f"{block.where} writes {left}, which git status would show: add them to .gitignore"


def _documents_with_runs() -> list[object]:
    by_document: dict[Path, list[str]] = {}
    for block, command in BASH_COMMANDS:
        if command in RUN:
            by_document.setdefault(block.document, []).append(command)
    return [_param(d, str(d.relative_to(ROOT)), any(RUN[c].slow for c in cs)) for d, cs in by_document.items()]


@pytest.mark.parametrize("document", _documents_with_runs())
def test_commands_run_as_written(document: Path, tmp_path: Path) -> None:
    """Every command of RUN in one document, in order, in one scratch folder (later ones may read
    what earlier ones wrote, as a reader's would)."""
    scratch = _scratch(tmp_path)
    for block, command in BASH_COMMANDS:
        if block.document != document or command not in RUN:
            continue
        run = RUN[command]
        done = subprocess.run(["bash", "-c", command], input=run.stdin, capture_output=True, text=True, cwd=scratch,
                              env=_environment(), timeout=300)
        assert done.returncode == 0, f"{block.where}: {command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        for expected in (run.output,) if isinstance(run.output, str) else run.output:
            assert expected in done.stdout + done.stderr, f"{block.where}: {command}: no {expected!r} in its output"
    left = _not_ignored(_written(scratch))  # run from the clone, what they write must not show in git status
    assert not left, f"{document.relative_to(ROOT)}: its commands write {left}: add them to .gitignore"


def test_every_example_is_run() -> None:
    run = " ".join(c for _, c in BASH_COMMANDS if c in RUN)
    for example in sorted((ROOT / "examples").glob("*.py")):
        assert f"examples/{example.name}" in run or f"{example.stem}:" in run, \
            f"examples/{example.name} is not run by any command of examples/README.md"


# ---------------------------------------------------------------------- names the prose uses
def _inline_commands() -> list[tuple[str, str]]:
    """Inline code spans of the docs that are commands: (where, text)."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for block in blocks(document):  # code blocks are checked above (their lines kept, for line numbers)
            text = text.replace(block.text, "\n" * block.text.count("\n"))
        for span in re.finditer(r"`([^`\n]+)`", text):
            code = span.group(1).strip()
            if re.match(r"(uno-env |python -m |make |pip install |\.venv/bin/)", code):
                found.append((f"{document.name}:{text[:span.start()].count(chr(10)) + 1}", code))
    return found


def _module_exists(module: str) -> bool:
    """A module of the checkout (``python -m`` runs from the clone) or of the environment."""
    path = ROOT.joinpath(*module.split("."))
    if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
        return True
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@cache
def _help(prefix: tuple[str, ...]) -> str:
    done = subprocess.run(["bash", "-c", " ".join(map(shlex.quote, prefix)) + " --help"], capture_output=True,
                          text=True, cwd=ROOT, env=_environment(), timeout=120)
    assert done.returncode == 0, f"{' '.join(prefix)} --help failed: {done.stderr[-2000:]}"
    return done.stdout


def _program(words: list[str]) -> tuple[str, ...]:
    """The words before the first option, without file arguments: what ``--help`` is asked of."""
    prefix = []
    for word in words:
        if word.startswith("-") and word not in ("-m",):
            break
        if word in ("COMMAND", "...") or "/" in word or word.endswith((".json", ".yaml")):
            break
        prefix.append(word)
    return tuple(prefix)


def _check_command(words: list[str], where: str) -> None:
    """Modules, make targets, extras and options named by one command exist."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for word in words:  # files of the clone it names (configs, checkpoints, scripts) exist
        if re.fullmatch(r"(configs|checkpoints|agents|docs|benchmarks|examples|training)/\S+\.(yaml|py|safetensors)",
                        word):
            assert (ROOT / word).is_file(), f"{where}: {' '.join(words)}: no file {word} in the clone"
    for segment in " ".join(w if w == "&&" else shlex.quote(w) for w in words).split(" && "):
        words = shlex.split(segment)
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value prefixes
            words = words[1:]
        if not words:
            continue
        if words[0] == "make":
            for target in words[1:]:
                assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"{where}: no make target {target!r}"
            continue
        if words[:2] == ["pip", "install"]:
            for word in words[2:]:
                for extra in re.findall(r"\[([\w,-]+)\]", word):
                    for name in extra.split(","):
                        assert name in extras, f"{where}: no extra {name!r} in pyproject.toml"
            continue
        if words[0] == "python" and words[1:2] == ["-m"]:
            module = words[2]
            assert _module_exists(module), f"{where}: no module {module!r}"
            if module.split(".")[0] in NO_HELP or module in NO_HELP:
                continue
        elif words[0].endswith("uno-env"):
            if len(words) > 1 and not words[1].startswith("-"):
                assert words[1] in _help(("uno-env",)) or words[1] == "help", f"{where}: no uno-env command {words[1]!r}"
        else:
            continue
        options = [w.split("=")[0] for w in words if w.startswith("--")]
        if options:
            text = _help(_program(words))
            missing = [o for o in options if o not in text and o != "--help"]
            assert not missing, f"{where}: {' '.join(words)}: options {missing} are not in its --help"


@pytest.mark.slow
def test_commands_not_run_name_what_exists() -> None:
    for block, command in BASH_COMMANDS:
        if command in NOT_RUN:
            _check_command(shlex.split(command), block.where)


@pytest.mark.slow
def test_inline_commands_name_what_exists() -> None:
    for where, code in _inline_commands():
        words = shlex.split(code.replace("...", "").replace("<", "").replace(">", ""))
        _check_command(words, where)
