"""Fuzzed end to end: generated hostile inputs on every surface, and what must come of them.

The inputs, the ledger and the stack live in :mod:`devstack.fuzz` (the fuzz benchmark
drives them too); here are the hypothesis ``strategies`` that make inputs, the
``profile`` (how many examples) and the tests.
"""
