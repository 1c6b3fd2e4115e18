"""Seed 001's ``QueryInterpretation``: what a question asks for, in the words a schema uses.

Legacy schemas abbreviate (``cust_mstr.crdt_lmt_amt``) and people paraphrase ("clerk"
for ``staff``). The interpretation keeps the query's concepts, then expands them with
singular/plural forms, the abbreviations schemas use for them (and the reverse), and
common business synonyms. The expanded terms feed the lexical side of the search; the
vector side embeds the question as asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from streams.vocabulary import ABBREVIATIONS, DOMAINS, SYNONYMS, words

STOP = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in",
        "is", "it", "me", "of", "on", "or", "show", "the", "to", "what", "where", "which",
        "who", "with", "do", "does", "data", "table", "tables", "find", "list", "all", "my",
        "we", "our", "each", "per", "their", "its", "that", "this", "there", "get", "can",
    }
)  # fmt: skip
_RELATIONAL = frozenset(
    {"join", "joins", "joined", "between", "relationship", "relationships", "related", "link",
     "linked", "connect", "connected", "relate", "relates"}
)  # fmt: skip
_FULL_OF: dict[str, str] = {}
for _abbr, _full in ABBREVIATIONS.items():
    _FULL_OF.setdefault(_full, _abbr)


@dataclass(frozen=True)
class Interpretation:
    concepts: tuple[str, ...]
    expanded_terms: tuple[str, ...]
    domain_hint: str | None
    is_relationship_query: bool

    def lexical_query(self, query: str) -> str:
        """The query text for keyword search: the question plus every expanded term."""
        return " ".join([query, *self.expanded_terms])


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")) and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def expand(concept: str) -> list[str]:
    base = singular(concept)
    out = [base, base + "s"] if base != concept else [base + "s"]
    full = ABBREVIATIONS.get(base)
    if full is not None:
        out += full.split()
    abbr = _FULL_OF.get(base)
    if abbr is not None:
        out.append(abbr)
    for term in SYNONYMS.get(base, ()):
        out += term.split()
        abbr = _FULL_OF.get(term)
        if abbr is not None:
            out.append(abbr)
    return out


def interpret(query: str, domain: str | None = None) -> Interpretation:
    """Concepts, expanded terms, domain hint and relationship flag of a query."""
    tokens = words(query)
    concepts = [w for w in dict.fromkeys(tokens) if w not in STOP and len(w) > 1]
    seen = set(concepts)
    expanded: list[str] = []
    for c in concepts:
        for term in expand(c):
            if term not in seen:
                seen.add(term)
                expanded.append(term)
    hint = domain
    if hint is None:
        votes = [DOMAINS[t] for t in [*concepts, *expanded] if t in DOMAINS]
        hint = max(set(votes), key=votes.count) if votes else None
    return Interpretation(
        concepts=tuple(concepts),
        expanded_terms=tuple(expanded),
        domain_hint=hint,
        is_relationship_query=bool(_RELATIONAL & set(tokens)),
    )
