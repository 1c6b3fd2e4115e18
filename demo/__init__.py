"""``tribal demo``: the embedded stack fed with real-looking data, and the help-desk host
(seed 002's Contract 1) that the demo, the tests and the eval serve articles from."""

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
"""The demo's data, shipped in the wheel: ``schema.sql`` (the demo store's tables),
``legacy_billing.sql``, ``helpdesk.json`` (Contract 1 articles) and ``conversation.json``."""
