"""Fuzzed end to end: hostile inputs on every surface, and what must come of them.

- ``hostile``: the hostile vocabulary (text, ids, metadata), as hypothesis strategies and
  as seeded-random draws;
- ``inputs``: one input per surface (HTTP, MCP, schema registry, raw records) and how each
  is built; ``mixes`` makes them (the worst by name, and seeded-random mixes of any size);
- ``answers``: an edge's answer sorted into a ledger entry; ``ledger``: what each input
  came to (accepted, refused, dead-lettered, landed) and the accounting over a pipeline;
- ``stack``: a real worker, projections and API on the test services, and the driver that
  sends inputs to them.

The fuzz tests (``tests/reliability/fuzz``, with hypothesis strategies of their own) and
the fuzz benchmark (``python -m bench.fuzz``) both drive them.
"""
