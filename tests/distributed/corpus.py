"""One generated corpus for the end-to-end runs: a repository backfill (Python and
Markdown files, each with words no other file has), help-desk articles and a schema,
and the fixed questions whose answers the runs must agree on."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from devstack.pipeline import Pipeline
from events.base import Event
from events.files import FileChanged
from events.kb import KbArticleUpserted
from events.schema import Column, ForeignKey, TableObserved

REPO_NAME = "warehouse"
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r")
_VOWELS = ("a", "e", "i", "o", "u", "y", "ai", "ou", "ei", "oa")


def word(n: int) -> str:
    """A made-up word of three syllables, a different one for every ``n`` < 10,000:
    BM25 and the model both see it in one file only."""
    a, c = n % 100, n // 100
    b = (7 * n + 31) % 100
    return "".join(_ONSETS[x % 10] + _VOWELS[x // 10] for x in (a, b, c))


def python_file(n: int) -> str:
    w = word(n)
    return f'''"""Warehouse routines for the {w} depot."""

from dataclasses import dataclass


@dataclass
class {w.capitalize()}Ledger:
    """Balances held at the {w} depot, one entry per pallet."""

    entries: list[int]

    def total(self) -> int:
        """Sum of every {w} ledger entry."""
        return sum(self.entries)


def rebalance_{w}_inventory(items: list[int], limit: int) -> list[int]:
    """Move surplus {w} stock between shelves until no shelf holds more than limit."""
    out = []
    carry = 0
    for item in items:
        item += carry
        carry = max(0, item - limit)
        out.append(min(item, limit))
    return out


def audit_{w}_shipments(shipments: dict[str, int], promised: int) -> int:
    """Count the {w} shipments that arrived later than promised."""
    return sum(1 for days in shipments.values() if days > promised)
'''


def markdown_file(n: int) -> str:
    w = word(n)
    return f"""# The {w} runbook

What to do when the {w} relay misbehaves.

## Restarting the {w} relay

Drain the {w} queue, stop the relay service, wait for the last acknowledgement and
start it again. Traffic resumes within a minute.

## Rotating the {w} credentials

