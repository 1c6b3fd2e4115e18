"""A real Contract 1 host (``demo.kb_host`` under uvicorn) for the KB source tests.

``helpdesk.json`` holds 20 help-desk articles in the seed's shape; ``make demo`` can
serve the same file with ``python -m demo.kb_host --articles …/helpdesk.json``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from demo.kb_host import KbStore, create_kb_host

HELPDESK = Path(__file__).with_name("helpdesk.json")


def helpdesk_articles() -> list[dict[str, Any]]:
    articles: list[dict[str, Any]] = json.loads(HELPDESK.read_text())
    return articles


class KbHost:
    """The host app on ``127.0.0.1:<free port>`` in a thread; stoppable and restartable
    on the same port, to play a host that goes away entirely."""

    def __init__(self, store: KbStore, token: str | None = None) -> None:
        self.store = store
        self.token = token
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        config = uvicorn.Config(
            create_kb_host(self.store, self.token),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"kb host did not start on port {self.port}")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
        self._server = self._thread = None


@contextmanager
def running_kb_host(store: KbStore, token: str | None = None) -> Iterator[KbHost]:
    host = KbHost(store, token)
    host.start()
    try:
        yield host
    finally:
        host.stop()
