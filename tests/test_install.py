"""A normal install is a real install: the wheel, installed into a fresh virtual environment, runs
``uno-env`` from outside the source tree.

The wheel is built from a copy of the working tree (``pip wheel --no-deps --no-build-isolation``:
the test environment's setuptools, no network, nothing written into the checkout) and installed
with ``--no-deps`` into a new venv made without pip. Its dependencies (numpy, PettingZoo, torch,
SB3...) are not downloaded again: a ``.pth`` file puts this environment's ``site-packages`` after
the venv's own, so what is imported from ``uno_env``, ``agents``, ``training`` and ``uno_app``
comes from the wheel (checked) while the libraries come from here. That is what these tests check:
which files the wheel holds (package data, entry point), not which versions pip would resolve.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from agents.ppo_agent import SHIPPED_DIR

ROOT = Path(__file__).resolve().parent.parent
# Never copied into the build: environments, caches, build outputs, runs.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
                                    "runs", "node_modules")

pytestmark = pytest.mark.slow


class Installed:
    """A fresh venv holding the wheel; ``run`` runs a command there, from a folder outside the tree."""

    def __init__(self, venv: Path, workdir: Path) -> None:
        self.venv = venv
        self.workdir = workdir
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        self.env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", NO_COLOR="1",
                        OMP_NUM_THREADS="1")

    def run(self, *argv: str, stdin: str = "", timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (``uno-env`` is the venv's console script) and return it, failing on a non-zero exit."""
        done = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, cwd=self.workdir,
                              env=self.env, timeout=timeout)
        assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(base / "wheel")], check=True, capture_output=True, timeout=300)
    wheel, = (base / "wheel").glob("uno_env-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps",
                    "-q", str(wheel)], check=True, capture_output=True, timeout=300)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # The libraries of this environment, after the venv's own packages (its .pth files are not read,
    # so an editable install of the checkout stays out).
    (Path(purelib) / "_test_libraries.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    workdir = base / "elsewhere"
    workdir.mkdir()
    return Installed(venv, workdir)


def test_the_wheel_is_what_is_imported_and_names_its_version(installed: Installed) -> None:
    where = installed.run("python", "-c", "import json, agents, training, uno_app, uno_env; "
                          "print(json.dumps([m.__file__ for m in (agents, training, uno_app, uno_env)]))")
    for path in json.loads(where.stdout):
        assert Path(path).is_relative_to(installed.venv), path
    assert installed.run("uno-env", "--version").stdout.strip() == "uno-env 0.1.0"
    static = installed.run("python", "-c", "import uno_app.web, pathlib; "
                           "print(sorted(p.name for p in (pathlib.Path(uno_app.web.__file__).parent / 'static').iterdir()))")
    assert "index.html" in static.stdout  # the web page is package data too
    license_file = installed.run("python", "-c", "from importlib import metadata; "
                                 "print(metadata.distribution('uno-env').read_text('licenses/LICENSE'))")
    assert "MIT License" in license_file.stdout and "The uno_env authors" in license_file.stdout


def test_play_and_evaluate_with_baselines_from_the_installed_command(installed: Installed) -> None:
    played = installed.run("uno-env", "play", "--opponents", "rule,simple,random", "--seed", "3", "--delay", "0",
                           "--no-color", stdin="quit\n")
    assert "Your hand:" in played.stdout and "Goodbye." in played.stdout
    report = installed.run("uno-env", "evaluate", "--agents", "rule", "random", "--games", "2", "--no-progress")
    assert "| rule " in report.stdout and "| random " in report.stdout


def test_train_from_the_installed_command(installed: Installed) -> None:
    defaults = installed.run("uno-env", "train", "--print-default-config")
    assert "total_steps:" in defaults.stdout
    config = {
        "name": "tiny", "seed": 3, "total_steps": 128, "checkpoint_every": 128, "progress_bar": False,
        "tensorboard": False, "env": {"edition": "classic", "num_players": 2, "max_turns": 300},
        "ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "hidden": [16]},
        "eval": {"every": 0, "games": 2, "max_decisions": 300,
                 "matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule"}]},
    }
    (installed.workdir / "tiny.yaml").write_text(json.dumps(config))  # JSON is YAML
    trained = installed.run("uno-env", "train", "--config", "tiny.yaml", "--no-progress")
    assert "run complete in runs/tiny" in trained.stdout
    report = installed.run("uno-env", "evaluate", "--agents", "ppo:runs/tiny/last.safetensors", "rule", "--games", "2",
                           "--no-progress")
    assert "ppo[last]" in report.stdout
    demo = subprocess.run(["uno-env", "demo"], capture_output=True, text=True, cwd=installed.workdir, env=installed.env,
                          timeout=300)  # its config is in the clone, not in the package: one line says so
    assert demo.returncode == 2 and demo.stderr.count("\n") == 1 and "--config FILE" in demo.stderr, demo.stderr


def test_shipped_checkpoints_travel_with_the_wheel(installed: Installed) -> None:
    assert SHIPPED_DIR.is_relative_to(ROOT / "agents")  # where package data can travel from
    report = installed.run("uno-env", "evaluate", "--agents", "ppo", "rule", "--games", "2", "--no-progress")
    assert "ppo[classic_2p_long_points]" in report.stdout
    played = installed.run("uno-env", "play", "--players", "3", "--seed", "3", "--delay", "0", "--no-color",
                           stdin="quit\n")
    assert "ppo[classic_3to6]" in played.stdout and "Notice:" not in played.stdout  # no fallback to rule
