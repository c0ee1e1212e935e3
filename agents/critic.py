"""A privileged critic played from a checkpoint in numpy: the value of a position whose every hand is known.

A run with ``ppo.privileged_critic: true`` trains a value network that reads the observer's public
vector followed by the hidden cards (``uno_env.privileged.privileged_features``). A determinized position,
as a search agent builds, holds every hand, so this network values it. The file is one
``.safetensors`` (no pickle: loading it runs no code), in the conventions of ``agents.ppo_agent``:

* tensors, ``float32``: ``input_scale`` (the input is multiplied by it entrywise before the first
  layer), ``hidden.<i>.weight`` (``out x in``) and ``hidden.<i>.bias`` per hidden layer, then
  ``value.weight`` (``1 x width``) and ``value.bias`` (``1``);
* under the header metadata key ``"uno_env"``, a JSON object: ``format`` (``"uno_env.critic"``),
  ``format_version``, ``observation_version``, ``max_players``, ``input_size`` (the public vector's
  length ``observation_size(max_players)`` plus the hidden part's), ``hidden``, ``activation``
  (``tanh`` or ``relu``), and whatever the exporter adds (``source``, ``steps``).

A damaged file or one of another format raises ``agents.ppo_agent.CheckpointError``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from uno_env.files import atomic_path
from uno_env.observation import COMPATIBLE_OBSERVATION_VERSIONS, OBSERVATION_VERSION, observation_size

from .ppo_agent import (
    ACTIVATIONS,
    METADATA_KEY,
    CheckpointError,
    CheckpointVersionError,
    check_tensors,
    read_safetensors,
    widened_to_current,
)

__all__ = ["CRITIC_FORMAT", "CRITIC_FORMAT_VERSION", "PrivilegedCritic", "read_critic", "write_critic"]

CRITIC_FORMAT = "uno_env.critic"
CRITIC_FORMAT_VERSION = 1


def write_critic(path: str | os.PathLike[str], tensors: Mapping[str, np.ndarray], metadata: Mapping[str, Any]) -> None:
    """Write a critic's tensors and metadata (atomically), refusing a layout ``read_critic`` would refuse."""
    from safetensors.numpy import save_file

    meta = {"format": CRITIC_FORMAT, "format_version": CRITIC_FORMAT_VERSION,
            "observation_version": OBSERVATION_VERSION, **metadata}
    arrays = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()}
    _check_critic_layout(arrays, meta, "critic")
    with atomic_path(path) as tmp:
        save_file(arrays, str(tmp), metadata={METADATA_KEY: json.dumps(meta, sort_keys=True)})


def read_critic(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read and validate a critic file: ``(tensors, metadata)``; raises ``CheckpointError``."""
    tensors, meta = read_safetensors(path, "critic", layout=_expected_critic_layout)
    _check_critic_layout(tensors, meta, os.fspath(path))
    return tensors, meta


def _check_critic_layout(tensors: Mapping[str, np.ndarray], meta: Mapping[str, Any], source: str) -> None:
    """Raise CheckpointError unless the tensors and metadata describe a critic this code can run."""
    check_tensors(tensors, _expected_critic_layout(meta, source), source)


def _expected_critic_layout(meta: Mapping[str, Any], source: str) -> dict[str, tuple[int, ...]]:
    """The tensors (name: shape) the metadata of a critic this code can run implies; CheckpointError otherwise."""
    if meta.get("format") != CRITIC_FORMAT:
        raise CheckpointError(f"{source}: format {meta.get('format')!r}, expected {CRITIC_FORMAT!r}")
    for key, readable in (("format_version", (CRITIC_FORMAT_VERSION,)),
                          ("observation_version", COMPATIBLE_OBSERVATION_VERSIONS)):
        value = meta.get(key)
        if type(value) is not int or value not in readable:
            raise CheckpointVersionError(f"{source}: {key} {value!r}, but this uno_env reads {key} "
                                         f"{' or '.join(map(str, readable))}")
    try:
        max_players = int(meta["max_players"])
        input_size = int(meta["input_size"])
        hidden = [int(h) for h in meta["hidden"]]
        activation = meta["activation"]
    except (KeyError, TypeError, ValueError, OverflowError) as err:  # OverflowError: int(1e999)
        raise CheckpointError(f"{source}: metadata lacks or mangles {str(err)[:80]}") from None
    if activation not in ACTIVATIONS:
        raise CheckpointError(f"{source}: activation {activation!r}, expected one of {ACTIVATIONS}")
    if not 1 <= len(hidden) <= 16 or not all(1 <= h <= 65536 for h in hidden):
        raise CheckpointError(f"{source}: hidden must list 1 to 16 layer widths, ints 1..65536")
    if not 2 <= max_players <= 10:  # observation_size raises ValueError past the table sizes
        raise CheckpointError(f"{source}: max_players must be an int 2..10, got {max_players}")
    if input_size <= observation_size(max_players, meta["observation_version"]):
        raise CheckpointError(f"{source}: input_size {input_size} does not extend the public vector "
                              f"(max_players={max_players})")
    expected: dict[str, tuple[int, ...]] = {"input_scale": (input_size,)}
    width = input_size
    for i, h in enumerate(hidden):
        expected[f"hidden.{i}.weight"] = (h, width)
        expected[f"hidden.{i}.bias"] = (h,)
        width = h
    expected["value.weight"] = (1, width)
    expected["value.bias"] = (1,)
    return expected


class PrivilegedCritic:
    """The value network of a privileged-critic run, in numpy: one value per full-information input row."""

    def __init__(self, tensors: Mapping[str, np.ndarray], metadata: Mapping[str, Any]) -> None:
        _check_critic_layout(tensors, metadata, "critic")
        # an older observation version is widened to read this version's public vector
        tensors, metadata = widened_to_current(tensors, metadata, "input_scale", "input_size")
        self.metadata = dict(metadata)
        self.input_scale = np.asarray(tensors["input_scale"], np.float32)
        depth = len(metadata["hidden"])
        self.layers = [(np.asarray(tensors[f"hidden.{i}.weight"]), np.asarray(tensors[f"hidden.{i}.bias"]))
                       for i in range(depth)]
        self.head = (np.asarray(tensors["value.weight"]), np.asarray(tensors["value.bias"]))
        self.relu = metadata["activation"] == "relu"

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PrivilegedCritic:
        """The critic in a file written by ``write_critic``."""
        return cls(*read_critic(path))

    @property
    def input_size(self) -> int:
        """Length of one input row: the public observation, then the hidden cards."""
        return int(self.input_scale.shape[0])

    def values(self, inputs: np.ndarray) -> np.ndarray:
        """``(B,)`` values of a batch ``(B, input_size)`` of inputs (one row is accepted too)."""
        x = np.asarray(inputs, np.float32)
        if x.ndim == 1:
            x = x[None, :]
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"critic inputs must be (B, {self.input_size}), got {np.shape(inputs)}")
        hidden = x * self.input_scale
        for weight, bias in self.layers:
            hidden = hidden @ weight.T + bias
            hidden = np.maximum(hidden, 0.0) if self.relu else np.tanh(hidden)
        weight, bias = self.head
        out: np.ndarray = (hidden @ weight.T + bias)[:, 0]
        return out
