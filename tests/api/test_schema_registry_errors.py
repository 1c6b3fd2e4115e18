"""Schema-registry errors quote what was sent; what was sent may not be valid UTF-8."""

from __future__ import annotations

import json

from api.schema_registry import _error


def test_an_error_quoting_a_lone_surrogate_is_still_a_json_reply_with_its_code() -> None:
    reply = _error(409, 409, "record R0 cannot be read as 0\ud800")
    assert reply.status_code == 409
    body = json.loads(bytes(reply.body))
    assert body == {"error_code": 409, "message": "record R0 cannot be read as 0\\ud800"}
