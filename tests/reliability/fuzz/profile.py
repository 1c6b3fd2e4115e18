"""How hard the fuzz suite tries: ``TRIBAL_FUZZ_PROFILE=ci`` (default, a few minutes in
all) or ``deep`` (ten times the examples, for a night). The profiles are also registered
with hypothesis as ``tribal-fuzz-ci`` / ``tribal-fuzz-deep`` (``--hypothesis-profile``).

The settings are applied per test, never loaded as hypothesis' default, so the rest of the
test suite keeps its own.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

SCALE = {"ci": 1, "deep": 10}[os.environ.get("TRIBAL_FUZZ_PROFILE", "ci")]
_QUIET = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.function_scoped_fixture,
    HealthCheck.large_base_example,
]

EDGE = settings(
    max_examples=120 * SCALE, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
"""In-process edges (routes, MCP server, worker handler): cheap examples."""

OPENAPI = settings(
    max_examples=25 * SCALE, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
"""Per operation of the OpenAPI document, per generation mode."""

PIPELINE = settings(
    max_examples=4 * SCALE,
    deadline=None,
    suppress_health_check=_QUIET,
    print_blob=True,
    # One example drives the whole pipeline for a minute: report the failing mix as drawn
    # instead of shrinking it for an hour (``deep`` shrinks).
    phases=[Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if SCALE > 1 else []),
)
"""End to end: each example is a mix of every surface thrown at a running pipeline."""

settings.register_profile("tribal-fuzz-ci", EDGE)
settings.register_profile("tribal-fuzz-deep", settings(EDGE, max_examples=EDGE.max_examples * 10))
