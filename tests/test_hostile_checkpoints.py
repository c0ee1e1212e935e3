"""Hostile checkpoint files (issue 27.2): each is refused from its header with ``CheckpointError`` (or
``ResumeError`` for a resume model), before a tensor is read, never a RecursionError, OverflowError or
ValueError traceback, and never by mapping a gigabyte that is not there."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("safetensors")

from test_ppo_agent import _random_checkpoint  # noqa: E402

from agents.ppo_agent import MAX_CHECKPOINT_BYTES, METADATA_KEY, CheckpointError, PPOAgent, read_checkpoint  # noqa: E402
from uno_env.files import SafetensorsHeaderError, safetensors_header  # noqa: E402


def _write_raw(path: Path, header: dict[str, object], data: bytes = b"", size: int | None = None) -> Path:
    """A safetensors file written by hand: the 8-byte length, the JSON header, the data (then, with ``size``,
    a sparse tail up to that apparent size)."""
    raw = json.dumps(header).encode()
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(raw)) + raw + data)
        if size is not None:
            handle.truncate(size)
    return path


def _with_metadata(tmp_path: Path, metadata_text: str) -> Path:
    """A real checkpoint's tensors with the ``uno_env`` metadata string replaced."""
    from safetensors.numpy import save_file

    tensors, _ = read_checkpoint(_random_checkpoint(tmp_path / "good.safetensors"))
    path = tmp_path / "hostile.safetensors"
    save_file(tensors, str(path), metadata={METADATA_KEY: metadata_text})
    return path


def _no_tensor_read(monkeypatch: pytest.MonkeyPatch, hostile: Path | None = None) -> None:
    """Fail the test if the loader gets as far as safetensors' reader (for ``hostile`` only, when given)."""
    import safetensors

    real = safetensors.safe_open

    def refuse(path: str, *args: Any, **kwargs: Any) -> Any:
        if hostile is None or Path(path) == hostile:
            raise AssertionError("a tensor was read before the header was refused")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(safetensors, "safe_open", refuse)


def test_a_sparse_file_claiming_a_gigabyte_is_refused_by_its_size_before_any_tensor_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = (1 << 30) // 4
    path = _write_raw(tmp_path / "sparse.safetensors",
                      {"obs_scale": {"dtype": "F32", "shape": [count], "data_offsets": [0, 4 * count]}},
                      size=1 << 30)
    assert os.stat(path).st_blocks * 512 < 1 << 20  # really sparse: a few KiB on disk
    _no_tensor_read(monkeypatch)
    with pytest.raises(CheckpointError, match=f"more than the {MAX_CHECKPOINT_BYTES} allowed"):
        read_checkpoint(path)


