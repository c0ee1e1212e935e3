"""TorchRL's masked distribution and GAE beside ``training.batched.ppo``'s, on the batched trainer's shapes.

``pip install torchrl==0.14.1`` (it installs beside torch 2.13.0 without another torch), then
``python -m benchmarks.bench_torchrl``. One torch thread, medians of 30 calls, milliseconds:

* the update's use of the policy: log-probabilities of the taken actions and entropies of a
  minibatch of 2,048 masked rows (``MaskedCategorical`` against a masked ``log_softmax``);
* the rollout's: sampling 128 rows and their log-probabilities (against a Gumbel-max draw);
* GAE over a rollout of 64 env steps x 256 tables with the learner at about half the steps:
  ``training.batched.ppo.gae`` works on the interleaved layout directly; TorchRL's
  ``generalized_advantage_estimate`` is timed on the same number of learner steps already laid
  out as one padded sequence per table (the regathering it would need is not counted).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch


def _time(f: Callable[[], Any], reps: int = 30) -> float:
    f()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    """Print the three comparisons."""
    from torchrl.modules import MaskedCategorical
    from torchrl.objectives.value.functional import generalized_advantage_estimate

    from training.batched.networks import MASKED, sample_actions
    from training.batched.ppo import gae

    torch.set_num_threads(1)
    torch.manual_seed(0)
    logits = torch.randn(2048, 80)
    mask = torch.rand(2048, 80) < 0.15
    mask[:, 55] = True
    actions = torch.multinomial(mask.float(), 1)[:, 0]

    def ours_update() -> Any:
        log_probs = torch.log_softmax(logits.masked_fill(~mask, MASKED), 1)
        return log_probs.gather(1, actions[:, None])[:, 0], -(log_probs.exp() * log_probs).sum(1)

    def torchrl_update() -> Any:
        dist = MaskedCategorical(logits=logits, mask=mask)
        return dist.log_prob(actions), dist.entropy()

    assert torch.allclose(ours_update()[0], torchrl_update()[0], atol=1e-4)
    generator = torch.Generator().manual_seed(0)

    def torchrl_sample() -> Any:
        dist = MaskedCategorical(logits=logits[:128], mask=mask[:128])
        drawn = dist.sample()
        return drawn, dist.log_prob(drawn)

    print(f"update, 2,048 rows: masked log_softmax {_time(ours_update):.2f} ms, "
          f"MaskedCategorical {_time(torchrl_update):.2f} ms")
    print(f"rollout, 128 rows: Gumbel-max {_time(lambda: sample_actions(logits[:128], mask[:128], generator)):.3f} ms, "
          f"MaskedCategorical {_time(torchrl_sample):.3f} ms")
    steps, tables = 64, 256
    acted = torch.rand(steps, tables) < 0.5
    slots = torch.full((steps, tables), -1, dtype=torch.long)
    slots[acted] = torch.arange(int(acted.sum()))
    rewards = torch.where(torch.rand(steps, tables) < 0.03, torch.randn(steps, tables), 0.0)
    dones = torch.rand(steps, tables) < 0.03
    values, last = torch.randn(int(acted.sum())), torch.randn(tables)
    length = int(acted.sum(0).max())
    padded = [torch.randn(tables, length, 1) for _ in range(3)]
    ended = torch.rand(tables, length, 1) < 0.06

    def ours_gae() -> Any:
        return gae(slots, rewards, dones, torch.zeros(steps, tables), values, last, 0.995, 0.9)

    def torchrl_gae() -> Any:
        return generalized_advantage_estimate(0.995, 0.9, padded[0], padded[1], padded[2], ended, ended)

    print(f"GAE, {steps} env steps x {tables} tables: ours (interleaved) {_time(ours_gae):.2f} ms, "
          f"TorchRL (padded per table, gathering not counted) {_time(torchrl_gae):.2f} ms")


if __name__ == "__main__":
    main()
