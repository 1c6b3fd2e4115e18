"""Kept for old habits: ``python scripts/run_tests.py ...`` is
``python -m devstack.run_tests ...`` (what ``make test`` runs)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devstack.run_tests import main

raise SystemExit(main(sys.argv[1:]))
