"""uno_env.files: atomic writes leave the old file or the new one, never a broken one."""

from __future__ import annotations

import doctest
import os
import stat
from pathlib import Path

import pytest

import uno_env.files
from uno_env.files import atomic_path, atomic_write


def test_module_docstring_examples_run() -> None:
    result = doctest.testmod(uno_env.files)
    assert result.attempted > 0 and result.failed == 0


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "save.json"
    atomic_write(target, "good")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("half writ")
        raise KeyboardInterrupt
    assert target.read_text() == "good"
    assert [p.name for p in tmp_path.iterdir()] == ["save.json"]


def test_new_files_get_the_umask_permissions_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a.bin", b"\x00\x01")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.bin").stat().st_mode) == 0o644
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
