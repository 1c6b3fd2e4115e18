"""Kept for old habits: ``python scripts/services.py up|down|env|status`` is
``python -m devstack ...`` (:mod:`devstack.services`)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devstack.services import main

raise SystemExit(main())
