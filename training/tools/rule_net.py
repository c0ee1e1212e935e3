"""rule_net: a policy network fitted to RuleAgent's decisions by imitation alone (no PPO).

``python -m training.tools.rule_net --config configs/rule_net.yaml --out agents/checkpoints/rule_net.safetensors``

RuleAgent is Python and cannot run inside a batched engine; rule_net is a network that plays
like it, so a batched trainer can seat it as an opponent and fit a fresh policy to it as a
teacher. Anywhere else it is the checkpoint spec ``ppo:rule_net`` (the plain ``ppo`` spec of
the apps never picks it: its metadata says which agent it ``imitates``).

The run reads a training config (``training.run.config``) and uses what imitation needs: ``env``
(the tables, drawn per round: editions, table sizes, rule options), ``imitation`` (teacher,
decisions, epochs, learning rate, batch size), ``ppo.hidden`` and ``ppo.activation`` (the
network), ``seed`` and ``torch_threads``; the other sections are not used. It

1. for each of ``imitation.epochs`` passes, records ``imitation.decisions`` decisions of the
   teacher playing itself at every seat, on rounds never played before, and fits the policy to
   them for one epoch (``training.sb3.imitation.imitate``: cross-entropy on the teacher's moves; its
   accuracy on the pass's last 2% of rounds, left out of the fit, is printed). Unlike the warm
   start of ``uno-env train``, which fits ``epochs`` passes over one recording, no decision is
   seen twice, so more passes cannot overfit, and memory holds one pass (float16 observations:
   about 1.8 GB per million decisions). The value is not shipped: a linear one is fitted, at
   ``ppo.vf_coef`` (0 ignores it);
2. writes the actor in the checkpoint format of ``agents.ppo_agent`` (metadata ``steps`` 0, as
   no PPO step was taken; ``imitates``, the teacher spec; ``imitation``, the fit's statistics)
   and, beside it, ``<name>.yaml``, the config it was made with;
3. measures agreement on fresh rounds (another seed): the share of the teacher's decisions with
   more than one legal action where the checkpoint's argmax is the teacher's move, over all the
   config's tables, then per edition and table size (``--agreement`` decisions each);
4. with ``--games N``, plays the checkpoint against RuleAgent and against random through the
   tournament harness (``training.tools.ship.evaluate_all``: seat rotation, duplicate deals, Wilson
   intervals, one round per game) at ``--players`` table sizes, N rounds per classic lineup and
   ``--other-games`` in the other editions, and writes ``<name>.json`` and ``<name>.md``.

Everything is derived from ``seed``: the same config gives the same file.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from training.run.config import ConfigError, TrainConfig, load_config, parse_overrides  # noqa: E402

__all__ = ["agreement", "agreement_table", "build_policy", "fit", "main", "record"]

AGREEMENT_SIZES = (2, 4, 6, 10)  # table sizes of the per-table agreement


def build_policy(config: TrainConfig) -> Any:
    """An untrained SB3 maskable policy with the config's actor (``ppo.hidden``, ``ppo.activation``)
    and a linear critic (the value is not shipped, so it gets no hidden layers)."""
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from training.sb3.policy import policy_kwargs
    from uno_env.observation import NUM_ACTIONS, observation_bounds

    p, max_players = config.ppo, config.env.max_players
    low, high = observation_bounds(max_players)
    kwargs = policy_kwargs(p.hidden, p.activation, max_players)
    kwargs["net_arch"] = {"pi": list(p.hidden), "vf": []}
    return MaskableActorCriticPolicy(spaces.Box(low=low, high=high, dtype=np.float32), spaces.Discrete(NUM_ACTIONS),
                                     lambda _: config.imitation.learning_rate, **kwargs)


def record(config: TrainConfig, seed: int, chunk: int = 50_000,
           on_progress: Callable[[int], None] | None = None) -> Any:
    """``imitation.decisions`` teacher decisions (``training.sb3.imitation.play_demonstrations``), played
    in chunks of fresh rounds copied into one array as they come, so memory stays near the arrays'
    own size (the rows of one big recording, built at once, cost about three times as much);
    ``on_progress`` gets the count recorded after each round."""
    from training.sb3.imitation import Demonstrations, play_demonstrations

    total = config.imitation.decisions
    spare = -(-total // chunk) * config.env.max_turns  # a chunk ends with its last round: under max_turns more
    arrays: dict[str, np.ndarray] = {}
    filled = rounds = index = 0
    while filled < total:
        def progress(count: int, before: int = filled) -> None:
            if on_progress is not None:
                on_progress(before + count)

        part = play_demonstrations(config, min(chunk, total - filled),
                                   int(np.random.SeedSequence([seed, index]).generate_state(1)[0]), on_progress=progress)
        index += 1
        fields = {"observations": part.observations, "masks": part.masks, "actions": part.actions,
                  "returns": part.returns}
        if not arrays:
            arrays = {k: np.empty((total + spare, *v.shape[1:]), v.dtype) for k, v in fields.items()}
        for key, values in fields.items():
            arrays[key][filled:filled + len(part)] = values
        filled += len(part)
        rounds += part.rounds
    return Demonstrations(**{k: v[:filled] for k, v in arrays.items()}, rounds=rounds)


def fit(config: TrainConfig, out: Path, show_progress: bool = True) -> dict[str, float]:
    """Record the teacher, fit the policy, write the checkpoint to ``out``; returns the fit's statistics."""
    from training.run.rundir import checkpoint_metadata
    from training.sb3.imitation import imitate
    from training.sb3.policy import export_policy
    from training.sb3.trainer import seed_everything
    from uno_env.progress import Progress

    if not config.imitation.teacher:
        raise ConfigError("imitation.teacher: rule_net needs a teacher to imitate (e.g. rule)")
    if config.ppo.privileged_critic:
        raise ConfigError("ppo.privileged_critic: rule_net fits no critic worth a privileged view; set it false")
    seed_everything(config.seed, config.torch_threads)
    policy = build_policy(config)
    one_pass = config.model_copy(update={"imitation": config.imitation.model_copy(update={"epochs": 1})})
    started = time.perf_counter()
    recorded = 0.0
    decisions = rounds = 0
    stats: dict[str, float] = {}
    passes, teacher = config.imitation.epochs, config.imitation.teacher
    for epoch in range(1, passes + 1):  # every pass on rounds never seen before
        seed = int(np.random.SeedSequence([config.seed, 1, epoch]).generate_state(1)[0])
        clock = time.perf_counter()
        with Progress(f"[rule_net] pass {epoch}/{passes}: recording {teacher}'s play:", config.imitation.decisions,
                      "decisions", enabled=show_progress) as bar:
            demos = record(config, seed, on_progress=bar.update)
        recorded += time.perf_counter() - clock
        stats = imitate(policy, one_pass, seed=seed, show_progress=show_progress, demos=demos)
        stats["epoch"] = epoch
        decisions, rounds = decisions + len(demos), rounds + demos.rounds
        print(f"[rule_net] pass {epoch}/{passes}: held-out accuracy {100 * stats['accuracy']:.2f}% "
              f"({len(demos):,} decisions, {time.perf_counter() - started:.0f} s so far)", file=sys.stderr, flush=True)
        del demos
    stats.update({"decisions": float(decisions), "rounds": float(rounds), "play_seconds": recorded,
                  "seconds": time.perf_counter() - started})
    metadata = checkpoint_metadata(config, 0)
    metadata.update({"imitates": config.imitation.teacher, "imitation": stats})
    out.parent.mkdir(parents=True, exist_ok=True)
    export_policy(policy, out, metadata)
    return stats


