"""The eval's logs keep real errors and drop grpc's spurious poller wake-ups."""

from __future__ import annotations

import logging
import sys

from bench.eval.__main__ import _GrpcPollerNoise


def _record(message: str, error: BaseException) -> logging.LogRecord:
    try:
        raise error
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, info)


def test_grpc_poller_wake_ups_are_dropped_and_other_errors_kept() -> None:
    noise = _GrpcPollerNoise()
    spurious = "Exception in callback PollerCompletionQueue._handle_events()"
    assert not noise.filter(_record(spurious, BlockingIOError(11, "unavailable")))
    assert noise.filter(_record(spurious, RuntimeError("real")))
    assert noise.filter(_record("Exception in callback other()", BlockingIOError(11, "x")))