Issue a new {w} certificate, install it beside the old one, switch the relay over and
revoke the old certificate after a day.
"""


def _file(tenant: str, path: str, content: str, language: str) -> FileChanged:
    data = content.encode()
    return FileChanged(
        tenant=tenant,
        repo=REPO_NAME,
        path=path,
        content=content,
        sha256=hashlib.sha256(data).hexdigest(),
        language=language,
        size_bytes=len(data),
    )


ARTICLES = (
    (
        "Apollo fan is loud after a firmware update",
        "If the fan of your Apollo runs at full speed after updating the firmware, open the "
        "dashboard, choose Cooling and set the fan curve back to Automatic. A fan that stays "
        "loud at idle usually has dust on its intake: clean it with compressed air.",
        ("fan_noise", "troubleshooting"),
    ),
    (
        "Connecting the Apollo to a mining pool",
        "Enter the pool URL, your worker name and password under Settings, Pool. The "
        "Apollo reconnects within a minute and the pool dashboard shows the worker online.",
        ("pool_setup", "setup"),
    ),
    (
        "Apollo shows zero hashrate",
        "A hashrate of 0 H/s means the miner is not hashing: check that the pool is "
        "reachable, that the power supply delivers 12 V and that the hashboard cable is "
        "seated. Restart the miner service after each change.",
        ("not_hashing", "troubleshooting"),
    ),
    (
        "Replacing the power supply of the Apollo",
        "Switch the Apollo off, unplug the PCIe connectors, remove the four screws of the "
        "power supply bracket and fit the new unit. Use a supply of at least 600 W.",
        ("hardware", "power"),
    ),
    (
        "Recovering the Apollo wallet password",
        "The wallet password cannot be read back. Restore the wallet from its 24-word "
        "recovery phrase under Wallet, Restore, then choose a new password.",
        ("wallet", "account"),
    ),
    (
        "Updating the Apollo firmware from a USB stick",
        "Copy the firmware image to a FAT32 USB stick, plug it into the Apollo, hold the "
        "reset button for ten seconds and wait for the LED to turn green.",
        ("firmware", "update"),
    ),
)


def _article(tenant: str, n: int, title: str, content: str, intent: tuple[str, ...]) -> Event:
    return KbArticleUpserted(
        tenant=tenant,
        article_id=f"kb-{n}",
        title=title,
        url=f"https://help.example/kb-{n}",
        content=content,
        intent=intent,
        device=("Apollo",),
        last_updated=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _table(
    tenant: str, name: str, comment: str, columns: list[Column], fks: list[ForeignKey]
) -> Event:
    return TableObserved(
        tenant=tenant,
        database="shop",
        schema_name="public",
        table_name=name,
        database_type="postgres",
        columns=tuple(columns),
        primary_key=("id",),
        foreign_keys=tuple(fks),
        comment=comment,
        row_count_approx=1000,
        metadata_hash=hashlib.sha256(f"{name}:{comment}".encode()).hexdigest(),
    )


def _id(name: str = "id") -> Column:
    return Column(name=name, type="bigint", nullable=False)


def _fk(column: str, table: str) -> ForeignKey:
    return ForeignKey(
        name=f"{column}_fk",
        columns=(column,),
        references_table=f"shop.public.{table}",
        references_columns=("id",),
    )


def _tables(tenant: str) -> list[tuple[str, Event]]:
    specs = [
        ("customers", "People and companies who buy from the shop",
         [_id(), Column(name="email", type="text"), Column(name="full_name", type="text")], []),
        ("orders", "Orders placed by customers",
         [_id(), _id("customer_id"), Column(name="placed_at", type="timestamptz")],
         [_fk("customer_id", "customers")]),
        ("invoices", "Invoices billed for orders, with the amount due and when it is due",
         [_id(), _id("order_id"), Column(name="amount_due", type="numeric"),
          Column(name="due_date", type="date")],
         [_fk("order_id", "orders")]),
        ("shipments", "Parcels shipped for orders, with carrier and tracking number",
         [_id(), _id("order_id"), Column(name="carrier", type="text"),
          Column(name="tracking_number", type="text")],
         [_fk("order_id", "orders")]),
    ]  # fmt: skip
    return [(f"shop.public.{n}", _table(tenant, n, c, cols, fks)) for n, c, cols, fks in specs]


@dataclass(frozen=True)
class Corpus:
    """``python`` + ``markdown`` generated files, the articles and the tables of one
    tenant, produced as a source would produce them."""

    tenant: str
    python: int = 160
    markdown: int = 40

    @property
    def files(self) -> list[tuple[str, Event]]:
        out: list[tuple[str, Event]] = []
        for n in range(self.python):
            f = _file(self.tenant, f"src/depot_{n:03d}.py", python_file(n), "python")
            out.append((f.key, f))
        for n in range(self.markdown):
            m = self.python + n
            f = _file(self.tenant, f"docs/runbook_{n:03d}.md", markdown_file(m), "markdown")
            out.append((f.key, f))
        return out

    @property
    def articles(self) -> list[tuple[str, Event]]:
        return [
            (f"kb-{n}", _article(self.tenant, n, title, content, intent))
            for n, (title, content, intent) in enumerate(ARTICLES)
        ]

    @property
    def documents(self) -> int:
        return self.python + self.markdown

    async def produce(self, pipeline: Pipeline) -> None:
        """The backfill first, then the articles and the schema (as live changes)."""
        await pipeline.produce("files.changes", self.files)
        await pipeline.produce("kb.articles", self.articles)
        await pipeline.produce("schema.changes", _tables(self.tenant))


RELEVANT = 0.25
"""A result at or above this calibrated relevance answers the question. Below it are
near-ties among files that merely share a template (scores under 0.2 here), whose order
differs between two indexes without either being wrong; the answers above it (0.38 and
up here) must not."""


@dataclass(frozen=True)
class Question:
    """One request to the API, and the document that must answer it first."""

    method: str
    path: str
    params: dict[str, Any]
    expects: str


def questions(corpus: Corpus) -> list[Question]:
    """Fixed questions over every kind of knowledge the corpus holds."""

    def code(query: str, path: str, symbol: str) -> Question:
        params: dict[str, Any] = {"query": query, "limit": 3}
        return Question("GET", "/v1/code/search", params, f"{path}#{symbol}")

    def rebalance(n: int, words: str = "") -> Question:
        symbol = f"depot_{n:03d}.rebalance_{word(n)}_inventory"
        return code(f"rebalance {word(n)} inventory{words}", f"src/depot_{n:03d}.py", symbol)

    def audit(n: int) -> Question:
        symbol = f"depot_{n:03d}.audit_{word(n)}_shipments"
        return code(f"late {word(n)} shipments", f"src/depot_{n:03d}.py", symbol)

    def runbook(n: int, query: str, section: str) -> Question:
        w = word(corpus.python + n)
        heading = f"The {w} runbook > {section.format(w)}"
        return code(query.format(w), f"docs/runbook_{n:03d}.md", heading)

    def kb(intent: str, message: str, n: int) -> Question:
        body = {"intent": intent, "message": message, "metadata": {}}
        return Question("POST", "/v1/retrieve", body, f"https://help.example/kb-{n}")

    def table(query: str, name: str) -> Question:
        return Question("GET", "/v1/tables/search", {"query": query, "limit": 3}, name)

    return [
        rebalance(3, " between shelves"),
        rebalance(57),
        audit(111),
        audit(corpus.python - 1),
        runbook(5, "restart the {} relay", "Restarting the {} relay"),
        runbook(corpus.markdown - 2, "rotate {} credentials", "Rotating the {} credentials"),
        kb("troubleshooting", "my apollo fan got very loud since the update", 0),
        kb("not_hashing", "miner shows 0 H/s, not hashing at all", 2),
        kb("setup", "how do I point the apollo at my mining pool", 1),
        kb("account", "forgot the wallet password", 4),
        table("invoices with amount due", "shop.public.invoices"),
        table("shipments tracking number carrier", "shop.public.shipments"),
    ]


def gist(question: Question, body: dict[str, object]) -> list[str]:
    """What of an answer must be the same in every run: the results that answer the
    question (relevance at least :data:`RELEVANT`), best first, by id. Their scores
    differ a little between adapters; which documents answer, and in what order, not."""
    if question.path == "/v1/code/search":
        hits = body["results"]
        assert isinstance(hits, list)
        return [
            f"{h['path']}#{h['fully_qualified_name']}"
            for h in hits
            if h["relevance_score"] >= RELEVANT
        ]
    if question.path == "/v1/retrieve":  # only sources of 0.7 and more: all of them
        sources = body["sources_consulted"]
        assert isinstance(sources, list)
        return [*(s["url"] for s in sources), f"coverage {body['coverage']}"]
    tables = body["tables"]
    assert isinstance(tables, list)
    return [t["name"] for t in tables if t["relevance_score"] >= RELEVANT]