def agreement(agent: Any, config: TrainConfig, decisions: int, seed: int) -> tuple[float, int]:
    """(share of the teacher's decisions where ``agent``'s argmax is the teacher's move, decisions)
    over fresh rounds of the config's tables; decisions with one legal action are not counted."""
    from training.sb3.imitation import play_demonstrations

    env = config.env.model_copy(update={"skip_forced": True})
    demos = play_demonstrations(config.model_copy(update={"env": env}), decisions, seed)
    size = agent.metadata["observation_size"]
    chosen = agent.choose(demos.observations[:, :size].astype(np.float32), demos.masks)
    return float(np.mean(chosen == demos.actions)), len(demos)


def agreement_table(agent: Any, config: TrainConfig, decisions: int, seed: int) -> tuple[list[dict[str, Any]], str]:
    """Agreement over the config's own table mix, then per edition and table size with default rules,
    then with each rule option's other values alone (first edition, a middle table size)."""
    from uno_env.core.rules import Rules

    rows: list[dict[str, Any]] = []
    cells: list[tuple[str, Any, Any, dict[str, Any]]] = [("all", config.env.edition, config.env.num_players,
                                                          config.env.rules)]
    sizes = [n for n in AGREEMENT_SIZES if n in config.env.table_sizes()]
    cells += [(edition, edition, n, {}) for edition in config.env.editions() for n in sizes]
    first, size = config.env.editions()[0], sizes[(len(sizes) - 1) // 2] if sizes else config.env.table_sizes()[0]
    defaults: dict[str, Any] = dict(Rules(edition=first, num_players=size).to_dict())
    for key, values in config.env.rules.items():  # each other value of a rule option, alone
        for value in dict.fromkeys(values if isinstance(values, list) else [values]):
            if value != defaults[key]:
                cells.append((first, first, size, {key: value}))
    for label, edition, num_players, rules in cells:
        env = config.env.model_copy(update={"edition": edition, "num_players": num_players, "rules": rules})
        share, count = agreement(agent, config.model_copy(update={"env": env}), decisions, seed)
        players = "as trained" if label == "all" else num_players
        rows.append({"edition": label, "num_players": players, "rules": rules, "decisions": count,
                     "agreement": share})
        print(f"[agreement] {label} {players}: {100 * share:.2f}% of {count}", file=sys.stderr, flush=True)
    lines = ["| edition | players | rule options | decisions | agreement |", "|---|---:|---|---:|---:|"]
    lines += [f"| {r['edition']} | {r['num_players']} | {_options_text(r['rules'])} | {r['decisions']} | "
              f"{100 * r['agreement']:.1f}% |" for r in rows]
    return rows, "\n".join(lines) + "\n"


def _options_text(rules: dict[str, Any]) -> str:
    """``stacking: true``, or for an option drawn per round, its values' shares: ``stacking: false 5/6, true 1/6``."""
    def value(v: Any) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    def shares(values: list[Any]) -> str:
        return ", ".join(f"{value(v)} {values.count(v)}/{len(values)}" for v in dict.fromkeys(values))

    return "; ".join(f"{k}: {shares(v) if isinstance(v, list) else value(v)}" for k, v in rules.items()) or "defaults"


def _write_config(path: Path, config: TrainConfig, out: Path) -> None:
    """The config beside the checkpoint, headed by the command that remakes it."""
    import yaml

    from uno_env.files import atomic_write

    atomic_write(path, f"# Remakes {out.name} (imitation only, no PPO step):\n"
                       f"#   python -m training.tools.rule_net --config {path.as_posix()} --out {out.as_posix()}\n"
                       "# It reads env, imitation, ppo.hidden/activation, seed and torch_threads; the rest is unused.\n"
                       + yaml.safe_dump(config.to_dict(), sort_keys=False))


def main(argv: list[str] | None = None) -> None:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m training.tools.rule_net", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="YAML training config (configs/rule_net.yaml)")
    parser.add_argument("--out", help="checkpoint to write (default runs/<name>/<name>.safetensors)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override any config key, YAML value: --set ppo.hidden=[512,512]")
    parser.add_argument("--agreement", type=int, default=20_000,
                        help="fresh teacher decisions per agreement cell (0: none)")
    parser.add_argument("--games", type=int, default=0, help="rounds per classic lineup (0: no evaluation)")
    parser.add_argument("--other-games", type=int, default=2_000, help="rounds per lineup in the other editions")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6], help="table sizes evaluated")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--skip-fit", action="store_true", help="measure an existing --out checkpoint only")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars or lines")
    args = parser.parse_args(argv)
    from agents import PPOAgent
    from training.tools.ship import evaluate_all
    from uno_env.files import atomic_write

    try:
        config = load_config(args.config, parse_overrides(args.set))
    except ConfigError as err:
        print(f"rule_net: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    out = Path(args.out or config.output_dir() / f"{config.name}.safetensors")
    started = time.perf_counter()
    if not args.skip_fit:
        fit(config, out, show_progress=not args.no_progress)
        _write_config(out.with_suffix(".yaml"), config, out)
        print(f"wrote {out} ({out.stat().st_size} bytes) in {time.perf_counter() - started:.0f} s", flush=True)
    agent = PPOAgent.load(out)
    card: dict[str, Any] = {"checkpoint": out.name, "imitates": agent.metadata.get("imitates"),
                            "seed": agent.metadata["seed"], "hidden": agent.metadata["hidden"],
                            "editions": agent.metadata["editions"], "num_players": agent.metadata["num_players"],
                            "rules": agent.metadata["rules"], "size_bytes": out.stat().st_size,
                            "imitation": agent.metadata.get("imitation")}
    text = f"# {out.stem}: fitted to `{card['imitates']}` by imitation, seed {card['seed']}\n\n"
    if args.agreement:
        seed = int(np.random.SeedSequence([config.seed, 2]).generate_state(1)[0])  # not the fit's rounds
        rows, table = agreement_table(agent, config, args.agreement, seed)
        card["agreement"] = rows
        text += ("Agreement with the teacher on fresh rounds (decisions with more than one legal action; "
                 f"the checkpoint's argmax):\n\n{table}\n")
    if args.games:
        rows, table = evaluate_all(out, agent.metadata["editions"], args.games, args.other_games, args.workers,
                                   players=args.players)
        card["evaluation"] = rows
        text += ("Against RuleAgent and random (tournament harness, seat rotation, duplicate deals, "
                 f"deterministic policy, one round per game):\n\n{table}")
    card["measure_seconds"] = round(time.perf_counter() - started, 1)
    atomic_write(out.with_suffix(".json"), json.dumps(card, indent=1) + "\n")
    atomic_write(out.with_suffix(".md"), text)
    print(text)


if __name__ == "__main__":
    main()
