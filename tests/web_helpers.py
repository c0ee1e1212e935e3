"""Helpers for the web app's end-to-end tests: ``uno-env serve`` started in a subprocess on loopback."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def served(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run the server (``uno_app.web.server.main``) on a free port; yield its printed address and the process."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "uno_app.web.server", "--port", str(port), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        assert f"http://127.0.0.1:{port}/" in line, line
        yield f"127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(10)
