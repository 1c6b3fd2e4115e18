"""Words schemas use for business concepts: abbreviations, synonyms, domains.

General business vocabulary, not tuned to one schema: the abbreviations are the ones
legacy naming standards use (``cust``, ``qty``, ``amt``, ``dtl``), the synonyms the
everyday words people use for schema nouns.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z0-9]+", re.ASCII)

ABBREVIATIONS = {
    "acct": "account", "addr": "address", "adj": "adjustment", "agcy": "agency",
    "agrmt": "agreement", "alloc": "allocation", "amt": "amount", "apprv": "approval",
    "bal": "balance", "bnk": "bank", "btch": "batch", "cat": "catalog", "cd": "code",
    "chrg": "charge", "cls": "close", "cntct": "contact", "cntry": "country",
    "coll": "collection", "crdt": "credit", "crt": "create", "curr": "currency",
    "cust": "customer", "cyc": "cycle", "dept": "department", "desc": "description",
    "dtl": "detail", "dt": "date", "dunn": "dunning", "eff": "effective", "eml": "email",
    "emp": "employee", "exp": "expiry", "flg": "flag", "fx": "exchange", "hdr": "header",
    "inv": "invoice", "jur": "jurisdiction", "lmt": "limit", "ln": "line", "loc": "location",
    "ltr": "letter", "mgr": "manager", "msg": "message", "mstr": "master", "mthd": "method",
    "mthly": "monthly", "mtr": "meter", "nbr": "number", "nm": "name", "num": "number",
    "opn": "open", "ord": "order", "org": "organization", "owd": "owed", "pct": "percent",
    "phn": "phone", "pln": "plan", "pmt": "payment", "prc": "price", "prod": "product",
    "pstl": "postal", "qty": "quantity", "rgn": "region", "rsn": "reason", "rt": "rate",
    "rtd": "rated", "snt": "sent", "stat": "status", "strt": "start", "svc": "service",
    "tot": "total", "ts": "timestamp", "txn": "transaction", "typ": "type", "uom": "unit",
    "upd": "update", "usg": "usage", "usr": "user", "whse": "warehouse",
}  # fmt: skip

SYNONYMS: dict[str, tuple[str, ...]] = {
    "movie": ("film",), "film": ("movie",), "clerk": ("staff", "agent", "employee"),
    "employee": ("staff",), "worker": ("staff", "employee"), "client": ("customer",),
    "shopper": ("customer",), "buyer": ("customer",), "subscriber": ("customer", "account"),
    "purchaser": ("customer",), "bill": ("invoice",), "purchase": ("order",),
    "checkout": ("order",), "vendor": ("supplier",), "merchandise": ("product",),
    "goods": ("product",), "item": ("product",), "stock": ("inventory",),
    "depot": ("warehouse",), "parcel": ("shipment",), "delivery": ("shipment",),
    "dispatch": ("shipment", "shipped"), "refund": ("return",), "picture": ("image",),
    "photo": ("image",), "rating": ("review",), "case": ("ticket",), "tariff": ("rate", "plan"),
    "price": ("rate",), "consumption": ("usage",), "reading": ("usage", "meter"),
    "debt": ("collection", "owed"), "reminder": ("dunning", "letter"),
    "overdue": ("past", "due", "dunning"), "contract": ("agreement",),
    "representative": ("contact",), "fee": ("charge", "amount"), "money": ("amount", "payment"),
    "received": ("payment",), "settled": ("allocation", "payment"), "tax": ("tax",),
    "currency": ("curr",), "job": ("batch",), "run": ("batch", "job"),
    "credit": ("adjustment",), "debit": ("adjustment",), "csat": ("satisfaction", "survey"),
}  # fmt: skip

DOMAINS = {
    "customer": "customers", "account": "customers", "address": "customers",
    "product": "catalog", "supplier": "catalog", "category": "catalog",
    "order": "orders", "payment": "orders", "shipment": "orders", "invoice": "billing",
    "ticket": "support", "support": "support", "usage": "billing", "rate": "billing",
}  # fmt: skip


def expand_abbreviations(words: list[str]) -> list[str]:
    """Each abbreviated word replaced by its full form: ``["crdt", "lmt", "amt"]`` →
    ``["credit", "limit", "amount"]``; other words are kept."""
    return [w2 for w in words for w2 in ABBREVIATIONS.get(w.lower(), w).split()]


def words(text: str | None) -> list[str]:
    """Lower-case words, split on snake_case and camelCase boundaries: the same split
    for questions and for the identifiers they are matched against
    (``ReceiveBuffer`` → ``["receive", "buffer"]``, ``_keep_alive`` → ``["keep", "alive"]``)."""
    return [w.lower() for w in _WORD.findall(text or "")]
