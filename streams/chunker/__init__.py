"""Chunking: documents in, semantic chunks out (seed 004). Pure functions only."""
