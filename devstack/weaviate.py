"""Weaviate: ``weaviate-server`` built by ``go install`` from the Go module proxy."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from devstack.processes import HOST, STATE_DIR, Server, cache_dir, file_lock, log_tail, pick_port

WEAVIATE_VERSION = "1.35.2"
WEAVIATE_PACKAGE = "github.com/weaviate/weaviate/cmd/weaviate-server"
WEAVIATE_ENV = {"USE_INVERTED_SEARCHABLE": "false"}
"""Settings every Weaviate that Tribal runs needs. BlockMax WAND (1.35's default keyword
index) takes an upper bound of 0 for terms still in the memtable, so a keyword query
that many documents match leaves out a document written moments ago (weaviate#11780,
fixed after 1.35.2): map-collection BM25 finds it. Applies to collections created after."""


def _go_env(name: str) -> str:
    go = shutil.which("go")
    if go is None:
        return ""
    return subprocess.run([go, "env", name], capture_output=True, text=True).stdout.strip()


def weaviate_binary_path() -> Path:
    gobin = os.environ.get("GOBIN") or _go_env("GOBIN")
    if gobin:
        return Path(gobin) / "weaviate-server"
    gopath = os.environ.get("GOPATH") or _go_env("GOPATH") or str(Path.home() / "go")
    return Path(gopath.split(os.pathsep)[0]) / "bin" / "weaviate-server"


def weaviate_binary_version(binary: Path) -> str | None:
    """Module version recorded in the binary by ``go install`` (``go version -m``)."""
    go = shutil.which("go")
    if go is None or not binary.exists():
        return None
    out = subprocess.run([go, "version", "-m", str(binary)], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0] == "mod" and fields[1] == "github.com/weaviate/weaviate":
            return fields[2].removeprefix("v")
    return None


def weaviate_build_running() -> bool:
    """Is a ``go install`` of weaviate-server (ours or anyone's) in progress?"""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"install" in argv and any(WEAVIATE_PACKAGE.encode() in a for a in argv):
                return True
    return False


def weaviate_binary(
    version: str = WEAVIATE_VERSION, *, build: bool = True, build_timeout: float = 3600.0
) -> Path:
    """``weaviate-server`` at ``version``: waits for a running build, else builds one."""
    binary = weaviate_binary_path()
    if weaviate_binary_version(binary) == version:
        return binary
    deadline = time.monotonic() + build_timeout
    while weaviate_build_running() and time.monotonic() < deadline:
        time.sleep(5)
    if weaviate_binary_version(binary) == version:
        return binary
    go = shutil.which("go")
    if not build or go is None:
        raise RuntimeError(
            f"weaviate-server {version} is not built ({binary}); build it with "
            f"`python -m devstack up weaviate` (needs Go: go install "
            f"{WEAVIATE_PACKAGE}@v{version})"
        )
    with file_lock(cache_dir() / "weaviate-build.lock"):
        if weaviate_binary_version(binary) != version:
            log = STATE_DIR / "weaviate-build.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            env = {**os.environ, "GOFLAGS": "-buildvcs=false"}
            with open(log, "ab") as out:
                done = subprocess.run(
                    [go, "install", f"{WEAVIATE_PACKAGE}@v{version}"],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=build_timeout,
                    check=False,
                )
            if done.returncode != 0 or weaviate_binary_version(binary) != version:
                raise RuntimeError(f"go install of weaviate-server failed:\n{log_tail(log)}")
    return binary


def weaviate_meta(url: str, timeout: float = 5.0) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/v1/meta", timeout=timeout) as resp:
        meta: dict[str, Any] = json.load(resp)
    return meta


def weaviate_version(url: str) -> str:
    return str(weaviate_meta(url).get("version", ""))


def weaviate_ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/v1/.well-known/ready", timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


class WeaviateNode(Server):
    """One single-node Weaviate with anonymous access and no vectorizer modules."""

    PORT_NAMES = ("http", "grpc", "gossip", "data", "raft", "raft_rpc")

    def __init__(
        self,
        state_dir: Path,
        *,
        ports: Mapping[str, int] | None = None,
        tie_to_parent: bool = True,
        version: str = WEAVIATE_VERSION,
    ) -> None:
        self.state_dir = Path(state_dir).absolute()
        self.host = HOST
        chosen: dict[str, int] = {}
        for name in self.PORT_NAMES:
            port = pick_port((ports or {}).get(name))
            while port in chosen.values():
                port = pick_port()
            chosen[name] = port
        self.ports = chosen
        self.tie_to_parent = tie_to_parent
        self.binary = weaviate_binary(version)
        self.log_path = self.state_dir / "weaviate.log"
        self.version = ""

    @property
    def http_port(self) -> int:
        return self.ports["http"]

    @property
    def grpc_port(self) -> int:
        return self.ports["grpc"]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    def environment(self) -> dict[str, str]:
        p = self.ports
        return {
            **os.environ,
            "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
            "DEFAULT_VECTORIZER_MODULE": "none",
            "ENABLE_MODULES": "",
            "PERSISTENCE_DATA_PATH": str(self.state_dir / "data"),
            "CLUSTER_HOSTNAME": "node1",
            "CLUSTER_BIND_ADDR": self.host,
            "CLUSTER_ADVERTISE_ADDR": self.host,
            "CLUSTER_GOSSIP_BIND_PORT": str(p["gossip"]),
            "CLUSTER_DATA_BIND_PORT": str(p["data"]),
            "RAFT_PORT": str(p["raft"]),
            "RAFT_INTERNAL_RPC_PORT": str(p["raft_rpc"]),
            "RAFT_BOOTSTRAP_EXPECT": "1",
            # The default multiplier (5) makes a lone node wait ~8 s to elect itself.
            "RAFT_TIMEOUTS_MULTIPLIER": "1",
            "GRPC_PORT": str(p["grpc"]),
            "GO_PROFILING_DISABLE": "true",  # pprof would bind :6060 on every interface
            "DISABLE_TELEMETRY": "true",
            "QUERY_DEFAULTS_LIMIT": "25",
            "LOG_LEVEL": "info",
            **WEAVIATE_ENV,
        }

    def start(self, timeout: float = 60.0) -> WeaviateNode:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(self.binary), "--host", self.host, "--port", str(self.http_port)]
        self.launch(
            [*argv, "--scheme", "http"],
            self.log_path,
            lambda: weaviate_ready(self.url),
            f"Weaviate on {self.url}",
            timeout,
            env=self.environment(),
            cwd=self.state_dir,
            tie_to_parent=self.tie_to_parent,
        )
        try:
            self.version = weaviate_version(self.url)
        except BaseException:
            self.stop()
            raise
        return self
