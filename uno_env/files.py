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

__all__ = ["NotARegularFileError", "atomic_path", "atomic_write", "read_at_most"]


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
    bytes); ``NotARegularFileError`` for a pipe or a socket, ``OSError`` when it cannot be read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO's open must not wait for a writer
    with open(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            raise NotARegularFileError(errno.EINVAL, "a pipe or a socket, not a file", os.fspath(path))
        os.set_blocking(handle.fileno(), True)
        raw = handle.read(limit + 1)
    return None if len(raw) > limit else raw
