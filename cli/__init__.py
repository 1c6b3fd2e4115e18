"""The ``tribal`` command line: starts the processes and asks them, from the shell."""
