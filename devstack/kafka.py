"""Apache Kafka (KRaft, one combined broker and controller) from Maven Central jars.

The jars are fetched by ``mvn`` with ``devstack/kafka_pom.xml`` into
``~/.cache/tribal/kafka-<version>`` the first time, and run with a JDK 17+.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import uuid
import zipfile
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from devstack.processes import HOST, Server, cache_dir, file_lock, pick_port
from runtime.embedded.process import port_open

KAFKA_VERSION = "4.1.1"
KAFKA_SCALA = "2.13"
KAFKA_POM = Path(__file__).with_name("kafka_pom.xml")
DEFAULT_JAVA_HOME = Path("/usr/lib/jvm/java-17-openjdk-amd64")


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
    with file_lock(home.with_suffix(".lock")):
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


def kafka_answers(bootstrap: str) -> bool:
    """Does the first broker of ``bootstrap`` (``host:port,...``) answer a Metadata request?"""
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    try:
        return port_open(host, int(port)) and bool(kafka_brokers(host, int(port)))
    except (OSError, RuntimeError, ValueError, struct.error):
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


@dataclass(eq=False)
class KafkaNode(Server):
    """One Apache Kafka process acting as KRaft controller and broker, on loopback."""

    state_dir: Path
    _: KW_ONLY
    port: int = field(default_factory=pick_port)
    controller_port: int = field(default_factory=pick_port)
    heap: str = "512m"
    tie_to_parent: bool = True
    version: str = KAFKA_VERSION
    """The version to fetch; once fetched, the version its jars report."""
    host: str = field(default=HOST, init=False)
    libs: Path = field(init=False)
    log_path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.state_dir = Path(self.state_dir).absolute()
        self.libs = kafka_libs(self.version)
        self.version = kafka_version(self.libs)
        self.log_path = self.state_dir / "kafka.log"

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

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

    def _format_storage(self, config: Path) -> None:
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

    def start(self, timeout: float = 90.0) -> KafkaNode:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        config = self._write_config()
        if not (self.state_dir / "data" / "meta.properties").exists():
            self._format_storage(config)
        self.launch(
            self._java("kafka.Kafka", str(config), heap=self.heap),
            self.log_path,
            lambda: kafka_answers(self.bootstrap),
            f"Apache Kafka on {self.bootstrap}",
            timeout,
            cwd=self.state_dir,
            tie_to_parent=self.tie_to_parent,
        )
        return self
