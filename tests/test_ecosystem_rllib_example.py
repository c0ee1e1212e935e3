"""RLlib as its docs show (examples/ecosystem/rllib_action_masking.py): train, write an RLlib checkpoint, resume from it.

Needs the ``eco`` extra; skipped, with the reason, where Ray or RLlib is missing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[eco]')")
pytest.importorskip("ray.rllib", reason="Ray is installed without RLlib (pip install -e '.[eco]')")
pytest.importorskip("torch", reason="torch is not installed")

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("rllib_example", ROOT / "examples" / "ecosystem" / "rllib_action_masking.py")
assert spec is not None and spec.loader is not None
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


def module_weights(algorithm) -> dict[str, np.ndarray]:
    weights = algorithm.learner_group.get_weights([example.MODULE])[example.MODULE]
    return {k: np.asarray(v) for k, v in weights.items()}


def test_rllib_trains_writes_a_checkpoint_and_resumes_from_it(tmp_path) -> None:
    from ray.rllib.algorithms.algorithm import Algorithm

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        algorithm = example.build_config(train_batch_size=200, hidden=16).build_algo()
        first = algorithm.train()
        assert first["training_iteration"] == 1
        path = algorithm.save_to_path(str(tmp_path / "checkpoint"))
        saved = module_weights(algorithm)
        algorithm.stop()
        resumed = Algorithm.from_checkpoint(path)
        restored = module_weights(resumed)
        assert saved.keys() == restored.keys() and all(np.array_equal(saved[k], restored[k]) for k in saved)
        second = resumed.train()
        assert second["training_iteration"] == 2  # the count went on from the checkpoint
        assert any(not np.array_equal(saved[k], v) for k, v in module_weights(resumed).items())  # it learned on
        resumed.stop()
    finally:
        ray.shutdown()
