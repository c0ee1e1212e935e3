"""The RLlib trainer's cluster recipe on two Ray nodes of this machine, started with ``ray start``.

A head (``ray start --head``) and a worker (``ray start --address=HEAD``), one CPU each, each
with its own temp dir (so that no other Ray user of the machine finds them through
``/tmp/ray/ray_current_cluster``), a small object store and no dashboard. The test process
is the driver: ``training.rllib.trainer`` joins the cluster through its ``address`` setting and
trains with two env runners of one CPU each, so Ray has to put one on each node; the test
checks that both nodes are alive and that the runners ran on the two of them, then that the
iterations sampled and the checkpoint was exported.

Ray replaces ``--node-ip-address=127.0.0.1`` with the machine's own address (a node must be
reachable from the others: ``ray._private.services.resolve_ip_for_localhost``), so the nodes
talk over this machine's interface; the driver connects through 127.0.0.1.

The nodes are stopped by a SIGTERM to the two ``ray start --block`` processes this test
started (Ray then stops that node's own processes), then a SIGKILL to their process groups,
never with ``ray stop``, which stops every Ray process of the machine, other users' included.
Token authentication (Ray 2.52+) is on for the whole cluster, with a token of this test's own:
``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN_PATH`` (a file in a temp dir) for both nodes and the
driver. Left to Ray's defaults the cluster's mode depends on the machine: ``ray start --head``
turns token auth on when ``~/.ray/auth_token`` exists (any earlier ``ray.init()`` of a new local
cluster writes one, as the other RLlib tests do), while ``ray start --address`` and a driver
joining by address stay unauthenticated unless ``RAY_AUTH_MODE=token`` is set, and are refused
(``InvalidAuthToken``: the failure CI met). The driver runs in its own process (``_drive``), so
that the Ray state other tests left in this process (a cached auth mode, a cached token) cannot
reach it.

Needs the ``rllib`` extra; skipped, with the reason, where Ray is not installed.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[rllib]')")
pytest.importorskip("ray.rllib", reason="Ray is installed without RLlib (pip install -e '.[rllib]')")

from training.rllib import trainer as rllib  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "rllib" / "self_play.yaml"
RAY = str(Path(sys.executable).with_name("ray"))
START_TIMEOUT_S = 120.0
"""How long each node may take to come up (a busy 2-core machine takes 10-30 s)."""
STOP_TIMEOUT_S = 45.0
"""A head drains for up to 30 s after its SIGTERM before it stops its processes."""
OBJECT_STORE_BYTES = 80 * 1024 * 1024


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ray_env(token_path: Path) -> dict[str, str]:
    """The environment of every process of the test's cluster: token auth with the test's own token."""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "OMP_NUM_THREADS": "1",
           "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_path)}
    for name in ("RAY_ADDRESS", "RAY_AUTH_TOKEN"):  # RAY_AUTH_TOKEN would win over the path
        env.pop(name, None)
    return env


def _start_node(args: list[str], temp_dir: str, log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``ray start --block`` in its own process group (so that its leftovers can be stopped by group id)."""
    with log.open("wb") as out:
        return subprocess.Popen([RAY, "start", "--block", "--node-ip-address=127.0.0.1", "--num-cpus=1",
                                 "--num-gpus=0", f"--object-store-memory={OBJECT_STORE_BYTES}",
                                 f"--temp-dir={temp_dir}", "--disable-usage-stats", *args],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)


def _wait_for(check: Any, what: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not check():
        if process.poll() is not None:
            pytest.fail(f"{what}: ray start exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not up after {START_TIMEOUT_S:.0f} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)


def _stop_node(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the group this test created for that node
    except ProcessLookupError:
        pass
    process.wait(10)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@dataclass(frozen=True)
class Cluster:
    address: str
    env: dict[str, str]
    """What the driver's process needs to join (token auth with the cluster's token)."""


@pytest.fixture()
def two_nodes(tmp_path: Path) -> Iterator[Cluster]:
    """Start a head and a worker node; yield the cluster; stop both whatever happens."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    token_path = tmp_path / "auth_token"
    token_path.write_text(secrets.token_hex(32))
    token_path.chmod(0o600)
    env = _ray_env(token_path)
    # Short roots: Ray's Unix socket paths (under the temp dir) must stay under 108 bytes.
    roots = [tempfile.mkdtemp(prefix="uno_rayh_"), tempfile.mkdtemp(prefix="uno_rayw_")]
    nodes: list[subprocess.Popen[bytes]] = []
    try:
        head_log = tmp_path / "head.log"
        nodes.append(_start_node(["--head", f"--port={port}", "--include-dashboard=false"], roots[0], head_log, env))
        _wait_for(lambda: _accepts(port) and "Ray runtime started" in head_log.read_text(), "the head node",
                  nodes[0], head_log)
        worker_log = tmp_path / "worker.log"
        nodes.append(_start_node([f"--address={address}"], roots[1], worker_log, env))
        _wait_for(lambda: "Ray runtime started" in worker_log.read_text(), "the worker node", nodes[1], worker_log)
        yield Cluster(address, env)
    finally:
        for node in reversed(nodes):
            _stop_node(node)
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)


def _drive(address: str, run_dir: str) -> None:
    """The driver (run in its own process by the test): join, check placement, train, print a JSON line."""
    settings = rllib.rllib_config(str(CONFIG), [
        f"rllib.address={json.dumps(address)}", "rllib.num_env_runners=2", "rllib.iterations=2",
        f"run_dir={run_dir}", "rllib.train_batch_size=256", "ppo.batch_size=128", "ppo.n_epochs=1",
        "ppo.hidden=[32]", "env.max_turns=300",
    ])
    algorithm = rllib.build_algorithm(settings)  # ray.init(address=settings.rllib.address): joins, starts nothing
    try:
        alive = sorted(node["NodeID"] for node in ray.nodes() if node["Alive"])
        cpus = ray.cluster_resources().get("CPU")
        # A lambda, so that Ray ships it by value: the runners cannot import this test module.
        runner_nodes = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False)
        path = rllib.train(algorithm, settings, log=lambda line: None)
    finally:
        algorithm.stop()
        ray.shutdown()
    print("RESULT " + json.dumps({"alive": alive, "cpus": cpus, "runner_nodes": sorted(runner_nodes),
                                  "checkpoint": str(path)}))


DRIVE_TIMEOUT_S = 600.0
"""Joining, two iterations and the export take about 40 s on 2 busy cores; a hang ends the test."""


def test_trainer_joins_a_two_node_cluster_and_samples_on_both_nodes(two_nodes: Cluster, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code = ("import sys; from tests.test_ecosystem_ray_cluster import _drive; "
            "_drive(sys.argv[1], sys.argv[2])")
    done = subprocess.run([sys.executable, "-c", code, two_nodes.address, str(run_dir)],
                          cwd=ROOT, env=two_nodes.env, capture_output=True, text=True, timeout=DRIVE_TIMEOUT_S)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and len(lines) == 1, f"driver exited {done.returncode}:\n{done.stderr[-4000:]}"
    result = json.loads(lines[0].removeprefix("RESULT "))
    assert len(result["alive"]) == 2
    assert result["cpus"] == 2.0
    assert result["runner_nodes"] == result["alive"]  # one runner on each node
    progress = [json.loads(line) for line in (run_dir / "progress.jsonl").read_text().splitlines()]
    assert [p["iteration"] for p in progress] == [1, 2]
    assert progress[-1]["env_steps"] >= 2 * 256  # both iterations' batches came from the runners
    checkpoint = Path(result["checkpoint"])
    assert checkpoint.exists() and checkpoint.stat().st_size > 0
