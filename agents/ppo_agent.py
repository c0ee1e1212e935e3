"""PPOAgent: a trained policy played from a shareable checkpoint, in numpy only.

>>> from agents import PPOAgent
>>> agent = PPOAgent.load("agents/checkpoints/universal.safetensors")
>>> agent.metadata["editions"], agent.metadata["num_players"]

The checkpoint format (``FORMAT_VERSION`` 1) is one ``.safetensors`` file: no pickle, so
loading it runs no code. It holds

* the policy network's tensors, ``float32``: ``obs_scale`` (the observation is multiplied by
  it entrywise before the first layer), then ``hidden.<i>.weight`` (``out x in``) and
  ``hidden.<i>.bias`` for each hidden layer, then ``action.weight`` and ``action.bias``
  (one logit per action id of the fixed layout);
* in the safetensors header's metadata, under the key ``"uno_env"``, a JSON object:
  ``format`` (``"uno_env.ppo"``), ``format_version``, ``observation_version`` (the encoder's
  ``OBSERVATION_VERSION`` when it was written; a checkpoint loads when its version is one of
  ``uno_env.observation.COMPATIBLE_OBSERVATION_VERSIONS``: version 1 checkpoints, trained
  before the rule 3.4 ruling, read version 2 observations as they were trained to, see the
  observation version history; a checkpoint of a version before 3 is widened as it loads: its
  first layer gets a zero weight column for each entry the newer layout added, so it computes
  exactly what it did and ignores those entries, see ``widen_first_layer``), ``num_actions``, ``max_players``, ``observation_size``,
  ``hidden`` (layer widths), ``activation`` (``tanh`` or ``relu``), ``editions`` and
  ``num_players`` (what it was trained on), ``steps``, ``seed`` and ``config`` (the full
  training config).

Play needs neither torch nor stable-baselines3: the forward pass is a few numpy matrix
products. The agent only ever picks legal actions, whatever the weights: the highest legal
logit (``deterministic=True``, the default) or a draw from the masked softmax
(``PPOAgent.probabilities``: the largest legal logit subtracted before ``exp``, illegal actions at
probability zero, logits that overflowed to infinity or NaN handled in the limit).
A file of another format, layout version or a damaged file raises ``CheckpointError``
(``CheckpointVersionError`` for a version mismatch). The file is checked from its header before a
tensor is read (``uno_env.files.safetensors_header``: at most ``MAX_CHECKPOINT_BYTES``, offsets inside
the file and tiling it; the tensor names, dtypes and shapes its metadata implies), and hostile metadata (deep nesting, huge or non-finite numbers, a ``config``
that is not a mapping) is a ``CheckpointError`` too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from uno_env.core.cards import short_repr
from uno_env.files import SafetensorsHeaderError, atomic_path, safetensors_header
from uno_env.observation import (
    COMPATIBLE_OBSERVATION_VERSIONS,
    NUM_ACTIONS,
    OBSERVATION_VERSION,
    observation_size,
    widening,
)

from .base import Agent

__all__ = ["ACTIVATIONS", "FORMAT", "FORMAT_VERSION", "CheckpointError", "CheckpointVersionError", "PPOAgent",
           "check_header_tensors", "check_tensors", "read_checkpoint", "read_safetensors", "write_checkpoint"]

FORMAT = "uno_env.ppo"
FORMAT_VERSION = 1
METADATA_KEY = "uno_env"
ACTIVATIONS = ("tanh", "relu")
# Where relative checkpoint paths are also looked up: the repository root in a checkout (site-packages when installed).
SOURCE_ROOT = Path(__file__).resolve().parent.parent
# The shipped checkpoints, package data of ``agents`` (installed with it): the one place that says where they
# are (everything else reads SHIPPED_DIR).
SHIPPED_DIR = Path(__file__).resolve().parent / "checkpoints"
# The largest checkpoint file read (a shipped one is about 1.2 MB; a policy of four 2,048-wide layers about 60 MB).
MAX_CHECKPOINT_BYTES = 256 << 20


class CheckpointError(ValueError):
    """A file that is not a usable PPO checkpoint (damaged, incomplete, or of another format)."""


class CheckpointVersionError(CheckpointError):
    """A checkpoint written for another format or observation/action layout version."""


def write_checkpoint(path: str | os.PathLike[str], tensors: Mapping[str, np.ndarray], metadata: Mapping[str, Any]) -> None:
    """Write tensors and metadata in the checkpoint format (atomically: a temp file, then a rename)."""
    from safetensors.numpy import save_file

    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "observation_version": OBSERVATION_VERSION,
            "num_actions": NUM_ACTIONS, **metadata}
    arrays = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()}
    _check_layout(arrays, meta)  # never write a file that load() would refuse
    with atomic_path(path) as tmp:  # the usual permissions, not safetensors' 0600
        save_file(arrays, str(tmp), metadata={METADATA_KEY: json.dumps(meta, sort_keys=True)})


def read_checkpoint(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read and validate a checkpoint: ``(tensors, metadata)`` in this version's observation layout
    (one of an older layout is widened, ``widened_to_current``); raises ``CheckpointError``."""
    tensors, meta = read_safetensors(path, "checkpoint", layout=_expected_layout)
    _check_layout(tensors, meta, source=os.fspath(path))
    return widened_to_current(tensors, meta)


