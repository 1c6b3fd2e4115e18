"""Tribal's benchmarks: what ``make bench``, ``make bench-load`` and ``make eval`` measure.

    python -m bench                  # every benchmark of ``make bench``, one after another
    python -m bench live fuzz        # only those named
    python -m bench.<name> --help    # one benchmark, its own options

Each benchmark module has ``main(argv) -> int``, writes ``bench-results/<name>.json``
(:func:`bench.report.save`) and prints a table. The shared pieces: the arguments and
scratch directories (:mod:`bench.run`), machine and results (:mod:`bench.report`),
percentiles (:mod:`bench.stats`), the real pipeline as processes (:mod:`bench.stack`) and
the changes sent through it (:mod:`bench.changes`). The event backbone is
:mod:`bench.backbone`, sustained load and capacity :mod:`bench.load`, retrieval and
memory quality :mod:`bench.eval`. Services come from :mod:`devstack`; nothing here is
imported by the product or the tests.
"""
