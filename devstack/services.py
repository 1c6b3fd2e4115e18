"""Real Apache Kafka, Weaviate and PostgreSQL on this machine, without Docker.

    python -m devstack up [kafka] [weaviate] [postgres]   # default: all three
    python -m devstack down [kafka] [weaviate] [postgres]
    python -m devstack env        # export TRIBAL_...= lines; eval "$(... env)"
    python -m devstack status

* Apache Kafka (KRaft, one combined broker+controller): :mod:`devstack.kafka`.
* Weaviate: ``weaviate-server`` built by ``go install``, :mod:`devstack.weaviate`.
* PostgreSQL 18 + pgvector: :mod:`devstack.postgres`.

``up`` leaves the servers running in the background (state, logs and data under
``.tribal/services/``) until ``down``. The test harness (:mod:`devstack.hub`) starts the
same servers as children tied to the pytest process instead.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from devstack.kafka import KafkaNode
from devstack.postgres import postgres_node
from devstack.processes import STATE_DIR, pick_port, terminate_group
from devstack.weaviate import WeaviateNode
from runtime.embedded.postgres import EmbeddedPostgres
from runtime.embedded.process import pid_alive

SERVICES = ("kafka", "weaviate", "postgres")
"""What ``up``, ``down`` and ``env`` know; their state is in ``.tribal/services/state.json``."""


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


def _start_kafka(ports: Mapping[str, int]) -> dict[str, Any]:
    kafka = KafkaNode(
        STATE_DIR / "kafka",
        port=pick_port(ports.get("broker")),
        controller_port=pick_port(ports.get("controller")),
        tie_to_parent=False,
    ).start()
    return {
        "pid": kafka.pid,
        "kill": "group",
        "version": kafka.version,
        "bootstrap": kafka.bootstrap,
        "ports": {"broker": kafka.port, "controller": kafka.controller_port},
        "log": str(kafka.log_path),
    }


def _start_weaviate(ports: Mapping[str, int]) -> dict[str, Any]:
    weaviate = WeaviateNode(STATE_DIR / "weaviate", ports=ports, tie_to_parent=False).start()
    return {
        "pid": weaviate.pid,
        "kill": "group",
        "version": weaviate.version,
        "url": weaviate.url,
        "grpc_port": weaviate.grpc_port,
        "ports": weaviate.ports,
        "log": str(weaviate.log_path),
    }


def _start_postgres(ports: Mapping[str, int]) -> dict[str, Any]:
    pg = postgres_node(
        STATE_DIR / "postgres", port=pick_port(ports.get("postgres")), tie_to_parent=False
    ).start()
    return {
        "pid": pg.pid,
        "kill": "postgres",
        "version": pg.version,
        "dsn": pg.dsn,
        "ports": {"postgres": pg.port},
        "data_dir": str(pg.data_dir),
        "log": str(pg.log_path),
    }


STARTERS: dict[str, Callable[[Mapping[str, int]], dict[str, Any]]] = {
    "kafka": _start_kafka,
    "weaviate": _start_weaviate,
    "postgres": _start_postgres,
}
"""Each service's start in the background, given the ports it had last time: its state entry."""


def up(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Start each named service in the background unless it is already running."""
    state = _load_state()
    for name in names:
        entry = state.get(name, {})
        if entry.get("pid") and pid_alive(int(entry["pid"])):
            print(f"{name}: already running (pid {entry['pid']})")
            continue
        if name not in STARTERS:
            raise SystemExit(f"unknown service {name!r}; choose from {', '.join(SERVICES)}")
        began = time.monotonic()
        entry = STARTERS[name](entry.get("ports", {}))
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


def main(argv: Sequence[str] | None = None, prog: str = "python -m devstack") -> int:
    """``up|down|env|status`` of the background services (``argv`` as on a command line)."""
    summary = __doc__.split("\n\n")[0] if __doc__ else ""
    parser = argparse.ArgumentParser(prog=prog, description=summary)
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
