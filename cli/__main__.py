"""``python -m cli``: the ``tribal`` command."""

from cli.main import main

main()
