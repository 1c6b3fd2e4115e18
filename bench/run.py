"""What every benchmark's ``main`` does alike: its arguments, its scratch directory."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from devstack.pipeline import REPO

RESULTS = REPO / "bench-results"


class Arguments(argparse.ArgumentParser):
    """``python -m bench.<name>``'s options: ``--out`` (``bench-results/<name>.json``),
    the run's ``sizes`` (``option=(default, quick)``, each an int option set to its quick
    value by ``--quick``) and ``--quick`` itself when there are sizes or ``quick`` says
    what the tiny run is."""

    def __init__(
        self, name: str, doc: str | None, quick: str = "", **sizes: tuple[int, int]
    ) -> None:
        super().__init__(
            prog=f"python -m bench.{name}",
            description=doc,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        self.add_argument("--out", type=Path, default=RESULTS / f"{name}.json")
        self.quick_sizes = {option: small for option, (_, small) in sizes.items()}
        for option, (default, small) in sizes.items():
            flag = f"--{option.replace('_', '-')}"
            self.add_argument(flag, type=int, default=default, help=f"--quick: {small}")
        if quick or sizes:
            self.add_argument("--quick", action="store_true", help=quick or "a tiny run")

    def parse(self, argv: Sequence[str] | None) -> argparse.Namespace:
        """The options, the sizes at their quick values under ``--quick``."""
        args = self.parse_args(argv)
        if getattr(args, "quick", False):
            for option, small in self.quick_sizes.items():
                setattr(args, option, small)
        return args


@contextlib.contextmanager
def scratch(name: str, *, keep: bool = False, keep_failed: bool = False) -> Iterator[Path]:
    """A fresh directory for one run, removed afterwards unless ``keep`` (or, with
    ``keep_failed``, unless the run failed: its processes' logs are there).

    World-searchable: as root, the embedded PostgreSQL runs as an unprivileged account
    that must reach its data directory below it.
    """
    path = Path(tempfile.mkdtemp(prefix=f"tribal-bench-{name}-"))
    path.chmod(0o755)
    try:
        yield path
    except BaseException:
        keep = keep or keep_failed
        raise
    finally:
        if keep:
            print(f"scratch kept: {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)
