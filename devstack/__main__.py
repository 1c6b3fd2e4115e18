"""``python -m devstack up|down|env|status``: the background services of this machine."""

from devstack.services import main

raise SystemExit(main())
