"""Without torch the suite still collects: the modules that need it skip, saying what to install, none errors.

Each check runs pytest in a fresh interpreter where a meta-path finder makes ``torch`` (and every
``torch.*`` submodule) unimportable, as on a machine where it is not installed: the finder raises
``ModuleNotFoundError``, so packages built on torch (Stable-Baselines3, sb3-contrib) fail to import
as they would there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The test modules that import torch (or the batched engine) at the top, behind a module-level skip.
NEEDS_TORCH = ("test_batched.py", "test_batched_mirror.py", "test_critic_export.py", "test_pool.py",
               "test_ppo_batched.py", "test_schedule.py")

SHIM = r"""
import sys

class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (made unimportable by the test)", name=name)
        return None

sys.meta_path.insert(0, NoTorch())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def run_without_torch(*args: str) -> subprocess.CompletedProcess[str]:
    """``pytest ARGS`` in a fresh interpreter without torch, from the repository root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-c", SHIM, "-p", "no:cacheprovider", "-q", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_the_whole_suite_collects_without_torch_and_the_torch_modules_skip():
    result = run_without_torch("--co", "-rs", "tests")
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"collection without torch failed (rc {result.returncode}):\n{output[-4000:]}"
    assert "error" not in output.splitlines()[-1].lower(), output[-2000:]
    for module in NEEDS_TORCH:
        skipped = [line for line in output.splitlines() if line.startswith(f"SKIPPED [1] tests/{module}:")]
        assert skipped, f"tests/{module} was not skipped without torch:\n{output[-2000:]}"
        assert "torch" in skipped[0], skipped[0]  # the reason names what is missing
    # The rule scenarios need no torch: they are still collected (the batched mirror is off there).
    assert "tests/test_rules_sections_4_6.py::test_rule_" in output


def test_a_rule_scenario_runs_without_torch_recorded_as_not_mirrored():
    result = run_without_torch("-p", "no:xdist", "tests/test_rules_sections_4_6.py", "-k", "rule_4_1")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert " passed" in output
    assert "the batched engine cannot be imported" in output and "install torch" in output, output[-2000:]


def test_the_shim_really_hides_torch():
    """The check above would notice a module that imports torch unguarded (it fails to collect)."""
    probe = "import torch"
    result = subprocess.run([sys.executable, "-c", SHIM.replace("import pytest\nsys.exit(pytest.main(sys.argv[1:]))", probe)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr and "made unimportable" in result.stderr
