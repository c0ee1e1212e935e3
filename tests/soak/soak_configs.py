"""Soak the training config reader (``training.run.config.load_config`` with ``--set`` overrides read by
``parse_overrides``) with mutated YAML.

Each case writes one config into a folder of its own: a shipped config (``configs/*.yaml``) changed
once, in its data (``tests.test_hostile_saves.mutate``, or a resource setting such as
``ppo.n_envs``, ``eval.workers``, ``batched.num_tables``, ``pool.baselines`` set past its bound), in its
text (an alias bomb, tags that would build Python objects, merge keys, nesting thousands deep, huge
numbers, bad UTF-8, duplicate keys), by ``--set`` overrides of the same kinds, or by a path that is
not a file (a pipe, a folder, ``/dev/zero``, a missing file). ``load_config`` must refuse it with a
``ConfigError`` (or ``FileNotFoundError``, as ``uno-env train`` reports), quickly and in a bounded
message, and leave the folder as it was (no canary file written by a tag), or accept it; an accepted
config keeps every resource setting within its documented bound::

    python -m tests.soak.soak_configs --seconds 600 --seed 3
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.soak.harness import Case, Family, ScratchFolder, main
from tests.soak.soak_saves import dumps
from tests.test_hostile_saves import mutate
from training.run.config import MAX_PROCESSES, MAX_TABLES, MAX_THREADS, ConfigError, load_config, parse_overrides

PROG = "tests.soak.soak_configs"
ROOT = Path(__file__).resolve().parents[2]

HUGE = ["100000", "10000000", "1e999", "-1e999", ".inf", ".nan", "9" * 5000, "0x7fffffffffffffff", "2e9", "-1",
        "0", "1e-400", "true", "~", "[]", "{}", "'ismcts:iterations=1000000000'", "[ismcts:time_budget=1e9]"]
RESOURCE_KEYS = ["ppo.n_envs", "ppo.workers", "ppo.vec_env", "eval.workers", "eval.games", "batched.num_tables",
                 "torch_threads", "pool.baselines", "pool.size", "total_steps", "seed", "ppo.hidden", "ppo.n_steps",
                 "ppo.batch_size", "eval.matchups", "imitation.decisions", "env.num_players", "env.max_turns",
                 "ppo.init_from", "run_dir", "name", "trainer"]
SPECS = ["ismcts:iterations=1000000000", "ismcts:time_budget=1e9", "ismcts:expand_after=0,exploration=-1e308",
         "human", "os:system", "ppo:path=/dev/zero", "rule", "random"]


def alias_bomb(levels: int) -> str:
    """The billion-laughs shape: each level lists the one above nine times (9**levels leaves)."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines)


def text_splices(folder: Path) -> list[tuple[str, str]]:
    """Hostile YAML to put in front of, or in place of, a config: (what, text)."""
    canary = folder / "canary"
    return [
        ("an alias bomb of 9 levels", alias_bomb(9) + "\nseed: *a9\n"),
        ("an alias bomb in seed", "seed: &x [1, 1]\ntotal_steps: *x\n"),
        ("a python tag calling os.system", f'seed: !!python/object/apply:os.system ["touch {canary}"]\n'),
        ("a python/name tag", "seed: !!python/name:os.system\n"),
        ("a python/module tag", "seed: !!python/module:os\n"),
        ("a custom tag", "seed: !custom 5\n"),
        ("a binary tag", "name: !!binary aGVsbG8=\n"),
        ("a timestamp", "name: 2001-12-14t21:59:43.10-05:00\n"),
        ("a merge key", "base: &b {n_envs: 100000}\nppo:\n  <<: *b\n"),
        ("nesting 10,000 deep", "seed: " + "[" * 10_000 + "]" * 10_000 + "\n"),
        ("nesting 10,000 deep (block)", "".join(" " * i + "a:\n" for i in range(0, 2000)) + " " * 2000 + "b: 1\n"),
        ("a 5,000-digit seed", "seed: " + "9" * 5000 + "\n"),
        ("seed 1e999", "seed: 1e999\n"),
        ("duplicate keys", "seed: 1\nseed: 2\n"),
        ("bad UTF-8", "name: \xff\xfe\n"),
        ("a NUL byte", "name: a\x00b\n"),
        ("a tab indent", "ppo:\n\tn_envs: 2\n"),
        ("a document stream", "seed: 1\n---\nseed: 2\n"),
        ("a scalar top level", "just text\n"),
        ("a list top level", "- 1\n- 2\n"),
        ("a huge key", "x" * 200_000 + ": 1\n"),
        ("a set", "pool: !!set {rule, random}\n"),
    ]


