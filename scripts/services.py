"""Real Apache Kafka, Weaviate and PostgreSQL on this machine, without Docker.

    python scripts/services.py up [kafka] [weaviate] [postgres]   # default: all three
    python scripts/services.py down [kafka] [weaviate] [postgres]
    python scripts/services.py env        # export TRIBAL_...= lines; eval "$(... env)"
    python scripts/services.py status

* Apache Kafka (KRaft, one combined broker+controller): jars fetched from Maven Central
  by ``mvn`` with ``scripts/kafka/pom.xml`` into ``~/.cache/tribal/kafka-<version>``.
* Weaviate: ``weaviate-server`` built by ``go install`` from the Go module proxy.
* PostgreSQL 18 + pgvector: :class:`runtime.embedded.postgres.EmbeddedPostgres`.

``up`` leaves the servers running in the background (state, logs and data under
``.tribal/services/``) until ``down``. The test harness (``tests/harness``) imports the
same classes and starts them as children tied to the pytest process instead.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make the project importable
    sys.path.insert(0, str(ROOT))

from runtime.embedded.postgres import EmbeddedPostgres  # noqa: E402
from runtime.embedded.process import free_port, port_open, wait_until  # noqa: E402

KAFKA_VERSION = "4.1.1"
KAFKA_SCALA = "2.13"
WEAVIATE_VERSION = "1.35.2"
WEAVIATE_PACKAGE = "github.com/weaviate/weaviate/cmd/weaviate-server"
WEAVIATE_ENV = {"USE_INVERTED_SEARCHABLE": "false"}
"""Settings every Weaviate that Tribal runs needs. BlockMax WAND (1.35's default keyword
index) takes an upper bound of 0 for terms still in the memtable, so a keyword query
that many documents match leaves out a document written moments ago (weaviate#11780,
fixed after 1.35.2): map-collection BM25 finds it. Applies to collections created after."""
DEFAULT_JAVA_HOME = Path("/usr/lib/jvm/java-17-openjdk-amd64")

STATE_DIR = ROOT / ".tribal" / "services"
KAFKA_POM = ROOT / "scripts" / "kafka" / "pom.xml"
SERVICES = ("kafka", "weaviate", "postgres")
HOST = "127.0.0.1"

_PR_SET_PDEATHSIG = 1


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tribal"


# -- processes ---------------------------------------------------------------------------


def _die_with_parent() -> None:
    # Between fork and exec: the kernel SIGTERMs the child when its parent dies, so a
    # killed pytest or supervisor leaves no broker behind.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def spawn(
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    tie_to_parent: bool = True,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own session, output appended to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            list(argv),
            env=dict(os.environ if env is None else env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if tie_to_parent else None,
        )


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); it is dead for our purposes.
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return False
    return True


def terminate_group(pid: int, timeout: float = 30.0, sig: int = signal.SIGTERM) -> None:
    """Signal the process group led by ``pid``; SIGKILL it if still alive after ``timeout``."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _log_tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait_alive(
    proc: subprocess.Popen[bytes], check: Callable[[], bool], timeout: float, what: str, log: Path
) -> None:
    def ready() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{_log_tail(log)}")
        return check()

    try:
        wait_until(ready, timeout, what, interval=0.1)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}; last log lines:\n{_log_tail(log)}") from exc


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    # Two pytest sessions (or `up` and pytest) must not run mvn/go into one directory.
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def pick_port(preferred: int | None = None) -> int:
    """``preferred`` when it is free (keeps a restarted server at its address), else any."""
    if preferred:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            # Servers bind with SO_REUSEADDR, so TIME_WAIT left by their last run is fine.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((HOST, preferred))
                return preferred
            except OSError:
                pass
    return free_port(HOST)


# -- Apache Kafka ------------------------------------------------------------------------


def java_bin() -> str:
    """JDK 17+ ``java``: ``$JAVA_HOME``, then the Debian JDK 17, then ``PATH``."""
    for home in (os.environ.get("JAVA_HOME"), str(DEFAULT_JAVA_HOME)):
        if home and (Path(home) / "bin" / "java").exists():
            return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise RuntimeError("Apache Kafka needs a JDK 17+: set JAVA_HOME or put java on PATH")
    return found


