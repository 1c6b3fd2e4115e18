"""The retrieval-quality harness (issue 7): labelled sets in ``tests/eval/``, run with
``make eval`` or ``python -m bench.eval``."""
