"""Embedding: chunks in, vectors out, never the same text twice for the same model."""