@pytest.mark.parametrize(("header", "data", "match"), [
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1 << 40]}}, b"\0" * 16, "offsets outside the file"),
    ({"w": {"dtype": "F32", "shape": [1 << 20], "data_offsets": [0, 16]}}, b"\0" * 16, "shape"),
    ({"w": {"dtype": "F32", "shape": [8], "data_offsets": [0, 16]}}, b"\0" * 16, "do not hold its shape"),
    ({"w": {"dtype": "EVIL", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 16, "dtype"),
    ({"w": {"dtype": ["F32"], "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 16, "dtype"),  # was a TypeError (soak)
    ({"w": {"dtype": {"F32": 1}, "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 16, "dtype"),
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
      "v": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 32, "overlap or leave a gap"),
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "extra": 1}}, b"\0" * 16, "exactly dtype"),
    ({"__metadata__": {"uno_env": 5}}, b"", "map names to strings"),
])
def test_a_header_that_lies_about_its_tensors_is_refused_before_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, header: dict[str, object], data: bytes, match: str) -> None:
    path = _write_raw(tmp_path / "lying.safetensors", header, data)
    _no_tensor_read(monkeypatch)
    with pytest.raises(CheckpointError, match=match):
        read_checkpoint(path)


def test_a_header_length_past_the_file_or_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "long.safetensors"
    path.write_bytes(struct.pack("<Q", 1 << 62) + b"{}")
    with pytest.raises(SafetensorsHeaderError, match="a header of"):
        safetensors_header(path, 1 << 20)
    path.write_bytes(b"\x01\x02")
    with pytest.raises(SafetensorsHeaderError, match="shorter than a safetensors header"):
        safetensors_header(path, 1 << 20)


@pytest.mark.parametrize(("label", "text"), [
    ("nested 200k deep", "[" * 200_000 + "]" * 200_000),
    ("max_players 1e999", None),
    ("a 5,000-digit integer", None),
    ("config as a list", None),
    ("NaN", None),
])
def test_hostile_metadata_is_a_checkpoint_error(tmp_path: Path, label: str, text: str | None) -> None:
    good = read_checkpoint(_random_checkpoint(tmp_path / "base.safetensors"))[1]
    if text is None:
        meta = dict(good)
        if label == "max_players 1e999":
            text = json.dumps(meta).replace('"max_players": 10', '"max_players": 1e999')
        elif label == "a 5,000-digit integer":
            text = json.dumps(meta).replace('"max_players": 10', '"max_players": ' + "9" * 5000)
        elif label == "config as a list":
            meta["config"] = [1, 2]
            text = json.dumps(meta)
        else:
            text = json.dumps(meta).replace('"max_players": 10', '"max_players": NaN')
    path = _with_metadata(tmp_path, text)
    with pytest.raises(CheckpointError):
        read_checkpoint(path)
    with pytest.raises(CheckpointError):
        PPOAgent.load(path)


def test_every_shipped_checkpoint_passes_the_header_check() -> None:
    from agents.registry import shipped_checkpoint_files

    shipped = shipped_checkpoint_files()  # the actors, not critics
    assert shipped
    for path in shipped:
        header = safetensors_header(path, MAX_CHECKPOINT_BYTES)
        assert set(header) - {"__metadata__"} == set(read_checkpoint(path)[0])


@pytest.mark.parametrize("lie", ["offsets past the file", "sparse gigabyte"])
def test_a_resume_model_that_lies_is_a_resume_error_from_its_header(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lie: str) -> None:
    pytest.importorskip("torch")
    import shutil

    from training.run.resume import MAX_MODEL_BYTES, ResumeError, read_resume

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "runs_9f587ed" / "batched", run)
    assert read_resume(run) is not None  # the run as written resumes
    model = run / "resume" / "model_512.safetensors"
    if lie == "offsets past the file":
        _write_raw(model, {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1 << 40]}},
                   np.zeros(4, np.float32).tobytes())
        match = "offsets outside the file"
    else:
        count = (MAX_MODEL_BYTES + 4) // 4
        _write_raw(model, {"w": {"dtype": "F32", "shape": [count], "data_offsets": [0, 4 * count]}},
                   size=MAX_MODEL_BYTES + 4096)
        match = "allowed"
    _no_tensor_read(monkeypatch, model)
    with pytest.raises(ResumeError, match=match):
        read_resume(run)


def _rewritten(tmp_path: Path, source: Path, change: str) -> Path:
    """``source``'s tensors and metadata written again with one tensor changed in name, shape or dtype: a file
    whose header is consistent with its data (so ``safetensors_header`` passes) but not with its metadata."""
    from safetensors import safe_open
    from safetensors.numpy import save_file

    with safe_open(str(source), framework="numpy") as handle:
        strings = handle.metadata()
        tensors = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118 (not a dict)
    name = sorted(k for k in tensors if k.endswith(".bias"))[0]
    if change == "an unexpected tensor":
        tensors["evil"] = np.zeros(4, np.float32)
    elif change == "a missing tensor":
        del tensors[name]
    elif change == "a shape that does not fit":
        tensors[name] = np.zeros(tensors[name].shape[0] + 1, np.float32)
    else:  # a float16 tensor of the right shape
        tensors[name] = tensors[name].astype(np.float16)
    path = tmp_path / f"hostile_{change.replace(' ', '_')}.safetensors"
    save_file(tensors, str(path), metadata=strings)
    return path


CHANGES = ["an unexpected tensor", "a missing tensor", "a shape that does not fit", "a float16 tensor"]


@pytest.mark.parametrize("change", CHANGES)
def test_a_checkpoint_whose_header_does_not_fit_its_metadata_is_refused_before_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    path = _rewritten(tmp_path, _random_checkpoint(tmp_path / "good.safetensors"), change)
    _no_tensor_read(monkeypatch)
    with pytest.raises(CheckpointError, match="its header (names|says)"):
        read_checkpoint(path)


