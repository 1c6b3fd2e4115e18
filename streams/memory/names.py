"""Name knowledge shared by the local rules and the dedup rules."""

from __future__ import annotations

NICKNAMES: dict[str, str] = {
    "bob": "robert", "bobby": "robert", "rob": "robert", "robbie": "robert",
    "bill": "william", "billy": "william", "will": "william", "liz": "elizabeth",
    "beth": "elizabeth", "lizzie": "elizabeth", "kate": "katherine", "katie": "katherine",
    "jim": "james", "jimmy": "james", "mike": "michael", "tom": "thomas",
    "dave": "david", "dan": "daniel", "danny": "daniel", "sam": "samuel",
    "alex": "alexander", "chris": "christopher", "jen": "jennifer", "jenny": "jennifer",
    "meg": "margaret", "peggy": "margaret", "dick": "richard", "rick": "richard",
    "tony": "anthony", "joe": "joseph", "matt": "matthew", "nick": "nicholas",
}  # fmt: skip
"""Nickname → formal first name (lower case)."""

FIRST_NAMES: frozenset[str] = frozenset(
    n.capitalize()
    for n in (
        *NICKNAMES, *NICKNAMES.values(), "alice", "dana", "maria", "john", "jane", "sarah",
        "emma", "olivia", "priya", "carlos", "wei", "fatima", "lucas", "noah", "mia",
        "sofia", "ahmed", "yuki", "anna", "laura", "peter", "paul", "mark", "susan",
    )
)  # fmt: skip
"""Capitalised first names the local rules recognise as people."""


def canonical_first_name(name: str) -> str:
    """``"Bob Smith"`` → ``"robert"``: the formal form of the first token."""
    first = name.split()[0].casefold() if name.split() else ""
    return NICKNAMES.get(first, first)