def kafka_libs(version: str = KAFKA_VERSION) -> Path:
    """The broker's classpath directory, fetched with ``mvn`` the first time."""
    home = cache_dir() / f"kafka-{version}"
    libs = home / "libs"
    done = home / ".complete"
    if done.exists():
        return libs
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError("fetching Apache Kafka jars needs Maven (mvn) on PATH")
    with _file_lock(home.with_suffix(".lock")):
        if done.exists():
            return libs
        home.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="libs-", dir=home))
        result = subprocess.run(
            [
                mvn,
                "-q",
                "-B",
                "-f",
                str(KAFKA_POM),
                f"-Dkafka.version={version}",
                "dependency:copy-dependencies",
                "-DincludeScope=runtime",
                f"-DoutputDirectory={staging}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0 or not any(staging.glob("kafka_*.jar")):
            shutil.rmtree(staging, ignore_errors=True)
            raise RuntimeError(f"mvn could not fetch Apache Kafka {version}:\n{result.stdout}")
        shutil.rmtree(libs, ignore_errors=True)
        staging.rename(libs)
        done.write_text(version + "\n")
    return libs


def kafka_version(libs: Path) -> str:
    """The version the kafka-clients jar reports (what AppInfoParser logs at start-up)."""
    for jar in sorted(libs.glob("kafka-clients-*.jar")):
        with zipfile.ZipFile(jar) as zf:
            for line in zf.read("kafka/kafka-version.properties").decode().splitlines():
                if line.startswith("version="):
                    return line.split("=", 1)[1].strip()
    raise RuntimeError(f"no kafka-clients jar in {libs}")


def kafka_brokers(host: str, port: int, timeout: float = 2.0) -> list[tuple[int, str, int]]:
    """Brokers listed by a Metadata (v1) request: proves the node serves requests."""
    client_id = b"tribal-probe"
    header = struct.pack(">hhih", 3, 1, 7, len(client_id)) + client_id
    body = struct.pack(">i", 0)  # no topics: brokers and controller only
    request = header + body
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(struct.pack(">i", len(request)) + request)
        size = struct.unpack(">i", _recv_exact(s, 4))[0]
        data = _recv_exact(s, size)
    correlation, count = struct.unpack_from(">ii", data, 0)
    if correlation != 7:
        raise RuntimeError("unexpected Metadata correlation id")
    offset, brokers = 8, []
    for _ in range(count):
        node_id, host_len = struct.unpack_from(">ih", data, offset)
        offset += 6
        broker_host = data[offset : offset + host_len].decode()
        offset += host_len
        (broker_port, rack_len) = struct.unpack_from(">ih", data, offset)
        offset += 6 + max(rack_len, 0)
        brokers.append((node_id, broker_host, broker_port))
    return brokers


def _recv_exact(s: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = s.recv(n - got)
        if not chunk:
            raise ConnectionError("Kafka closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _kafka_ready(host: str, port: int) -> bool:
    if not port_open(host, port):
        return False
    try:
        return len(kafka_brokers(host, port)) > 0
    except (OSError, RuntimeError, struct.error):
        return False


_LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
"""


class KafkaNode:
    """One Apache Kafka process acting as KRaft controller and broker, on loopback."""

    def __init__(
        self,
        state_dir: Path,
        *,
        port: int | None = None,
        controller_port: int | None = None,
        heap: str = "512m",
        tie_to_parent: bool = True,
        version: str = KAFKA_VERSION,
    ) -> None:
        self.state_dir = Path(state_dir).absolute()
        self.host = HOST
        self.port = port or pick_port()
        self.controller_port = controller_port or pick_port()
        self.heap = heap
        self.tie_to_parent = tie_to_parent
        self.libs = kafka_libs(version)
        self.version = kafka_version(self.libs)
        self.log_path = self.state_dir / "kafka.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _write_config(self) -> Path:
        data = self.state_dir / "data"
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@{self.host}:{self.controller_port}",
            "listeners": (
                f"PLAINTEXT://{self.host}:{self.port},CONTROLLER://{self.host}:{self.controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://{self.host}:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(data),
            "num.partitions": "1",
            "auto.create.topics.enable": "true",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        config = self.state_dir / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.state_dir / "log4j2.properties").write_text(_LOG4J2)
        return config

    def _java(self, main: str, *args: str, heap: str) -> list[str]:
        return [
            java_bin(),
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.state_dir / 'log4j2.properties'}",
            "-cp",
            f"{self.libs}/*",
            main,
            *args,
        ]

    def start(self, timeout: float = 90.0) -> KafkaNode:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        config = self._write_config()
        if not (self.state_dir / "data" / "meta.properties").exists():
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            fmt = subprocess.run(
                self._java(
                    "kafka.tools.StorageTool",
                    "format",
                    # one argument: a random id may start with '-', which argparse
                    # would take for an option (1 run in 64 failed to start)
                    f"--cluster-id={cluster_id}",
                    "-c",
                    str(config),
                    heap="256m",
                ),
                capture_output=True,
                text=True,
                check=False,
            )
            if fmt.returncode != 0:
                raise RuntimeError(f"kafka storage format failed:\n{fmt.stdout}{fmt.stderr}")
        self.proc = spawn(
            self._java("kafka.Kafka", str(config), heap=self.heap),
            self.log_path,
            cwd=self.state_dir,
            tie_to_parent=self.tie_to_parent,
        )
        try:
            _wait_alive(
                self.proc,
                lambda: _kafka_ready(self.host, self.port),
                timeout,
                f"Apache Kafka on {self.bootstrap}",
                self.log_path,
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Controlled shutdown (SIGTERM), SIGKILL after ``timeout``."""
        if self.proc is not None:
            terminate_group(self.proc.pid, timeout)
            self.proc.wait()
            self.proc = None


# -- Weaviate ----------------------------------------------------------------------------


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
            f"`python scripts/services.py up weaviate` (needs Go: go install "
            f"{WEAVIATE_PACKAGE}@v{version})"
        )
    with _file_lock(cache_dir() / "weaviate-build.lock"):
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
                raise RuntimeError(f"go install of weaviate-server failed:\n{_log_tail(log)}")
    return binary


def weaviate_meta(url: str, timeout: float = 5.0) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/v1/meta", timeout=timeout) as resp:
        meta: dict[str, Any] = json.load(resp)
    return meta


def weaviate_ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/v1/.well-known/ready", timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


class WeaviateNode:
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
        self.proc: subprocess.Popen[bytes] | None = None
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

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

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
        self.proc = spawn(
            [
                str(self.binary),
                "--host",
                self.host,
                "--port",
                str(self.http_port),
                "--scheme",
                "http",
            ],
            self.log_path,
            env=self.environment(),
            cwd=self.state_dir,
            tie_to_parent=self.tie_to_parent,
        )
        try:
            _wait_alive(
                self.proc,
                lambda: weaviate_ready(self.url),
                timeout,
                f"Weaviate on {self.url}",
                self.log_path,
            )
            self.version = str(weaviate_meta(self.url).get("version", ""))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc is not None:
            terminate_group(self.proc.pid, timeout)
            self.proc.wait()
            self.proc = None


# -- PostgreSQL --------------------------------------------------------------------------


def postgres_node(
    state_dir: Path, *, port: int | None = None, tie_to_parent: bool = True, durable: bool = True
) -> EmbeddedPostgres:
    """An :class:`EmbeddedPostgres` for ``state_dir/data`` (not started)."""
    state_dir = Path(state_dir).absolute()
    state_dir.mkdir(parents=True, exist_ok=True)
    # The server may run as an unprivileged account (when we are root): let it in.
    state_dir.chmod(state_dir.stat().st_mode | 0o055)
    return EmbeddedPostgres(
        state_dir / "data",
        port=port,
        log_path=state_dir / "postgres.log",
        tie_to_parent=tie_to_parent,
        durable=durable,
    )


# -- CLI: background services recorded in .tribal/services/state.json --------------------


def _load_state() -> dict[str, dict[str, Any]]:
    try:
        state: dict[str, dict[str, Any]] = json.loads((STATE_DIR / "state.json").read_text())
    except (OSError, ValueError):
        return {}
    return state


def _save_state(state: Mapping[str, Mapping[str, Any]]) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = STATE_DIR / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    tmp.replace(STATE_DIR / "state.json")


def running_services() -> dict[str, dict[str, Any]]:
    """State entries of background services whose process is still alive."""
    return {k: v for k, v in _load_state().items() if v.get("pid") and pid_alive(int(v["pid"]))}


def up(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Start each named service in the background unless it is already running."""
    state = _load_state()
    for name in names:
        entry = state.get(name, {})
        if entry.get("pid") and pid_alive(int(entry["pid"])):
            print(f"{name}: already running (pid {entry['pid']})")
            continue
        began = time.monotonic()
        ports: dict[str, int] = entry.get("ports", {})
        if name == "kafka":
            kafka = KafkaNode(
                STATE_DIR / "kafka",
                port=pick_port(ports.get("broker")),
                controller_port=pick_port(ports.get("controller")),
                tie_to_parent=False,
            ).start()
            entry = {
                "pid": kafka.pid,
                "kill": "group",
                "version": kafka.version,
                "bootstrap": kafka.bootstrap,
                "ports": {"broker": kafka.port, "controller": kafka.controller_port},
                "log": str(kafka.log_path),
            }
        elif name == "weaviate":
            weaviate = WeaviateNode(
                STATE_DIR / "weaviate", ports=ports, tie_to_parent=False
            ).start()
            entry = {
                "pid": weaviate.pid,
                "kill": "group",
                "version": weaviate.version,
                "url": weaviate.url,
                "grpc_port": weaviate.grpc_port,
                "ports": weaviate.ports,
                "log": str(weaviate.log_path),
            }
        elif name == "postgres":
            pg = postgres_node(
                STATE_DIR / "postgres", port=pick_port(ports.get("postgres")), tie_to_parent=False
            ).start()
            entry = {
                "pid": pg.pid,
                "kill": "postgres",
                "version": pg.version,
                "dsn": pg.dsn,
                "ports": {"postgres": pg.port},
                "data_dir": str(pg.data_dir),
                "log": str(pg.log_path),
            }
        else:
            raise SystemExit(f"unknown service {name!r}; choose from {', '.join(SERVICES)}")
        state[name] = entry
        _save_state(state)
        print(
            f"{name}: {entry['version']} up in {time.monotonic() - began:.1f}s (pid {entry['pid']})"
        )
    return state


def down(names: Sequence[str]) -> None:
    """Stop the named background services (all when ``names`` is empty)."""
    state = _load_state()
    for name in names or list(state):
        # Keep the entry (its ports) so the next `up` comes back at the same address.
        entry = state.get(name, {})
        if not entry.get("pid") or not pid_alive(int(entry["pid"])):
            print(f"{name}: not running")
        elif entry.get("kill") == "postgres":
            EmbeddedPostgres(Path(entry["data_dir"])).stop(force=True)
            print(f"{name}: stopped")
        else:
            terminate_group(int(entry["pid"]))
            print(f"{name}: stopped")
        if entry:
            entry["pid"] = None
            _save_state(state)


def env_lines(state: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """``export`` lines for the app settings and for the test harness."""
    state = running_services() if state is None else state
    values: dict[str, str] = {}
    if "kafka" in state:
        values["TRIBAL_KAFKA_BOOTSTRAP"] = state["kafka"]["bootstrap"]
        values["TRIBAL_TEST_KAFKA_BOOTSTRAP"] = state["kafka"]["bootstrap"]
        values["TRIBAL_TEST_KAFKA_VERSION"] = state["kafka"]["version"]
    if "postgres" in state:
        values["TRIBAL_POSTGRES_DSN"] = state["postgres"]["dsn"]
        values["TRIBAL_TEST_POSTGRES_DSN"] = state["postgres"]["dsn"]
    if "weaviate" in state:
        values["TRIBAL_WEAVIATE_URL"] = state["weaviate"]["url"]
        values["TRIBAL_WEAVIATE_GRPC_PORT"] = str(state["weaviate"]["grpc_port"])
        values["TRIBAL_TEST_WEAVIATE_URL"] = state["weaviate"]["url"]
        values["TRIBAL_TEST_WEAVIATE_GRPC_PORT"] = str(state["weaviate"]["grpc_port"])
    return [f"export {k}={v}" for k, v in values.items()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("up", "down"):
        p = sub.add_parser(command, help=f"{command} services (default: all)")
        p.add_argument("services", nargs="*", metavar="|".join(SERVICES))
    sub.add_parser("env", help="print export TRIBAL_...= lines for running services")
    sub.add_parser("status", help="show running services")
    args = parser.parse_args(argv)
    unknown = sorted(set(getattr(args, "services", [])) - set(SERVICES))
    if unknown:
        parser.error(f"unknown service(s) {', '.join(unknown)}; choose from {', '.join(SERVICES)}")
    if args.command == "up":
        up(args.services or SERVICES)
        print("\n".join(env_lines()))
    elif args.command == "down":
        down(args.services)
    elif args.command == "env":
        print("\n".join(env_lines()))
    else:
        for name, entry in running_services().items():
            where = entry.get("bootstrap") or entry.get("url") or entry.get("dsn")
            print(f"{name}: {entry['version']} pid {entry['pid']} {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
