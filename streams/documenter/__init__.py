"""The documenter: schema snapshots in, table and domain documentation out (seed 001).

``planner`` groups tables into domains, ``state`` folds snapshots into a per-database
state and says what to (re)document, ``documenter`` asks the LLM port, ``agent`` wires
it to Faust and ``export`` writes the docs tree and its manifest.
"""
