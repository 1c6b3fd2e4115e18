"""ASGI apps served by a real uvicorn in a thread of their own, for as long as a block runs."""

from __future__ import annotations

import threading
import time
from typing import Any, Literal

import uvicorn

from runtime.embedded.process import free_port
from runtime.settings import TribalSettings


class UvicornThread:
    """``app`` on ``127.0.0.1`` at a free port while the ``with`` block runs."""

    def __init__(
        self,
        app: Any,
        *,
        log_level: str = "error",
        lifespan: Literal["auto", "on", "off"] = "auto",
        start_timeout: float = 10.0,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level=log_level, lifespan=lifespan
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> UvicornThread:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


class ThreadedServer(UvicornThread):
    """Tribal's API, ``create_app(settings)``, lifespan included (stores, query embedder)."""

    def __init__(self, settings: TribalSettings) -> None:
        from api.app import create_app

        super().__init__(
            create_app(settings), log_level="warning", lifespan="on", start_timeout=60.0
        )

    def __enter__(self) -> ThreadedServer:
        super().__enter__()
        return self
