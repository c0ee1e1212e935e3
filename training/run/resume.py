"""Resume state: what ``uno-env train --resume RUN_DIR`` continues from, as safetensors + JSON.

Reading it runs no code: no pickle anywhere (``resume/model.zip``, SB3's cloudpickle format
written by earlier versions, is never opened; a run directory holding only that is refused
with ``ResumeError``). The SB3 model is rebuilt from the run's config and these tensors are
loaded into it. ``<run dir>/resume/`` holds

* ``state.json``: ``format`` (``"uno_env.resume"``), ``format_version`` (1), ``steps``,
  ``model`` (the tensors file below), ``counters`` (SB3's ``n_updates`` and ``episode_num``),
  ``rng`` (Python's and numpy's global generator states), and the run's own bookkeeping:
  ``snapshots`` (the pool, oldest first, each ``pool/<name>.safetensors``), ``elo``, ``best``
  (``{"score", "steps"}`` or null), ``last_eval_step``, ``evals`` (lines of ``evals.jsonl``
  written so far), ``next_snapshot``, ``next_eval``, ``next_checkpoint``, ``resumed_at``,
  ``imitation`` (the warm start's statistics) and ``complete`` (the final evaluation and exports
  are written);
* ``model_<steps>.safetensors``: the policy's ``state_dict`` (``policy/<name>``), Adam's
  per-parameter state (``optimizer/<index>/<step|exp_avg|exp_avg_sq>``), torch's and numpy's
  generator states (``rng/torch``, ``rng/numpy``), and ``{"steps": S}`` in its header metadata;
* ``best_<steps>.safetensors`` and ``best_<steps>.json``: the run's ``best`` files as this state
  knew them (``--resume`` puts them back if a later, lost stretch of the run replaced them).

``read_resume`` checks every field, that every file the state names exists and that the pool
snapshots and the copy of ``best`` are playable checkpoints, before anything is changed.

A save writes the new tensors file under a new name, then the copies of ``best``, then
``state.json`` (atomically, ``uno_env.files``), and only then deletes the files no state names
any more (older tensors, pool snapshots dropped since the last save). Killed at any moment, the
directory holds the last ``state.json`` and every file it names.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from training.run.state import JsonObject, RunState
from uno_env.core.cards import short_repr
from uno_env.files import (
    SafetensorsHeaderError,
    atomic_path,
    atomic_write,
    read_at_most,
    safetensors_header,
)

if TYPE_CHECKING:
    import torch

__all__ = ["FORMAT", "FORMAT_VERSION", "ResumeError", "capture", "previous_run_files", "read_resume", "read_resume_model",
           "remove_stale_temporaries", "restore", "write_resume"]

FORMAT = "uno_env.resume"
FORMAT_VERSION = 1
MAX_STATE_BYTES = 10_000_000
METADATA_KEY = "uno_env.resume"
SNAPSHOT_NAME = re.compile(r"snap_[0-9]{1,19}")
# The largest resume model read: the networks, Adam's two moments and the stand-ins (run G's, 256x256 at
# 4 players with a privileged critic, is about 9 MB).
MAX_MODEL_BYTES = 1 << 30
MODEL_NAME = re.compile(r"model_[0-9]{1,19}\.safetensors")
PICKLE_SUFFIXES = (".zip", ".pkl", ".pickle", ".pt", ".pth")  # SB3's model.zip and torch.save files


class ResumeError(ValueError):
    """A run directory that cannot be resumed (missing, damaged, foreign or pickled state); says what is allowed."""


# ---------------------------------------------------------------------- capture and restore (torch side)
def capture(module: torch.nn.Module, optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], JsonObject]:
    """``(tensors, rng)`` of a trainer: its networks (``policy/<name>``), Adam's moments and the global RNG
    states (torch's and numpy's key as tensors; Python's and numpy's position in ``rng``)."""
    import torch

    tensors: dict[str, torch.Tensor] = {f"policy/{k}": v.detach().cpu().clone().contiguous()
                                        for k, v in module.state_dict().items()}
    for index, entry in optimizer.state_dict()["state"].items():
        for key, value in entry.items():
            tensors[f"optimizer/{index}/{key}"] = torch.as_tensor(value).detach().cpu().clone().contiguous()
    tensors["rng/torch"] = torch.get_rng_state().clone()
    numpy_state = np.random.get_state(legacy=False)
    tensors["rng/numpy"] = torch.as_tensor(np.asarray(numpy_state["state"]["key"], np.uint32).view(np.int32))
    version, python_state, gauss_next = random.getstate()
    rng: JsonObject = {"python": [int(version), [int(x) for x in python_state], gauss_next],
                       "numpy": {"pos": int(numpy_state["state"]["pos"]), "has_gauss": int(numpy_state["has_gauss"]),
                                 "gauss": float(numpy_state["gauss"])}}
    return tensors, rng


def restore(module: torch.nn.Module, optimizer: torch.optim.Optimizer, tensors: Mapping[str, torch.Tensor],
            state: RunState, source: str = "resume state") -> None:
    """Load ``capture``'s output into a trainer rebuilt from the same config; raises ResumeError on any mismatch.
    The trainer sets its own step and ``state.counters``."""
    import torch

    expected = {f"policy/{k}": v for k, v in module.state_dict().items()}
    params = [p for group in optimizer.param_groups for p in group["params"]]
    optimizer_keys = {k for k in tensors if k.startswith("optimizer/")}
    other = set(tensors) - set(expected) - optimizer_keys - {"rng/torch", "rng/numpy"}
    missing = set(expected) - set(tensors)
    if missing or other:
        raise ResumeError(f"{source}: its network does not match this run's config (missing {sorted(missing)[:4]}, "
                          f"unexpected {sorted(other)[:4]}); resume with the config the run was trained with")
    policy_state = {}
    for key, reference in expected.items():
        value = _widened(tensors[key], reference.shape, reference if reference.dim() == 1 else None)
        if tuple(value.shape) != tuple(reference.shape) or value.dtype != reference.dtype:
            raise ResumeError(f"{source}: {key} is {value.dtype}{tuple(value.shape)}, this run's config builds "
                              f"{reference.dtype}{tuple(reference.shape)}")
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise ResumeError(f"{source}: {key} holds NaN or infinite values")
        policy_state[key.removeprefix("policy/")] = value
    optimizer_state: dict[int, dict[str, torch.Tensor]] = {}
    for key in sorted(optimizer_keys):
        parts = key.split("/")
        if len(parts) != 3 or not parts[1].isdigit() or int(parts[1]) >= len(params) \
                or parts[2] not in ("step", "exp_avg", "exp_avg_sq"):
            raise ResumeError(f"{source}: unexpected optimizer tensor {key} (this run's Adam has {len(params)} "
                              "parameters, each with step, exp_avg and exp_avg_sq)")
        index, name = int(parts[1]), parts[2]
        shape = () if name == "step" else tuple(params[index].shape)
        value = _widened(tensors[key], shape, None)
        if tuple(value.shape) != shape or value.dtype != torch.float32 or not bool(torch.isfinite(value).all()):
            raise ResumeError(f"{source}: {key} is {value.dtype}{tuple(value.shape)}, expected finite float32{shape}")
        optimizer_state.setdefault(index, {})[name] = value
    if any(set(entry) != {"step", "exp_avg", "exp_avg_sq"} for entry in optimizer_state.values()):
        raise ResumeError(f"{source}: an optimizer entry lacks step, exp_avg or exp_avg_sq")
    torch_rng, numpy_key = tensors["rng/torch"], tensors["rng/numpy"]
    if torch_rng.dtype != torch.uint8 or torch_rng.shape != torch.get_rng_state().shape \
            or numpy_key.dtype != torch.int32 or tuple(numpy_key.shape) != (624,):
        raise ResumeError(f"{source}: the generator states are not torch's and numpy's (rng/torch "
                          f"{torch_rng.dtype}{tuple(torch_rng.shape)}, rng/numpy {numpy_key.dtype}{tuple(numpy_key.shape)})")
    module.load_state_dict(policy_state)
    template = optimizer.state_dict()
    optimizer.load_state_dict({"state": optimizer_state, "param_groups": template["param_groups"]})
    rng = state.rng or {}
    try:
        torch.set_rng_state(tensors["rng/torch"])
        words = np.asarray(tensors["rng/numpy"].numpy()).view(np.uint32)
        np.random.set_state({"bit_generator": "MT19937", "state": {"key": words, "pos": rng["numpy"]["pos"]},
                             "has_gauss": rng["numpy"]["has_gauss"], "gauss": rng["numpy"]["gauss"]})
        version, python_state, gauss_next = rng["python"]
        random.setstate((version, tuple(python_state), gauss_next))
    except (RuntimeError, ValueError, TypeError, KeyError, OverflowError) as err:
        raise ResumeError(f"{source}: a random generator state is damaged ({err})") from None


def _widened(value: torch.Tensor, shape: Sequence[int], fresh: torch.Tensor | None) -> torch.Tensor:
    """``value`` as this version's observation layout makes it, when it was written before observation
    version 3 appended the ``drew_on`` slice to the public vector (``uno_env.observation.widening``); else
    ``value`` itself. The new inputs are inserted where the version 2 public vector ended (before a
    privileged critic's hidden part): weights and Adam's moments get zeros there, so the network
    computes what it did; a per-input scale (a 1-D buffer) gets ``fresh``'s entries, this run's own."""
    import torch

    from uno_env.observation import ObservationVersionError, widening_of_growth

    if not value.dim() or len(shape) != value.dim() or tuple(shape[:-1]) != tuple(value.shape[:-1]):
        return value
    extra = shape[-1] - value.shape[-1]
    try:  # resume states of version 1 were never written
        _, at = widening_of_growth(extra, 2)
    except ObservationVersionError:  # not a first layer an observation version widened
        return value
    if value.shape[-1] < at:
        return value
    insert = (fresh[at:at + extra].to(value.dtype) if fresh is not None
              else torch.zeros((*value.shape[:-1], extra), dtype=value.dtype))
    return torch.cat([value[..., :at], insert, value[..., at:]], dim=-1)


# ---------------------------------------------------------------------- files
def write_resume(run_dir: Path, state: RunState, tensors: Mapping[str, torch.Tensor]) -> None:
    """Write the tensors, the copies of ``best``, then ``state.json``; then delete what no state names."""
    from safetensors.torch import save_file

    resume = run_dir / "resume"
    resume.mkdir(parents=True, exist_ok=True)
    model = f"model_{state.steps}.safetensors"
    with atomic_path(resume / model) as tmp:
        save_file(dict(tensors), str(tmp), metadata={METADATA_KEY: json.dumps({"steps": state.steps})})
    best = state.best
    if best is not None:
        for suffix in (".safetensors", ".json"):
            copy = resume / f"best_{best.steps}{suffix}"
            if not copy.exists():
                with atomic_path(copy) as tmp:
                    tmp.write_bytes((run_dir / f"best{suffix}").read_bytes())
    atomic_write(resume / "state.json", json.dumps(state.to_json(model, FORMAT, FORMAT_VERSION), indent=1,
                                                   allow_nan=False))
    keep = {model} | ({f"best_{best.steps}.safetensors", f"best_{best.steps}.json"} if best else set())
    for path in resume.iterdir():
        if path.name != "state.json" and path.name not in keep and re.fullmatch(r"(model|best)_[0-9]+\.\w+", path.name):
            path.unlink(missing_ok=True)
    remove_unlisted_snapshots(run_dir, state.snapshots)


def remove_unlisted_snapshots(run_dir: Path, names: list[str]) -> None:
    """Delete ``pool/snap_*.safetensors`` files the state does not list (dropped from the pool, or from a lost stretch)."""
    pool = run_dir / "pool"
    if pool.is_dir():
        for path in pool.glob("snap_*.safetensors"):
            if path.stem not in names:
                path.unlink(missing_ok=True)


STALE_TEMPORARY = re.compile(r"\..+\.tmp|\.tmp[A-Za-z0-9]{6}")
"""Temporary files of writes a killed run never finished: ``uno_env.files``' ``.<name>.<x>.tmp``, and the
``.tmpXXXXXX`` that safetensors' own writer (Rust's ``tempfile``) creates beside the file it writes."""


def remove_stale_temporaries(run_dir: Path) -> None:
    """Delete the temporary files of writes a killed run never finished (``STALE_TEMPORARY``)."""
    for folder in (run_dir, run_dir / "pool", run_dir / "resume"):
        if folder.is_dir():
            for path in folder.iterdir():
                if STALE_TEMPORARY.fullmatch(path.name) and path.is_file():
                    path.unlink(missing_ok=True)


def read_resume(run_dir: Path) -> tuple[RunState, dict[str, torch.Tensor]] | None:
    """``(state, tensors)`` of a run directory, validated; None if it holds no resume state at all.

    Raises ``ResumeError`` for a damaged, foreign or pickled state, naming what is allowed, and
    for a directory that holds a previous run's files (evaluations, ``best``, snapshots, a
    checkpoint past step 0) but no ``state.json``: resuming it from step 0 would delete them.
    """

    resume = run_dir / "resume"
    state_path = resume / "state.json"
    allowed = "resume/state.json with the resume/model_<steps>.safetensors it names (written by this uno_env)"
    if state_path.is_symlink() and not state_path.exists():  # a link to nowhere, or a loop of links
        reason = "its target is missing"
        try:
            state_path.stat()
        except OSError as err:
            reason = err.strerror or reason
        raise ResumeError(f"{state_path}: a link that leads to no file ({reason}); not a resume state. "
                          "Put the run's resume/state.json back, or start a new run in another directory") from None
    if not state_path.exists():  # never saved, or killed before its first state.json was in place
        pickled = sorted(p.name for p in resume.iterdir() if p.suffix in PICKLE_SUFFIXES) if resume.is_dir() else []
        if pickled:
            raise ResumeError(f"{resume} holds {', '.join(pickled)} but no state.json: --resume reads only "
                              f"{allowed}; a pickled SB3 model.zip (earlier versions) is never loaded, since "
                              "loading a pickle can run code. Start the run again from its config")
        left = previous_run_files(run_dir)
        if left:
            raise ResumeError(f"{state_path} is missing, but {run_dir} holds files of a run past its start "
                              f"({', '.join(left[:4])}): --resume would restart it from step 0 and delete them. "
                              "Put the run's resume/state.json back, or start a new run in another directory "
                              "(--run-dir) and keep these files")
        return None
    try:
        raw = read_at_most(state_path, MAX_STATE_BYTES)  # the path may name a device or a huge file
    except OSError as err:  # a pipe (NotARegularFileError), a folder, a loop of links, no permission
        raise ResumeError(f"{state_path}: {err.strerror}; not a resume state") from None
    if raw is None:
        raise ResumeError(f"{state_path}: larger than {MAX_STATE_BYTES} bytes; not a resume state")
    try:
        state = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ResumeError(f"{state_path}: not a JSON resume state ({err}); --resume reads {allowed}") from None
    _check_state(state, state_path, run_dir)
    _check_checkpoints(state, run_dir)
    _check_run_files(state, run_dir)
    try:
        tensors = read_resume_model(resume / state["model"], state["steps"])
    except FileNotFoundError:
        raise ResumeError(f"{state_path} names {state['model']}, which is missing") from None
    return RunState.from_json(state), tensors


def read_resume_model(model_path: Path, steps: int | None = None) -> dict[str, torch.Tensor]:
    """The tensors of one ``resume/model_<steps>.safetensors`` (``capture``'s), its header checked before a tensor
    is read (``steps``: the step ``state.json`` names, else any). Raises ``ResumeError`` for a damaged, foreign
    or oversized file and ``FileNotFoundError`` for a missing one."""
    from safetensors import safe_open

    allowed = "the model_<steps>.safetensors of a run's resume/ (written by this uno_env)"
    try:
        header = safetensors_header(model_path, MAX_MODEL_BYTES)  # before a tensor is read: sizes, offsets, dtypes
    except FileNotFoundError:
        raise
    except (SafetensorsHeaderError, OSError) as err:
        raise ResumeError(f"{err}; --resume reads {allowed}") from None
    _check_model_header(header, model_path, steps)
    try:
        with safe_open(str(model_path), framework="pt") as handle:
            return {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118 (not a dict)
    except FileNotFoundError:
        raise
    except Exception as err:  # safetensors raises its own SafetensorError on a damaged or foreign file
        raise ResumeError(f"{model_path}: not a readable safetensors file ({err}); --resume reads {allowed}") from None


_OPTIMIZER_NAME = re.compile(r"optimizer/(0|[1-9][0-9]{0,5})/(step|exp_avg|exp_avg_sq)")
_POLICY_NAME = re.compile(r"policy/[A-Za-z0-9_.]{1,200}")


def _check_model_header(header: Mapping[str, Any], model_path: Path, steps: int | None) -> None:
    """Raise ResumeError unless a checked safetensors header (``safetensors_header``) is one ``capture`` writes:
    ``{"steps": steps}`` in its metadata (any step count when ``steps`` is None), the generator states, policy tensors and per-parameter Adam state
    (``step`` a float32 scalar, ``exp_avg`` and ``exp_avg_sq`` float32 of one shape); no tensor is read. The
    policy's shapes are checked against the rebuilt network by ``restore``."""
    def fail(message: str) -> ResumeError:
        return ResumeError(f"{model_path}: its header {message}; --resume reads the model_<steps>.safetensors "
                           "this uno_env writes")

    strings = header.get("__metadata__") or {}
    assert isinstance(strings, dict)  # safetensors_header checked it maps names to strings
    try:
        saved_steps = json.loads(strings.get(METADATA_KEY, "null"), parse_constant=_refuse_constant)["steps"]
    except (ValueError, TypeError, KeyError, RecursionError):
        saved_steps = None
    if type(saved_steps) is not int or saved_steps < 0:
        raise fail(f"says steps {str(saved_steps)[:40]}, not a step count")
    if steps is not None and saved_steps != steps:
        raise ResumeError(f"{model_path}: its header says steps {saved_steps}, state.json says {steps}")
    specs = {name: spec for name, spec in header.items() if name != "__metadata__"}
    for name in ("rng/torch", "rng/numpy"):
        if name not in specs:
            raise fail(f"lacks the generator state {name}")
    if (specs["rng/torch"]["dtype"], len(specs["rng/torch"]["shape"])) != ("U8", 1) \
            or (specs["rng/numpy"]["dtype"], specs["rng/numpy"]["shape"]) != ("I32", [624]):
        raise fail("says the generator states are not torch's (uint8 vector) and numpy's (int32 x 624)")
    adam: dict[int, dict[str, Any]] = {}
    for name, spec in specs.items():
        if name.startswith("rng/"):
            if name not in ("rng/torch", "rng/numpy"):
                raise fail(f"names an unknown generator state {name[:80]!r}")
            continue
        if name.startswith("optimizer/"):
            match = _OPTIMIZER_NAME.fullmatch(name)
            if match is None:
                raise fail(f"names {name[:80]!r}, not optimizer/<index>/<step|exp_avg|exp_avg_sq>")
            adam.setdefault(int(match[1]), {})[match[2]] = spec
            continue
        if _POLICY_NAME.fullmatch(name) is None:
            raise fail(f"names {name[:80]!r}, neither policy/<name>, optimizer/... nor rng/...")
    for index, entry in adam.items():
        if set(entry) != {"step", "exp_avg", "exp_avg_sq"}:
            raise fail(f"gives optimizer entry {index} without all of step, exp_avg and exp_avg_sq")
        if (entry["step"]["dtype"], entry["step"]["shape"]) != ("F32", []) or entry["exp_avg"]["dtype"] != "F32" \
                or entry["exp_avg_sq"]["dtype"] != "F32" or entry["exp_avg"]["shape"] != entry["exp_avg_sq"]["shape"]:
            raise fail(f"gives optimizer entry {index} other dtypes or shapes than a float32 step scalar and "
                       "two float32 moments of one shape")


def previous_run_files(run_dir: Path) -> list[str]:
    """The files in ``run_dir`` that only a run past its start writes (sorted, relative to ``run_dir``): the
    evaluations, ``best``, pool snapshots and resume tensors of a step above 0. A run killed before its
    first resume state leaves none of them (``config.yaml``, ``last`` and ``resume/model_0`` may be there)."""
    found = [name for name in ("evals.jsonl", "best.safetensors", "best.json") if (run_dir / name).exists()]
    if (run_dir / "pool").is_dir():
        found += [f"pool/{p.name}" for p in sorted((run_dir / "pool").glob("snap_*.safetensors"))]
    if (run_dir / "resume").is_dir():
        found += [f"resume/{p.name}" for p in sorted((run_dir / "resume").iterdir())
                  if re.fullmatch(r"best_[0-9]+\.\w+|model_[1-9][0-9]*\.safetensors", p.name)]
    return found


def _check_checkpoints(state: dict[str, Any], run_dir: Path) -> None:
    """Raise ResumeError unless the pool snapshots and the copy of ``best`` the state names are playable checkpoints."""
    from agents.ppo_agent import CheckpointError, read_checkpoint

    paths = [run_dir / "pool" / f"{name}.safetensors" for name in state["snapshots"]]
    if state.get("best") is not None:
        paths.append(run_dir / "resume" / f"best_{state['best']['steps']}.safetensors")
    for path in paths:
        try:
            read_checkpoint(path)
        except (CheckpointError, OSError) as err:
            raise ResumeError(f"{run_dir / 'resume' / 'state.json'} names {path}, which is not a usable "
                              f"checkpoint: {err}") from None


MAX_EVALS_BYTES = 64 << 20  # evals.jsonl: a line is a few hundred bytes, so hundreds of thousands of evaluations
MAX_CARD_BYTES = 16 << 20  # best.json, last.json: a checkpoint's metadata and its evaluation


def _check_run_files(state: dict[str, Any], run_dir: Path) -> None:
    """Raise ResumeError unless every file a resume reads or rewrites beside the checkpoints (``evals.jsonl``,
    the ``best`` and ``last`` files and cards, the copy of ``best`` the state names) is a regular file of a
    bounded size, or missing where a run may lack it: a pipe there made the resume wait forever, a link would
    have it read or write elsewhere, a sparse gigabyte would be read whole."""
    files = [("evals.jsonl", MAX_EVALS_BYTES), ("best.json", MAX_CARD_BYTES), ("last.json", MAX_CARD_BYTES),
             ("best.safetensors", MAX_MODEL_BYTES), ("last.safetensors", MAX_MODEL_BYTES)]
    if state.get("best") is not None:
        steps = state["best"]["steps"]
        files += [(f"resume/best_{steps}.json", MAX_CARD_BYTES), (f"resume/best_{steps}.safetensors", MAX_MODEL_BYTES)]
        for suffix in (".json", ".safetensors"):
            if not os.path.lexists(run_dir / "resume" / f"best_{steps}{suffix}"):
                raise ResumeError(f"{run_dir / 'resume' / 'state.json'} names best_{steps}{suffix}, which is missing")
    for name, limit in files:
        path = run_dir / name
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        except OSError as err:
            raise ResumeError(f"{path}: {err.strerror}; not a file of this run") from None
        if not stat.S_ISREG(info.st_mode):
            kind = "a link" if stat.S_ISLNK(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else (
                "a pipe" if stat.S_ISFIFO(info.st_mode) else "not a regular file")
            raise ResumeError(f"{path} is {kind}, not a file this run wrote: --resume reads and rewrites only regular "
                              "files there. Put the run's own file back, or start a new run in another directory")
        if info.st_size > limit:
            raise ResumeError(f"{path}: {info.st_size} bytes, more than the {limit} a run writes there; not a file of "
                              "this run")
    evals = run_dir / "evals.jsonl"  # written before the state counts a line, so it never holds fewer
    lines = evals.read_bytes().split(b"\n")[:-1] if evals.exists() else []
    if len(lines) < state["evals"]:
        raise ResumeError(f"{evals} holds {len(lines)} evaluation(s) but {run_dir / 'resume' / 'state.json'} counts "
                          f"{state['evals']}: the run's evaluations were lost or cut. Put evals.jsonl back, or start "
                          "a new run in another directory")
    for number, line in enumerate(lines[:state["evals"]], 1):  # the lines the resumed run keeps
        try:
            record = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict) or type(record.get("steps")) is not int:
            raise ResumeError(f"{evals}: line {number} is not an evaluation this run wrote (damaged?). Put the run's "
                              "evals.jsonl back, or start a new run in another directory")


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number a resume state holds")


def _check_state(state: Any, source: Path, run_dir: Path) -> None:
    """Raise ResumeError unless ``state`` is a well-formed state.json naming files that exist."""
    def fail(message: str) -> ResumeError:
        return ResumeError(f"{source}: {message}")

    if not isinstance(state, dict):
        raise fail("not a JSON object")
    if state.get("format") != FORMAT:
        raise fail(f"format {short_repr(state.get('format'))}, expected {FORMAT!r}")
    if state.get("format_version") != FORMAT_VERSION:
        raise fail(f"format_version {short_repr(state.get('format_version'))}; this uno_env reads {FORMAT_VERSION}")
    counts = ("steps", "evals", "next_snapshot", "next_eval", "next_checkpoint")
    kinds: dict[str, Any] = {"model": str, "snapshots": list, "elo": dict, "resumed_at": list, "imitation": dict,
                             "complete": bool, "counters": dict, "rng": dict, **{k: int for k in counts}}
    for key, kind in kinds.items():
        value = state.get(key)
        if not isinstance(value, kind) or (kind is int and (isinstance(value, bool) or not 0 <= value < 2**63)):
            raise fail(f"{key} is {short_repr(value)}, expected {'a non-negative integer' if kind is int else kind.__name__}")
    known = set(kinds) | {"format", "format_version", "best", "last_eval_step"}
    if set(state) - known:
        raise fail(f"unknown keys {sorted(set(state) - known)}")
    if not MODEL_NAME.fullmatch(state["model"]):
        raise fail(f"model {short_repr(state['model'])} is not model_<steps>.safetensors")
    for name in state["snapshots"]:
        if not isinstance(name, str) or not SNAPSHOT_NAME.fullmatch(name):
            raise fail(f"snapshot {short_repr(name)} is not snap_<steps>")
        if not (run_dir / "pool" / f"{name}.safetensors").is_file():
            raise fail(f"lists snapshot {name}, but pool/{name}.safetensors is missing")
    for name, rating in state["elo"].items():
        if not _finite(rating):
            raise fail(f"elo[{short_repr(name)}] is {short_repr(rating)}, expected a finite number")
    for name, value in state["imitation"].items():
        if not _finite(value):
            raise fail(f"imitation[{short_repr(name)}] is {short_repr(value)}, expected a finite number")
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in state["resumed_at"]):
        raise fail("resumed_at must list step counts")
    best = state.get("best")
    if best is not None:
        if not (isinstance(best, dict) and set(best) == {"score", "steps"} and _finite(best["score"])
                and isinstance(best["steps"], int) and 0 <= best["steps"] <= state["steps"]):
            raise fail(f"best is {short_repr(best)}, expected null or {{\"score\": number, \"steps\": steps}}")
        for suffix in (".safetensors", ".json"):
            if not (source.parent / f"best_{best['steps']}{suffix}").is_file():
                raise fail(f"names the best checkpoint of step {best['steps']}, but resume/best_{best['steps']}{suffix} "
                           "is missing")
    last = state.get("last_eval_step")
    if last is not None and not (isinstance(last, int) and not isinstance(last, bool) and 0 <= last <= state["steps"]):
        raise fail(f"last_eval_step is {short_repr(last)}, expected null or a step count")
    counters = state["counters"]
    if set(counters) != {"n_updates", "episode_num"} or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counters.values()):
        raise fail(f"counters is {short_repr(counters)}, expected n_updates and episode_num")
    _check_rng(state["rng"], fail)


def _check_rng(rng: dict[str, Any], fail: Callable[[str], ResumeError]) -> None:
    """Python's Mersenne Twister state (version 3, 625 words, gauss) and numpy's position and cached gaussian."""
    python, numpy_state = rng.get("python"), rng.get("numpy")
    if set(rng) != {"python", "numpy"} or not isinstance(python, list) or not isinstance(numpy_state, dict):
        raise fail("rng must hold the python and numpy generator states")
    words = python[1] if len(python) == 3 else None
    if not (python[0] == 3 and isinstance(words, list) and len(words) == 625
            and all(isinstance(w, int) and not isinstance(w, bool) and 0 <= w < 2**32 for w in words)
            and words[-1] <= 624 and (python[2] is None or _finite(python[2]))):
        raise fail("rng.python is not a state of Python's random generator")
    if not (set(numpy_state) == {"pos", "has_gauss", "gauss"} and isinstance(numpy_state["pos"], int)
            and 0 <= numpy_state["pos"] <= 624 and numpy_state["has_gauss"] in (0, 1) and _finite(numpy_state["gauss"])):
        raise fail("rng.numpy is not a state of numpy's global generator")


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