Layout = Callable[[Mapping[str, Any], str], Mapping[str, tuple[int, ...]]]


def read_safetensors(path: str | os.PathLike[str], what: str, layout: Layout | None = None,
                     max_bytes: int = MAX_CHECKPOINT_BYTES) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors and the ``uno_env`` metadata object of a file in this package's safetensors formats (a
    checkpoint, a critic), its header checked before a tensor is read; ``CheckpointError`` for anything
    damaged or hostile, ``FileNotFoundError`` when there is no such file. ``layout`` maps the metadata to
    the tensors it implies (name: shape, all float32; it raises ``CheckpointError`` for metadata it cannot
    run): a header naming other tensors, dtypes or shapes is refused before a tensor is read; a file over
    ``max_bytes`` is refused from its size."""
    from safetensors import safe_open

    source = os.fspath(path)
    try:
        header = safetensors_header(path, max_bytes)  # before a tensor is read: sizes, offsets, dtypes
    except SafetensorsHeaderError as err:
        raise CheckpointError(f"{err}; not a readable {what}") from None
    except NotADirectoryError:
        raise FileNotFoundError(source) from None
    except IsADirectoryError:
        raise CheckpointError(f"{source} is a folder, not a {what} file") from None
    strings = header.get("__metadata__") or {}
    assert isinstance(strings, dict)  # safetensors_header checked it maps names to strings
    if METADATA_KEY not in strings:
        raise CheckpointError(f"{source} has no {METADATA_KEY!r} metadata: not a uno_env {what}")
    try:
        meta = json.loads(strings[METADATA_KEY], parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:  # bad JSON, NaN/Infinity, an int past the digit limit, nesting
        raise CheckpointError(f"{source}: its metadata is not valid JSON ({type(err).__name__})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{source}: its metadata is not a JSON object")
    if not isinstance(meta.get("config", {}), dict):
        raise CheckpointError(f"{source}: its metadata's config is not a mapping")
    if layout is not None:
        check_header_tensors(header, layout(meta, source), source)
    try:
        with safe_open(source, framework="numpy") as handle:
            tensors = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118 (not a dict)
    except FileNotFoundError:
        raise
    except Exception as err:  # safetensors raises its own SafetensorError, or OSError, on a damaged file
        raise CheckpointError(f"{source} is not a readable safetensors {what}: {err}") from None
    return tensors, meta


def check_header_tensors(header: Mapping[str, Any], expected: Mapping[str, tuple[int, ...]], source: str) -> None:
    """Raise CheckpointError unless a checked safetensors header (``uno_env.files.safetensors_header``) names
    exactly the ``expected`` tensors, each float32 (``F32``) of its shape; no tensor is read."""
    names = {name for name in header if name != "__metadata__"}
    if names != set(expected):
        shown = sorted(names)[:8]
        raise CheckpointError(f"{source}: its header names tensors {[n[:80] for n in shown]}"
                              f"{' ...' if len(names) > 8 else ''}, its metadata implies {sorted(expected)}")
    for name, shape in expected.items():
        spec = header[name]
        if spec["dtype"] != "F32" or tuple(spec["shape"]) != shape:
            raise CheckpointError(f"{source}: its header says tensor {name} is {spec['dtype']}{tuple(spec['shape'])}, "
                                  f"its metadata implies float32{shape}")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_layout(tensors: Mapping[str, np.ndarray], meta: Mapping[str, Any], source: str = "checkpoint") -> None:
    """Raise CheckpointError unless the tensors and metadata describe a network this code can run."""
    check_tensors(tensors, _expected_layout(meta, source), source)


def _expected_layout(meta: Mapping[str, Any], source: str) -> dict[str, tuple[int, ...]]:
    """The tensors (name: shape) the metadata of a network this code can run implies; CheckpointError otherwise."""
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{source}: format {short_repr(meta.get('format'))}, expected {FORMAT!r}")
    for key, readable in (("format_version", (FORMAT_VERSION,)), ("observation_version", COMPATIBLE_OBSERVATION_VERSIONS),
                          ("num_actions", (NUM_ACTIONS,))):
        value = meta.get(key)
        if type(value) is not int or value not in readable:
            raise CheckpointVersionError(
                f"{source}: {key} {short_repr(value)}, but this uno_env reads {key} {' or '.join(map(str, readable))}; "
                "use the uno_env version it was trained with, or retrain"
            )
    try:
        max_players = meta["max_players"]
        hidden = list(meta["hidden"])
        activation = meta["activation"]
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{source}: metadata lacks or mangles {err}") from None
    if type(max_players) is not int or not 2 <= max_players <= 10:
        raise CheckpointError(f"{source}: max_players must be an int 2..10, got {str(max_players)[:40]}")
    if not 1 <= len(hidden) <= 16 or not all(type(h) is int and 1 <= h <= 65536 for h in hidden):
        raise CheckpointError(f"{source}: hidden must list 1 to 16 layer widths, ints 1..65536")
    if activation not in ACTIVATIONS:
        raise CheckpointError(f"{source}: activation {short_repr(activation)}, expected one of {ACTIVATIONS}")
    size = observation_size(max_players, meta["observation_version"])
    if meta.get("observation_size") != size:
        raise CheckpointVersionError(f"{source}: observation_size {short_repr(meta.get('observation_size'))}, "
                                     f"expected {size} for max_players={max_players}")
    expected_shapes: dict[str, tuple[int, ...]] = {"obs_scale": (size,)}
    width = size
    for i, h in enumerate(hidden):
        expected_shapes[f"hidden.{i}.weight"] = (h, width)
        expected_shapes[f"hidden.{i}.bias"] = (h,)
        width = h
    expected_shapes["action.weight"] = (NUM_ACTIONS, width)
    expected_shapes["action.bias"] = (NUM_ACTIONS,)
    return expected_shapes


def check_tensors(tensors: Mapping[str, np.ndarray], expected: Mapping[str, tuple[int, ...]], source: str) -> None:
    """Raise CheckpointError unless ``tensors`` are exactly the ``expected`` names, float32 of those shapes, finite."""
    if set(tensors) != set(expected):
        raise CheckpointError(f"{source}: tensors {sorted(tensors)}, expected {sorted(expected)}")
    for name, shape in expected.items():
        array = tensors[name]
        if tuple(array.shape) != shape or array.dtype != np.float32:
            raise CheckpointError(f"{source}: tensor {name} is {array.dtype}{tuple(array.shape)}, "
                                  f"expected float32{shape}")
        if not np.all(np.isfinite(array)):
            raise CheckpointError(f"{source}: tensor {name} holds NaN or infinite values")


def widen_first_layer(tensors: Mapping[str, np.ndarray], scale: str, at: int, extra: int) -> dict[str, np.ndarray]:
    """``tensors`` with ``extra`` inputs inserted before input ``at``: a zero column of ``hidden.0.weight``
    and a scale of 1 each, so the network computes exactly what it did, whatever those inputs hold.

    How a network trained on an older observation layout reads a newer one that added entries
    (the observation version history in ``uno_env.observation``), and where a training run that
    warm-starts from it begins. ``scale`` names the per-input scale tensor.
    """
    out = dict(tensors)
    weight = tensors["hidden.0.weight"]
    out["hidden.0.weight"] = np.concatenate(
        [weight[:, :at], np.zeros((weight.shape[0], extra), np.float32), weight[:, at:]], axis=1)
    old = tensors[scale]
    out[scale] = np.concatenate([old[:at], np.ones(extra, np.float32), old[at:]])
    return out


def widened_to_current(tensors: Mapping[str, np.ndarray], metadata: Mapping[str, Any], scale: str = "obs_scale",
                       size_key: str = "observation_size") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A checked checkpoint of any readable observation version in this version's layout
    (``widen_first_layer`` where ``uno_env.observation.widening`` says; unchanged when it is current).
    Its metadata then says the current version, ``size_key`` (the input width) grown by the inputs
    added, and ``widened_from_observation_version`` the one it was trained on. ``scale`` names the
    per-input scale tensor (a policy's ``obs_scale``; the privileged critic's ``input_scale``)."""
    version = metadata["observation_version"]
    if version == OBSERVATION_VERSION:
        return dict(tensors), dict(metadata)
    at, extra = widening(int(metadata["max_players"]), version)
    meta = {**metadata, "observation_version": OBSERVATION_VERSION, size_key: int(metadata[size_key]) + extra,
            "widened_from_observation_version": version}
    return widen_first_layer(tensors, scale, at, extra), meta


