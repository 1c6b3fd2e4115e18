"""Conversation memory (seed 003): episodes, entity extraction, dedup, temporal facts,
summaries. Pure logic lives in small modules; :mod:`streams.memory.agents` wires it."""
