"""Layers import downward only: ``uno_env.core`` <- ``uno_env`` <- ``agents`` <- ``training``, ``uno_app``.

Read from the source (AST), so an import inside a function, ``__import__("x")`` or
``importlib.import_module("x")`` with a literal name counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("uno_env", "agents", "training", "uno_app")
# (layer, rank): a module may import its own layer and lower ranks only; the two top layers are peers
# that do not import each other.
LAYERS = {"uno_env.core": 0, "uno_env": 1, "agents": 2, "training": 3, "uno_app": 3}


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to (None: outside the project)."""
    if module == "uno_env.core" or module.startswith("uno_env.core."):
        return "uno_env.core"
    top = module.split(".")[0]
    return top if top in LAYERS else None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """(line, module) for every import in a file: statements, ``__import__`` and ``import_module`` literals."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names
                      if layer_of(f"{target}.{alias.name}") != layer_of(target)]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in ("__import__", "import_module"):
                found.append((node.lineno, node.args[0].value))
    return found


def project_files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_imports_go_downward_only() -> None:
    upward = []
    for path in project_files():
        own = layer_of(module_name(path))
        assert own is not None
        for line, target in imports(path):
            other = layer_of(target)
            if other is None or other == own:
                continue
            if LAYERS[other] >= LAYERS[own]:
                upward.append(f"{path.relative_to(ROOT)}:{line} ({own}) imports {target} ({other})")
    assert upward == []


def test_uno_env_imports_nothing_from_agents_training_or_uno_app() -> None:
    for path in (ROOT / "uno_env").rglob("*.py"):
        for line, target in imports(path):
            assert target.split(".")[0] not in ("agents", "training", "uno_app"), f"{path}:{line} {target}"


@pytest.mark.parametrize(
    ("source", "where", "expected"),
    [
        ("import agents\n", "uno_env/x.py", ["agents"]),
        ("def f():\n    from training import train\n", "uno_env/x.py", ["training"]),
        ("from .. import registry\n", "agents/sub/x.py", ["agents"]),
        ("from . import core\n", "uno_env/x.py", ["uno_env", "uno_env.core"]),
        ("__import__('uno_app.cli')\n", "uno_env/x.py", ["uno_app.cli"]),
        ("import importlib\nimportlib.import_module('training.train')\n", "agents/x.py",
         ["importlib", "training.train"]),
    ],
)
def test_the_checker_sees_every_kind_of_import(source: str, where: str, expected: list[str]) -> None:
    assert [target for _, target in imports(ROOT / where, source)] == expected


# ---------------------------------------------------------------------- inside training (issue 23)
TRAINERS = ("training.sb3", "training.batched", "training.rllib")


def _training_imports() -> dict[str, set[str]]:
    """module -> the training modules it imports (a ``from pkg import name`` counts as ``pkg.name`` when
    that is a module)."""
    files = {module_name(p): p for p in (ROOT / "training").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for _, target in imports(path):
            while target and target not in files:
                target = target.rpartition(".")[0]
            if target.startswith("training") and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_run_layer_imports_no_trainer_and_no_trainer_imports_another() -> None:
    graph = _training_imports()
    assert any(_within(m, "training.run") for m in graph) and any(_within(m, "training.sb3") for m in graph)
    wrong = []
    for module, targets in graph.items():
        for target in targets:
            if _within(module, "training.run") and any(_within(target, t) for t in TRAINERS):
                wrong.append(f"{module} (run layer) imports the trainer {target}")
            for trainer in TRAINERS:
                other = [t for t in TRAINERS if t != trainer]
                if _within(module, trainer) and any(_within(target, t) for t in other):
                    wrong.append(f"{module} ({trainer}) imports {target}")
            if _within(target, "training.cli") or _within(target, "training.tools"):
                if not (_within(module, "training.tools") or _within(module, "training.cli")):
                    wrong.append(f"{module} imports {target}, which sits above the trainers")
    assert wrong == []


def test_no_two_training_modules_import_each_other_directly_or_around_a_cycle() -> None:
    graph = _training_imports()
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        for target in sorted(graph.get(module, ())):
            if target in path:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in done:
                visit(target, path + [target])
        done.add(module)

    done: set[str] = set()
    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    assert cycles == []
