"""uno_env.files: atomic writes leave the old file or the new one, never a broken one."""

from __future__ import annotations

import contextlib
import doctest
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import uno_env.files
from uno_env.files import NotARegularFileError, atomic_path, atomic_write, read_at_most


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


def _returns_without_blocking(call: Callable[[], object]) -> BaseException | None:
    """Run ``call`` in a thread; what it raised (None if nothing). A call still blocked in ``open()`` after
    a minute (a FIFO without a writer never opens) fails the test instead of hanging the suite."""
    raised: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            raised.append(None)
        except BaseException as err:  # noqa: BLE001 - handed back to the test
            raised.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert raised, "blocked on the pipe"
    return raised[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_read_at_most_refuses_a_pipe_without_waiting_for_a_writer(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    err = _returns_without_blocking(lambda: read_at_most(pipe, 100))
    assert isinstance(err, NotARegularFileError) and isinstance(err, OSError)
    assert "pipe" in str(err)
    assert read_at_most("/dev/zero", 8) is None  # a device is still read, at most one byte past the limit


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_every_loader_refuses_a_pipe_with_its_own_typed_error(tmp_path: Path) -> None:
    from uno_app.terminal import read_save
    from uno_env.core.errors import StateError
    from uno_env.replay import Replay, ReplayError

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    cases: list[tuple[Callable[[], object], type[BaseException]]] = [
        (lambda: read_save(pipe), StateError), (lambda: Replay.load(pipe), ReplayError)]
    with contextlib.suppress(ImportError):  # the training loaders need the train extra (yaml, torch)
        from training.run.config import ConfigError, load_config
        from training.run.resume import ResumeError, read_resume

        run = tmp_path / "run"
        (run / "resume").mkdir(parents=True)
        os.mkfifo(run / "resume" / "state.json")
        cases += [(lambda: load_config(pipe), ConfigError), (lambda: read_resume(run), ResumeError)]
    for call, error in cases:
        err = _returns_without_blocking(call)
        assert isinstance(err, error), (call, err)
        assert "pipe" in str(err)


def test_every_loader_refuses_a_folder_with_its_own_typed_error_naming_the_path(tmp_path: Path) -> None:
    """A folder given as a file was an ``IsADirectoryError`` naming descriptor 3 (raw, for configs);
    found by ``tests/soak/soak_configs.py``."""
    from uno_app.terminal import read_save
    from uno_env.core.errors import StateError
    from uno_env.replay import Replay, ReplayError

    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="a folder, not a file") as err:
        read_at_most(folder, 100)
    assert err.value.filename == str(folder)
    cases: list[tuple[Callable[[], object], type[BaseException]]] = [
        (lambda: read_save(folder), StateError), (lambda: Replay.load(folder), ReplayError)]
    with contextlib.suppress(ImportError):  # the training loaders need the train extra (yaml, torch)
        from training.run.config import ConfigError, load_config
        from training.run.resume import ResumeError, read_resume

        run = tmp_path / "run"
        (run / "resume" / "state.json").mkdir(parents=True)
        cases += [(lambda: load_config(folder), ConfigError), (lambda: read_resume(run), ResumeError)]
    for call, error in cases:
        with pytest.raises(error, match="folder"):
            call()


def test_a_config_that_is_a_loop_of_links_is_a_config_error(tmp_path: Path) -> None:
    """ELOOP was a raw OSError from ``--config``; found by ``tests/soak/soak_configs.py``."""
    pytest.importorskip("yaml")
    from training.run.config import ConfigError, load_config

    loop = tmp_path / "loop.yaml"
    os.symlink(loop, loop)
    with pytest.raises(ConfigError, match="loop.yaml: Too many levels of symbolic links"):
        load_config(loop)