class PPOAgent(Agent):
    """A policy network from a checkpoint (see the module docstring), run in numpy."""

    name: ClassVar[str] = "ppo"
    needs_observation: ClassVar[bool] = True

    def __init__(self, tensors: Mapping[str, np.ndarray], metadata: Mapping[str, Any], deterministic: bool = True,
                 seed: int | None = None, label: str | None = None) -> None:
        _check_layout(tensors, metadata)
        tensors, metadata = widened_to_current(tensors, metadata)
        self.metadata = metadata
        self.deterministic = deterministic
        self.label = label or "ppo"
        self._scale = np.asarray(tensors["obs_scale"], np.float32)
        hidden = self.metadata["hidden"]
        # Stored transposed (in x out) so a batch is ``x @ w``.
        self._layers = [(np.ascontiguousarray(tensors[f"hidden.{i}.weight"].T), tensors[f"hidden.{i}.bias"])
                        for i in range(len(hidden))]
        self._out = (np.ascontiguousarray(tensors["action.weight"].T), tensors["action.bias"])
        self._relu = self.metadata["activation"] == "relu"
        self._seed = seed
        self._rng = np.random.default_rng(seed)

    @classmethod
    def load(cls, path: str | os.PathLike[str], deterministic: bool = True, seed: int | None = None,
             label: str | None = None) -> PPOAgent:
        """Load a checkpoint file; raises ``CheckpointError`` (``CheckpointVersionError``) or FileNotFoundError."""
        tensors, meta = read_checkpoint(path)
        return cls(tensors, meta, deterministic=deterministic, seed=seed,
                   label=label or os.path.splitext(os.path.basename(os.fspath(path)))[0])

    @classmethod
    def from_spec(cls, path: str | None = None, deterministic: bool = True, seed: int | None = None) -> PPOAgent:
        """For ``make_agent("ppo:path=...")``: a checkpoint path, relative paths also tried from the repository
        root; no path: the shipped universal policy."""
        if path is None:
            return cls.load(SHIPPED_DIR / "universal.safetensors", deterministic=deterministic, seed=seed)
        candidate = Path(path)
        if not candidate.exists() and not candidate.is_absolute() and (SOURCE_ROOT / candidate).exists():
            candidate = SOURCE_ROOT / candidate
        return cls.load(candidate, deterministic=deterministic, seed=seed)

    def tensors(self) -> dict[str, np.ndarray]:
        """The network's tensors in the checkpoint's layout (copies; ``write_checkpoint`` takes them back)."""
        tensors = {"obs_scale": self._scale.copy()}
        for i, (weight, bias) in enumerate(self._layers):
            tensors[f"hidden.{i}.weight"], tensors[f"hidden.{i}.bias"] = weight.T.copy(), np.array(bias)
        tensors["action.weight"], tensors["action.bias"] = self._out[0].T.copy(), np.array(self._out[1])
        return tensors

    @property
    def max_players(self) -> int:
        """The largest table the network's observation covers."""
        return int(self.metadata["max_players"])

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation ``(size,)`` or a batch ``(B, size)``."""
        x = np.asarray(observations, np.float32) * self._scale
        for weight, bias in self._layers:
            x = x @ weight + bias
            x = np.maximum(x, 0.0) if self._relu else np.tanh(x)
        weight, bias = self._out
        return x @ weight + bias  # type: ignore[no-any-return]

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked softmax of the logits, ``(B, NUM_ACTIONS)``: zero on every masked action, whatever the weights.

        Computed stably (the row's largest legal logit is subtracted before ``exp``). Logits that
        overflowed are handled in the limit: a NaN logit counts as the lowest; a row whose largest
        legal logit is ``+inf`` is uniform over its ``+inf`` entries; a row whose legal logits are
        all ``-inf`` (or NaN) is uniform over its legal actions.
        """
        legal = np.atleast_2d(masks).astype(bool)
        logits = self.logits(np.atleast_2d(observations))
        if legal.shape != logits.shape:
            raise ValueError(f"masks of shape {legal.shape} for logits of shape {logits.shape}")
        if not legal.any(axis=1).all():
            raise ValueError("every row of masks needs at least one legal action")
        masked = np.where(legal & ~np.isnan(logits), logits, -np.inf).astype(np.float64)
        top = masked.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", over="ignore"):
            weights = np.exp(masked - np.where(np.isfinite(top), top, 0.0))
        weights = np.where(top == np.inf, masked == np.inf, weights)
        weights = np.where(top == -np.inf, legal, weights).astype(np.float64)
        weights[~legal] = 0.0
        return weights / weights.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]

    def choose(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Legal actions for a batch of observations and masks (argmax, or sampled when not deterministic)."""
        probs = self.probabilities(observations, masks)
        if self.deterministic:
            return probs.argmax(axis=1)  # type: ignore[no-any-return]
        cumulative = probs.cumsum(axis=1)
        draws = (1.0 - self._rng.random((len(probs), 1))) * cumulative[:, -1:]  # in (0, total]
        # The first action whose cumulative probability reaches the draw: it has a positive
        # probability (a zero one repeats the previous sum, which is below the draw).
        return (cumulative < draws).sum(axis=1)  # type: ignore[no-any-return]

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """The policy's action for this decision (always legal)."""
        if observation is None or "observation" not in observation:
            raise ValueError("PPOAgent needs observation['observation'] (the encoder's vector)")
        vector = np.asarray(observation["observation"])
        if vector.shape != self._scale.shape:
            raise ValueError(f"PPOAgent expects an observation of shape {self._scale.shape} "
                             f"(max_players={self.max_players}), got {vector.shape}")
        mask = observation.get("action_mask")
        if mask is None:
            mask = np.zeros(NUM_ACTIONS, np.int8)
            mask[list(info["legal_action_ids"])] = 1
        if not self.deterministic:  # one draw from the generator per decision, forced ones included
            return int(self.choose(vector, np.asarray(mask))[0])
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("no legal action to choose from")
        if len(legal) == 1:
            return int(legal[0])
        # One decision: the argmax over the legal ids, without building a masked copy (a NaN
        # logit from overflowed weights counts as the lowest, as in ``probabilities``).
        scores = self.logits(vector)[legal]
        return int(legal[int(np.argmax(np.where(np.isnan(scores), -np.inf, scores)))])

    def seed(self, seed: int | None) -> None:
        """Reseed the sampling generator (only used when not deterministic)."""
        self._seed = seed
        self._rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"PPOAgent(label={self.label!r}, deterministic={self.deterministic})"