OVERRIDES = ["seed=&a [1, 1]", "seed=*a", "seed=1e999", "seed=" + "9" * 5000, "ppo.n_envs=100000",
             "eval.workers=100000", "batched.num_tables=10000000", "torch_threads=100000", "=1", "seed", ".=1",
             "a..b=1", ".".join(["k"] * 5000) + "=1", "ppo=[1]", "ppo.hidden=" + "[" * 5000 + "]" * 5000,
             "pool.baselines=[ismcts:iterations=1000000000]", "pool.baselines=[human]", "seed=!!python/name:os.system",
             "env.edition=[classic]", "ppo.n_envs=4", "total_steps=1000", "seed=7", "name=" + "x" * 100_000,
             "run_dir=/dev/null", "ppo.init_from=/dev/zero", "ppo.init_from=/etc/passwd"]


class ConfigSoak(ScratchFolder):
    """The shipped configs (read once) and the folder cases are written under."""

    prefix = "soak_configs_"

    def __init__(self) -> None:
        super().__init__()
        self.configs: list[tuple[str, str]] = []

    def setup(self, args: Any) -> None:
        self.configs = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "configs").glob("*.yaml"))]
        self.open_scratch()

    def make_case(self, rng: random.Random, index: int) -> Case:
        assert self.folder is not None
        folder = self.folder / f"case_{index}"
        folder.mkdir()
        name, text = rng.choice(self.configs)
        what = [name]
        data = yaml.safe_load(text)
        path = folder / "config.yaml"
        roll = rng.random()
        raw: bytes
        if roll < 0.3:
            data, change = mutate(data, rng)
            what.append(change)
            try:
                raw = yaml.safe_dump(data).encode()
            except RecursionError:  # nested thousands deep: written as JSON, which YAML reads too
                raw = dumps(data)
        elif roll < 0.55:
            key = rng.choice(RESOURCE_KEYS)
            value = rng.choice(HUGE + SPECS)
            what.append(f"{key}: {value[:60]}")
            section, _, leaf = key.rpartition(".")
            body = yaml.safe_dump(data) + (f"{section}:\n  {leaf}: {value}\n" if section else f"{leaf}: {value}\n")
            raw = body.encode()  # a repeated section: the later one wins, or the loader refuses the duplicate
        elif roll < 0.8:
            splice, hostile = rng.choice(text_splices(folder))
            what.append(splice)
            raw = (hostile if rng.random() < 0.5 else text + "\n" + hostile).encode("utf-8", "surrogateescape")
            if splice == "bad UTF-8":
                raw = raw.replace("\xff\xfe".encode(), b"\xff\xfe")
        else:
            raw = text.encode()
        pairs = [rng.choice(OVERRIDES) for _ in range(rng.choice((0, 0, 1, 2)))]
        if roll >= 0.8 and not pairs:
            pairs = [rng.choice(OVERRIDES)]
        if pairs:
            what.append(f"--set {' --set '.join(p[:60] for p in pairs)}")
        path.write_bytes(raw)
        if rng.random() < 0.06:
            path = self.odd_path(folder, rng)
            what.append(f"path {path}")
        run_dir = folder / "run"
        return Case("; ".join(what), lambda: self.load(path, pairs, run_dir), watch=[folder],
                    cleanup=lambda: shutil.rmtree(folder, ignore_errors=True))

    @staticmethod
    def odd_path(folder: Path, rng: random.Random) -> Path:
        kind = rng.randrange(5)
        if kind == 0:
            os.mkfifo(folder / "pipe.yaml")
            return folder / "pipe.yaml"
        if kind == 1:
            (folder / "dir.yaml").mkdir()
            return folder / "dir.yaml"
        if kind == 2:
            return Path("/dev/zero")
        if kind == 3:
            with contextlib.suppress(FileExistsError):
                os.symlink(folder / "loop.yaml", folder / "loop.yaml")
            return folder / "loop.yaml"
        return folder / "missing.yaml"

    @staticmethod
    def load(path: Path, pairs: list[str], run_dir: Path) -> str:
        overrides = parse_overrides(pairs)
        overrides.setdefault("run_dir", str(run_dir))
        config = load_config(path, overrides)
        bounds = [("eval.workers", config.eval.workers, MAX_PROCESSES), ("torch_threads", config.torch_threads, MAX_THREADS)]
        if config.trainer == "batched":  # the sb3 trainer never reads the batched section, nor batched ppo.n_envs
            bounds.append(("batched.num_tables", config.batched.num_tables, MAX_TABLES))
        else:
            bounds.append(("ppo.n_envs", config.ppo.n_envs, 65_536))
        for key, value, bound in bounds:
            assert 1 <= value <= bound, f"an accepted config has {key} = {value}, past its bound {bound}"
        if config.ppo.vec_env == "subproc":
            assert config.ppo.n_envs <= MAX_PROCESSES, f"subproc with ppo.n_envs = {config.ppo.n_envs}"
        return f"accepted:{config.trainer}"


def family() -> Family:
    """The configs family."""

    state = ConfigSoak()
    return Family("configs", state.make_case, (ConfigError, FileNotFoundError), case_timeout=20.0,
                  max_rss_growth_mib=512.0, setup=state.setup, teardown=state.teardown)


def run(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    return main(family(), argv, PROG, __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(run())
