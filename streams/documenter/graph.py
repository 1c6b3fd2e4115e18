"""The foreign-key graph of one database and deterministic community detection.

Communities come from Louvain modularity optimisation (local moves, then aggregation)
over an undirected weighted graph: one edge per foreign key plus a weaker edge between
tables that share a name prefix (``auth_user``/``auth_group``). Modularity discounts
edges to high-degree nodes, so one central table (``customers``) does not glue every
table that references it into a single domain. Iteration order is sorted, so the same
graph always gives the same communities.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

PREFIX_WEIGHT = 0.5

Weights = dict[str, dict[str, float]]


def undirected(nodes: Iterable[str], edges: Iterable[tuple[str, str, float]]) -> Weights:
    """Symmetric weights; self-loops and edges to unknown nodes are ignored."""
    graph: Weights = {n: {} for n in nodes}
    for a, b, w in edges:
        if a == b or a not in graph or b not in graph:
            continue
        graph[a][b] = graph[a].get(b, 0.0) + w
        graph[b][a] = graph[b].get(a, 0.0) + w
    return graph


def _local_moves(graph: Weights, resolution: float) -> dict[str, str]:
    community = {n: n for n in graph}
    degree = {n: sum(nb.values()) for n, nb in graph.items()}
    total = sum(degree.values())
    if total == 0:
        return community
    tot: dict[str, float] = dict(degree)
    improved = True
    while improved:
        improved = False
        for node in sorted(graph):
            here = community[node]
            links: dict[str, float] = defaultdict(float)
            for nb, w in graph[node].items():
                if nb != node:
                    links[community[nb]] += w
            tot[here] -= degree[node]
            best, best_gain = (
                here,
                links.get(here, 0.0) - resolution * tot[here] * degree[node] / total,
            )
            for cand in sorted(links):
                gain = links[cand] - resolution * tot[cand] * degree[node] / total
                if gain > best_gain + 1e-12:
                    best, best_gain = cand, gain
            tot[best] += degree[node]
            if best != here:
                community[node] = best
                improved = True
    return community


def communities(graph: Weights, resolution: float = 1.0) -> list[frozenset[str]]:
    """Louvain communities of ``graph``, sorted by their smallest member."""
    members: dict[str, set[str]] = {n: {n} for n in graph}
    level = graph
    while True:
        moved = _local_moves(level, resolution)
        groups: dict[str, set[str]] = defaultdict(set)
        for node, comm in moved.items():
            groups[comm] |= members[node]
        if len(groups) == len(level):
            break
        label = {comm: min(nodes) for comm, nodes in groups.items()}
        members = {label[c]: nodes for c, nodes in groups.items()}
        agg: Weights = {label[c]: {} for c in groups}
        for a, nbs in level.items():
            for b, w in nbs.items():
                # Inner edges stay as a self-loop: they are part of the community's degree.
                ca, cb = label[moved[a]], label[moved[b]]
                agg[ca][cb] = agg[ca].get(cb, 0.0) + w
        level = agg
    return sorted((frozenset(m) for m in members.values()), key=min)


def name_tokens(table: str) -> list[str]:
    """Lower-case words of a table name, each singularised naively."""
    return [_singular(t) for t in table.lower().split("_") if t]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes")) and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def prefix_edges(names: Mapping[str, str], clique_max: int = 8) -> list[tuple[str, str, float]]:
    """Weak edges between tables (fqn → bare name) whose names share their first word.

    Small groups become cliques; big ones (``dim_*`` in a warehouse) a star around
    their first member, so the edge count stays linear.
    """
    by_prefix: dict[str, list[str]] = defaultdict(list)
    for fqn, name in names.items():
        tokens = name_tokens(name)
        if tokens:
            by_prefix[tokens[0]].append(fqn)
    edges: list[tuple[str, str, float]] = []
    for group in by_prefix.values():
        ordered = sorted(group)
        if len(ordered) <= clique_max:
            edges.extend(
                (a, b, PREFIX_WEIGHT) for i, a in enumerate(ordered) for b in ordered[i + 1 :]
            )
        else:
            edges.extend((ordered[0], b, PREFIX_WEIGHT) for b in ordered[1:])
    return edges
