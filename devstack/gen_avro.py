"""Write ``avro/<area>/<Event>.avsc`` from the pydantic event models.

Run ``python -m devstack.gen_avro`` to (re)write every schema, or with ``--check`` to
exit 1 when a committed schema is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from events.avrogen import avro_schema, avsc_path
from events.catalog import EVENT_TYPES

ROOT = Path(__file__).resolve().parents[1] / "avro"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale: list[str] = []
    for event_type in EVENT_TYPES.values():
        path = avsc_path(ROOT, event_type)
        text = json.dumps(avro_schema(event_type), indent=2) + "\n"
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(path.relative_to(ROOT.parent)))
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for name in stale:
        print(("stale: " if check else "wrote: ") + name)
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
