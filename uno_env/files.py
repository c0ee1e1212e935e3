"""Crash-safe file writes (every file the project writes goes through here) and bounded reads.

A write goes to a temporary file in the destination's folder, is flushed to disk, then renamed
over the destination (``os.replace`` is atomic on POSIX and Windows). A crash, a full disk or a
Ctrl-C at any moment leaves either the old file or the new one, never a half-written one.
New files get the usual permissions (``0o666`` minus the umask), as ``open(path, "w")`` would
give, not the ``0o600`` of ``tempfile``.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write(folder / "save.json", '{"ok": true}')
>>> (folder / "save.json").read_text()
'{"ok": true}'
>>> with atomic_path(folder / "data.bin") as tmp:
...     _ = tmp.write_bytes(b"written by a library that wants a path")
>>> (folder / "data.bin").read_bytes()
b'written by a library that wants a path'
>>> sorted(p.name for p in folder.iterdir())  # no temporary file left behind
['data.bin', 'save.json']

``read_at_most`` reads a file the project loads (a save, a config, a resume state, a replay) without
trusting its size: at most one byte past the limit is read, so a path naming a device
(``/dev/zero``) or a huge file is refused instead of filling the memory. A pipe (FIFO) or a socket
is refused before anything is read (``NotARegularFileError``): opening one for reading would wait
for a writer, forever if none comes.

>>> read_at_most(folder / "save.json", 100)
b'{"ok": true}'
>>> read_at_most(folder / "save.json", 5) is None  # more than 5 bytes
True
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MAX_HEADER_BYTES", "NotARegularFileError", "SafetensorsHeaderError", "atomic_path", "atomic_write", "read_at_most",
           "safetensors_header"]


class NotARegularFileError(OSError):
    """The path names a pipe (FIFO) or a socket, which the project never reads: a file or a device only."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds, rename it to ``path``.

    For libraries that write to a path themselves (``safetensors.save_file``, ``torch.save``,
    ``matplotlib``'s ``savefig``). If the block raises, the temporary file is removed and
    ``path`` is untouched.
    """
    target = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def atomic_write(path: str | os.PathLike[str], data: str | bytes, encoding: str = "utf-8") -> None:
    """Write ``data`` (text or bytes) to ``path`` atomically."""
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_path(path) as tmp:
        tmp.write_bytes(payload)


def read_at_most(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """The bytes of ``path``, or None when it holds more than ``limit`` (read: at most ``limit + 1``
    bytes); ``NotARegularFileError`` for a pipe or a socket, ``IsADirectoryError`` for a folder,
    ``OSError`` when it cannot be read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO's open must not wait for a writer
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            raise NotARegularFileError(errno.EINVAL, "a pipe or a socket, not a file", os.fspath(path))
        if stat.S_ISDIR(mode):  # open(fd) would say "Is a directory" naming the descriptor, not the path
            raise IsADirectoryError(errno.EISDIR, "a folder, not a file", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb") as handle:
        os.set_blocking(handle.fileno(), True)
        raw = handle.read(limit + 1)
    return None if len(raw) > limit else raw


class SafetensorsHeaderError(ValueError):
    """A ``.safetensors`` file whose header is damaged, hostile or larger than allowed (nothing was read past it)."""


# bytes per element of the dtypes safetensors writes (its header's names)
_DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
                "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
MAX_HEADER_BYTES = 1 << 20  # the JSON header: tensor names, shapes, offsets and the metadata strings


def safetensors_header(path: str | os.PathLike[str], max_bytes: int) -> dict[str, object]:
    """The checked header of a ``.safetensors`` file, read before any tensor is: ``SafetensorsHeaderError``
    unless the file is at most ``max_bytes``, its header at most ``MAX_HEADER_BYTES`` of JSON whose every
    tensor has a known dtype, a shape of non-negative ints and data offsets that lie inside the file and
    hold exactly that shape, the tensors tiling the data with no gap or overlap. A sparse file that
    claims a gigabyte is refused by its size before a byte of it is mapped."""
    import json

    where = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SafetensorsHeaderError(f"{where}: not a regular file")
        if info.st_size > max_bytes:
            raise SafetensorsHeaderError(f"{where}: {info.st_size} bytes, more than the {max_bytes} allowed")
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise SafetensorsHeaderError(f"{where}: shorter than a safetensors header")
        length = int.from_bytes(prefix, "little")
        if length > min(MAX_HEADER_BYTES, info.st_size - 8):
            raise SafetensorsHeaderError(f"{where}: a header of {length} bytes, more than the file or "
                                         f"the {MAX_HEADER_BYTES} allowed")
        raw = handle.read(length)
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:  # bad JSON, bad UTF-8, an int past Python's digit limit, nesting
        raise SafetensorsHeaderError(f"{where}: its header is not valid JSON ({type(err).__name__})") from None
    if not isinstance(header, dict):
        raise SafetensorsHeaderError(f"{where}: its header is not a JSON object")
    data_bytes = info.st_size - 8 - length
    spans = []
    for name, spec in header.items():
        if name == "__metadata__":
            if not isinstance(spec, dict) or not all(isinstance(v, str) for v in spec.values()):
                raise SafetensorsHeaderError(f"{where}: __metadata__ must map names to strings")
            continue
        spans.append(_tensor_span(where, name, spec, data_bytes))
    spans.sort()
    end = 0
    for begin, stop in spans:
        if begin != end:
            raise SafetensorsHeaderError(f"{where}: tensors overlap or leave a gap at byte {end}")
        end = stop
    if end != data_bytes:
        raise SafetensorsHeaderError(f"{where}: the tensors hold {end} bytes, the file {data_bytes} after its header")
    return header


def _tensor_span(where: str, name: str, spec: object, data_bytes: int) -> tuple[int, int]:
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "data_offsets"}:
        raise SafetensorsHeaderError(f"{where}: tensor {name[:80]!r} needs exactly dtype, shape and data_offsets")
    dtype, shape, offsets = spec["dtype"], spec["shape"], spec["data_offsets"]
    if not isinstance(dtype, str) or dtype not in _DTYPE_BYTES:  # a list or an object is unhashable
        raise SafetensorsHeaderError(f"{where}: tensor {name[:80]!r} has dtype {str(dtype)[:20]!r}; "
                                     f"known: {', '.join(_DTYPE_BYTES)}")
    if not isinstance(shape, list) or len(shape) > 8 or not all(type(d) is int and 0 <= d <= data_bytes for d in shape):
        raise SafetensorsHeaderError(f"{where}: tensor {name[:80]!r} has a shape that is not up to 8 sizes "
                                     "within the file")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)
            and 0 <= offsets[0] <= offsets[1] <= data_bytes):
        raise SafetensorsHeaderError(f"{where}: tensor {name[:80]!r} has data offsets outside the file")
    count = 1
    for size in shape:
        count *= size
    if offsets[1] - offsets[0] != count * _DTYPE_BYTES[dtype]:
        raise SafetensorsHeaderError(f"{where}: tensor {name[:80]!r}'s offsets do not hold its shape")
    return offsets[0], offsets[1]


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")