def _good_critic(path: Path) -> Path:
    from agents.critic import write_critic
    from uno_env.observation import observation_size

    rng = np.random.default_rng(3)
    size = observation_size(2) + 5
    tensors = {"input_scale": np.ones(size, np.float32), "hidden.0.weight": rng.normal(0, 1, (4, size)).astype(np.float32),
               "hidden.0.bias": np.zeros(4, np.float32), "value.weight": np.ones((1, 4), np.float32),
               "value.bias": np.zeros(1, np.float32)}
    write_critic(path, tensors, {"max_players": 2, "input_size": size, "hidden": [4], "activation": "relu"})
    return path


@pytest.mark.parametrize("change", CHANGES)
def test_a_critic_whose_header_does_not_fit_its_metadata_is_refused_before_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    from agents.critic import read_critic

    good = _good_critic(tmp_path / "critic.safetensors")
    assert set(read_critic(good)[0]) == {"input_scale", "hidden.0.weight", "hidden.0.bias", "value.weight", "value.bias"}
    path = _rewritten(tmp_path, good, change)
    _no_tensor_read(monkeypatch)
    with pytest.raises(CheckpointError, match="its header (names|says)"):
        read_critic(path)


def test_a_critic_with_a_hundred_thousand_layers_is_refused_from_its_metadata(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors import safe_open

    from agents.critic import read_critic

    good = _good_critic(tmp_path / "critic.safetensors")
    with safe_open(str(good), framework="numpy") as handle:
        meta = json.loads(handle.metadata()[METADATA_KEY])
    path = _rewritten_metadata(tmp_path, good, json.dumps(dict(meta, hidden=[4] * 100_000)))
    _no_tensor_read(monkeypatch)
    with pytest.raises(CheckpointError, match="1 to 16 layer widths"):
        read_critic(path)


def _rewritten_metadata(tmp_path: Path, source: Path, text: str) -> Path:
    from safetensors import safe_open
    from safetensors.numpy import save_file

    with safe_open(str(source), framework="numpy") as handle:
        tensors = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118 (not a dict)
    path = tmp_path / "hostile_meta.safetensors"
    save_file(tensors, str(path), metadata={METADATA_KEY: text})
    return path


@pytest.mark.parametrize("change", [
    "an unknown name", "an unknown generator state", "rng/numpy as float32", "no rng/torch",
    "an optimizer entry without exp_avg_sq", "a bad optimizer name", "moments of two shapes", "steps as a string",
])
def test_a_resume_model_whose_header_names_what_capture_never_writes_is_refused_before_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    pytest.importorskip("torch")
    import shutil

    from safetensors import safe_open
    from safetensors.numpy import save_file

    from training.run.resume import ResumeError, read_resume

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "runs_9f587ed" / "batched", run)
    model = run / "resume" / "model_512.safetensors"
    with safe_open(str(model), framework="numpy") as handle:
        strings = handle.metadata()
        tensors = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118 (not a dict)
    assert read_resume(run) is not None  # the run as written resumes
    first = sorted(k for k in tensors if k.startswith("optimizer/"))[0].split("/")[1]
    if change == "an unknown name":
        tensors["evil/w"] = np.zeros(2, np.float32)
    elif change == "an unknown generator state":
        tensors["rng/python"] = np.zeros(2, np.int32)
    elif change == "rng/numpy as float32":
        tensors["rng/numpy"] = tensors["rng/numpy"].astype(np.float32)
    elif change == "no rng/torch":
        del tensors["rng/torch"]
    elif change == "an optimizer entry without exp_avg_sq":
        del tensors[f"optimizer/{first}/exp_avg_sq"]
    elif change == "a bad optimizer name":
        tensors["optimizer/007/step"] = np.zeros((), np.float32)
    elif change == "moments of two shapes":
        tensors[f"optimizer/{first}/exp_avg_sq"] = np.zeros(7, np.float32)
    else:
        strings = {k: v.replace("512", '"512"') for k, v in strings.items()}
    save_file(tensors, str(model), metadata=strings)
    _no_tensor_read(monkeypatch, model)
    with pytest.raises(ResumeError, match="its header"):
        read_resume(run)
