"""Logs, traces and metrics with seed 003's names, shared by every Tribal process."""
