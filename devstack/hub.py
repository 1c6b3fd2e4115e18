"""Provision each service once per session, from the first source that works."""

from __future__ import annotations

import contextlib
import os
import threading
import time

from devstack.containers import docker_engine_answers, from_containers
from devstack.endpoints import Provisioned
from devstack.environment import VARIABLES, from_environment
from devstack.native import start_native

SERVICES = ("kafka", "tansu", "postgres", "weaviate")


class ServiceUnavailableError(Exception):
    """A service no source could provide; the message names it and every reason."""

    def __init__(self, service: str, reason: str) -> None:
        super().__init__(f"tribal service unavailable: {service} ({reason})")
        self.service = service
        self.reason = reason


class ServiceHub:
    """Lazily started services, remembered (or their failure remembered) for the session."""

    def __init__(self, require: bool | None = None, use_docker: bool | None = None) -> None:
        self.require = (
            os.environ.get("TRIBAL_REQUIRE_SERVICES", "") not in ("", "0", "false")
            if require is None
            else require
        )
        self._use_docker = use_docker
        self._lock = threading.Lock()
        self.provided: dict[str, Provisioned] = {}
        self.failed: dict[str, str] = {}
        self._closed = False

    def docker(self) -> bool:
        if self._use_docker is None:
            self._use_docker = docker_engine_answers()
        return self._use_docker

    def get(self, service: str) -> Provisioned:
        """The running service, starting it on first use; raises ServiceUnavailableError."""
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r}")
        with self._lock:
            if service in self.provided:
                return self.provided[service]
            if service in self.failed:
                raise ServiceUnavailableError(service, self.failed[service])
            began = time.monotonic()
            try:
                got = self._acquire(service)
            except ServiceUnavailableError as exc:
                self.failed[service] = exc.reason
                raise
            got.started_in = time.monotonic() - began if got.source != "env" else 0.0
            self.provided[service] = got
            return got

    def _acquire(self, service: str) -> Provisioned:
        try:
            from_env = from_environment(service)
        except Exception as exc:
            # An endpoint was named explicitly: do not quietly test something else.
            raise ServiceUnavailableError(service, str(exc)) from exc
        if from_env is not None:
            return from_env
        reasons = []
        if self.docker():
            try:
                contained = from_containers(service)
            except Exception as exc:
                reasons.append(f"testcontainers: {type(exc).__name__}: {exc}")
            else:
                if contained is not None:
                    return contained
        try:
            return start_native(service)
        except Exception as exc:
            reasons.append(f"native: {type(exc).__name__}: {exc}")
        if not self.docker():
            reasons.append("no Docker engine")
        reasons.append(f"or set {VARIABLES[service]}")
        raise ServiceUnavailableError(service, "; ".join(reasons))

    def close(self) -> None:
        """Stop everything this hub started, newest first."""
        with self._lock:
            for got in reversed(list(self.provided.values())):
                with contextlib.suppress(Exception):
                    got.close()
            self._closed = True

    def report_line(self) -> str:
        if not self.provided:
            return ""
        return "tribal services: " + ", ".join(p.describe() for p in self.provided.values())
