"""``uno_env.core`` stays a pure rules engine: no pettingzoo, gymnasium or torch (STYLE.md, item 1)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import uno_env.core

BANNED = ("pettingzoo", "gymnasium", "torch")
CORE_DIR = Path(uno_env.core.__file__).parent

# Run in a fresh interpreter. A meta-path finder records (and refuses) every attempt to import a
# banned package, so a guarded `try: import torch` is caught too, installed or not.
CHILD = r"""
import json, sys
BANNED = {banned!r}
attempts = []

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BANNED:
            attempts.append(name)
            raise ImportError("blocked by test_core_isolation: " + name)
        return None

sys.meta_path.insert(0, Refuse())
import random
import uno_env.core
from uno_env.core import EDITIONS, Game, Rules
for edition in EDITIONS:
    game = Game(Rules(edition=edition, num_players=3, target_score=100), seed=1)
    rng = random.Random(1)
    steps = 0
    while not game.is_game_over and steps < 5000:
        if game.is_round_over:
            game.next_round()
            continue
        game.step(rng.choice(game.legal_actions()))
        steps += 1
    game.view(0)
    game.events(1)
    game.determinize(2, 3)
    Game.from_dict(json.loads(json.dumps(game.to_dict())))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BANNED)
print(json.dumps({{"attempts": attempts, "loaded": loaded}}))
"""


def test_importing_and_playing_with_core_loads_no_rl_framework():
    result = subprocess.run(
        [sys.executable, "-c", CHILD.format(banned=BANNED)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"attempts": [], "loaded": []}


def test_the_subprocess_check_would_notice_a_banned_import():
    # The same child, with a banned import added, must report it (the check is not vacuous).
    child = CHILD.format(banned=BANNED).replace("import uno_env.core\n", "import uno_env.core\ntry:\n"
                                               "    import gymnasium\nexcept ImportError:\n    pass\n", 1)
    result = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])["attempts"] == ["gymnasium"]


def banned_imports(source: str, filename: str = "<source>") -> list[str]:
    """Absolute imports of a banned package in a module's source, including dynamic ones."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if callee in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found += [f"{filename}:{node.lineno}: {name}" for name in names if name.split(".")[0] in BANNED]
    return found


def test_no_module_under_core_imports_an_rl_framework():
    files = sorted(CORE_DIR.rglob("*.py"))
    assert {f.name for f in files} >= {"game.py", "cards.py", "actions.py", "rules.py", "state.py"}
    problems = [p for f in files for p in banned_imports(f.read_text(encoding="utf-8"), str(f))]
    assert problems == []


def test_the_source_scan_would_notice_a_banned_import():
    source = (
        "import os\nimport torch.nn as nn\nfrom gymnasium import spaces\nfrom . import cards\n"
        "import importlib\nimportlib.import_module('pettingzoo.classic')\n"
    )
    assert [hit.split(": ")[1] for hit in banned_imports(source)] == ["torch.nn", "gymnasium", "pettingzoo.classic"]
