"""Help-desk corpora read from documentation that Debian packages install.

A corpus file (``tests/eval/corpora/kb/<name>.json``) names a Debian package and the
HTML pages it installs; :func:`articles` turns those pages into help-desk articles as a
host's Contract 1 listing ships them (``id``, ``title``, ``url``, ``content``,
``metadata``), so the eval serves them through :mod:`demo.kb_host` and reads them with
the help-desk source, as a user's help desk is read. The documentation text is never
copied into this repository: it is read from the installed files at run time, and
:func:`install` installs the package with ``apt-get`` when the files are missing.

An article is what a help desk calls one: a section answering one topic. Pages are cut
at the headings of ``split_level`` (``2``: the sections of a DocBook chapter, the
questions of a FAQ, the sections of a Sphinx page); a page whose title heading is of
that level is one article; text under a chapter heading before its first section is
an article of its own when it says something (``min_chars``); a section longer than
``max_chars`` is cut again at its subsections. Ids are ``<corpus>/<file stem>`` for a
page and ``<corpus>/<file stem>#<section id>`` for a section of a page; urls keep the
page's path under ``base_url`` (the manual's public address) with the section's
anchor. Content is markdown: subsection headings, lists, tables, code blocks, and
links as ``[text](url)`` (links inside the manual resolved against ``base_url``).

    python -m bench.eval.corpora_kb --install     # what ``make eval-deps`` runs
    python -m bench.eval.corpora_kb --validate    # labels against the loaded articles
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from pydantic import BaseModel, ConfigDict, Field, field_validator

ROOT = Path(__file__).resolve().parents[2]
KB_CORPORA = ROOT / "tests" / "eval" / "corpora" / "kb"

SPLIT_LEVEL = 2
MIN_CHARS = 400
MAX_CHARS = 12_000
PARAPHRASE_SHARE = 0.7
MIN_QUERIES = 40
MIN_UNANSWERABLE = 5

VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
     "source", "track", "wbr"}
)  # fmt: skip
SKIP_TAGS = frozenset(
    {"head", "script", "style", "nav", "img", "button", "form", "input", "select", "textarea"}
)
SKIP_CLASSES = frozenset(
    {"navheader", "navfooter", "docnav", "toc", "list-of-tables", "list-of-figures",
     "list-of-examples", "headerlink", "sphinxsidebar", "related", "footer", "breadcrumbs",
     "admonition_header"}
)  # fmt: skip
SKIP_IDS = frozenset({"title", "searchbox"})
ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important"})
BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "body", "address", "blockquote", "figure",
     "figcaption", "center"}
)  # fmt: skip
NUMBER = re.compile(r"^(?:(?:Chapter|Appendix)\s+(?:[A-Z]|\d+)\.?\s+|(?:[A-Z]|\d+)(?:\.\d+)*\.\s+)")
"""A section number before a heading's words: 'Chapter 8. ', 'A.1. ', '5.10.2. '."""
_PRE = "\x00P{}\x00"
_HEADING = "\x01H{}\x01"
_MARK = re.compile(r"\x01H(\d+)\x01")
_PRE_MARK = re.compile(r"\x00P(\d+)\x00")


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str]
    children: list[_Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _Tree(HTMLParser):
    """A lenient element tree of one page (generated XHTML/HTML5 closes its elements)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#root", {})
        self._stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self._stack[-1].children.append(node)
        if tag not in VOID:
            self._stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._stack[-1].children.append(_Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._stack) - 1, 0, -1):
            if self._stack[i].tag == tag:
                del self._stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self._stack[-1].children.append(data)


def _parse(text: str) -> _Node:
    tree = _Tree()
    tree.feed(text)
    tree.close()
    return tree.root


def _find(node: _Node, wanted: Any) -> _Node | None:
    if wanted(node):
        return node
    for child in node.children:
        if isinstance(child, _Node) and (hit := _find(child, wanted)) is not None:
            return hit
    return None


def _text(node: _Node | str) -> str:
    if isinstance(node, str):
        return node
    if node.tag in SKIP_TAGS or node.classes & SKIP_CLASSES:
        return ""
    return "".join(_text(c) for c in node.children)


def _anchor(node: _Node) -> str:
    """The first id in a heading: its own, or that of an ``<a>`` inside it."""
    if node.attrs.get("id"):
        return node.attrs["id"]
    for child in node.children:
        if isinstance(child, _Node):
            if child.tag == "a" and (child.attrs.get("id") or child.attrs.get("name")):
                return child.attrs.get("id") or child.attrs["name"]
            if found := _anchor(child):
                return found
    return ""


def clean_title(text: str) -> str:
    """A heading as a help desk titles it: no section number, no permalink sign."""
    text = " ".join(text.replace("\u00b6", " ").split())
    return NUMBER.sub("", text).strip()


@dataclass(frozen=True)
class Heading:
    level: int
    anchor: str
    title: str


class _Markdown:
    """One page's content as markdown, its headings replaced by markers (:data:`_HEADING`)."""

    def __init__(self, page_url: str) -> None:
        self.page_url = page_url
        self.headings: list[Heading] = []
        self.pre: list[str] = []
        self.notes: list[tuple[str, str]] = []
        """Footnotes (their mark, their text): placed with the article citing them."""

    def render(self, node: _Node | str, section: str = "") -> str:
        if isinstance(node, str):
            return re.sub(r"\s+", " ", node)
        tag, classes = node.tag, node.classes
        if tag in SKIP_TAGS or classes & SKIP_CLASSES or node.attrs.get("id") in SKIP_IDS:
            return ""
        section = node.attrs.get("id", section) if tag in ("section", "div") else section
        if re.fullmatch(r"h[1-6]", tag):
            title = clean_title(_text(node))
            if not title:
                return ""
            self.headings.append(Heading(int(tag[1]), _anchor(node) or section, title))
            return "\n\n" + _HEADING.format(len(self.headings) - 1) + "\n\n"
        if classes & ADMONITIONS:
            return self._admonition(node, section)
        if classes & {"footnotes", "footnote-list"}:  # DocBook, Sphinx
            for child in node.children:
                if isinstance(child, _Node) and "footnote" in child.classes:
                    note = _squeeze(self.render(child, section))
                    if mark := re.match(r"\[\d+\]", note):
                        self.notes.append((mark.group(), note))
            return ""
        if tag == "pre":
            self.pre.append(_text(node).strip("\n"))
            return "\n\n" + _PRE.format(len(self.pre) - 1) + "\n\n"
        inner = "".join(self.render(c, section) for c in node.children)
        if tag == "br":
            return "\n"
        if tag == "hr":
            return "\n\n"
        if tag == "a":
            return self._link(node, inner)
        if tag in ("code", "tt", "kbd", "samp") and "\n" not in inner and "\x00" not in inner:
            stripped = inner.strip()
            return f"`{stripped}`" if stripped else inner
        if tag in ("ul", "ol"):
            items = [c for c in node.children if isinstance(c, _Node) and c.tag == "li"]
            lines = []
            for n, li in enumerate(items, 1):
                body = _squeeze(self.render(li, section))
                bullet = f"{n}." if tag == "ol" else "-"
                lines.append(f"{bullet} " + body.replace("\n\n", "\n").replace("\n", "\n  "))
            return "\n\n" + "\n".join(lines) + "\n\n"
        if tag == "dt":
            return "\n\n" + inner.strip() + "\n"
        if tag == "dd":
            return "\n" + inner.strip() + "\n\n"
        if tag == "table":
            return self._table(node, section)
        if tag in BLOCKS or tag in ("li", "dl", "caption"):
            return "\n\n" + inner + "\n\n"
        return inner

    def _admonition(self, node: _Node, section: str) -> str:
        kind = (node.classes & ADMONITIONS).pop().capitalize()
        parts = []
        for child in node.children:
            if isinstance(child, _Node) and (
                re.fullmatch(r"h[1-6]", child.tag) or child.classes & {"admonition_header"}
            ):
                continue  # the "Note" / "Tip" label: said once below
            parts.append(self.render(child, section))
        body = _squeeze("".join(parts))
        return f"\n\n{kind}: {body}\n\n" if body else ""

    def _link(self, node: _Node, inner: str) -> str:
        text = inner.strip()
        href = node.attrs.get("href", "")
        if not text or not href or href.startswith(("javascript:", "mailto:")):
            return inner
        if node.attrs.get("role") == "doc-backlink" or re.fullmatch(r"\[\d+\]", text):
            return text  # a footnote mark: its number, not a link
        url = urljoin(self.page_url, href)
        if url == text or text.startswith(("http://", "https://")):
            return text
        return f"[{text}]({url})"

    def _table(self, node: _Node, section: str) -> str:
        rows: list[list[str]] = []
        header = False

        def walk(n: _Node) -> None:
            nonlocal header
            for c in n.children:
                if not isinstance(c, _Node):
                    continue
                if c.tag == "tr":
                    cells = [
                        x for x in c.children if isinstance(x, _Node) and x.tag in ("td", "th")
                    ]
                    if not rows and cells and all(x.tag == "th" for x in cells):
                        header = True
                    rows.append(
                        [_squeeze(self.render(x, section)).replace("\n", " ") for x in cells]
                    )
                elif c.tag != "table":
                    walk(c)

        walk(node)
        rows = [r for r in rows if any(r)]
        if not rows:
            return ""
        lines = ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        if header:
            lines.insert(1, "|" + "---|" * len(rows[0]))
        return "\n\n" + "\n".join(lines) + "\n\n"


def _squeeze(text: str) -> str:
    """Spaces collapsed on each line, blank lines to one, ends stripped."""
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


@dataclass
class _Section:
    heading: Heading | None
    parts: list[str] = field(default_factory=list)


class Source(BaseModel):
    """How one corpus reads its package's pages: the ``source`` of its corpus file, with
    the corpus's ``name``. What the file leaves out takes the default given here."""

    model_config = ConfigDict(frozen=True)

    name: str
    package: str = Field(validation_alias="debian_package")
    root: Path
    paths: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    base_url: str
    split_level: int = SPLIT_LEVEL
    min_chars: int = MIN_CHARS
    max_chars: int = MAX_CHARS
    intent: tuple[str, ...] = ("docs",)
    device: tuple[str, ...] = ()
    author: str | None = None

    @field_validator("base_url")
    @classmethod
    def _ends_in_slash(cls, url: str) -> str:
        """One ``/`` at the end, so that a page's path can follow it."""
        return url.rstrip("/") + "/"

    @classmethod
    def of(cls, corpus: Mapping[str, Any]) -> Source:
        s = corpus["source"]
        if s.get("format", "html") != "html":
            raise ValueError(f"{corpus['name']}: only html sources are read")
        return cls.model_validate({**s, "name": corpus["name"]})

    def files(self) -> list[Path]:
        found: set[Path] = set()
        for pattern in self.paths:
            found.update(Path(p) for p in glob.glob(str(self.root / pattern)))
        skip = set(self.exclude)
        return sorted(p for p in found if p.is_file() and p.name not in skip)


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".en.html", ".html", ".htm"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _content_root(tree: _Node) -> _Node:
    main = _find(tree, lambda n: n.attrs.get("role") == "main" or "body" in n.classes)
    return main or _find(tree, lambda n: n.tag == "body") or tree


def _sections(text: str, headings: Sequence[Heading]) -> list[_Section]:
    """The page split at every heading: text before the first heading has none."""
    out = [_Section(None)]
    pos = 0
    for m in _MARK.finditer(text):
        out[-1].parts.append(text[pos : m.start()])
        out.append(_Section(headings[int(m.group(1))]))
        pos = m.end()
    out[-1].parts.append(text[pos:])
    return out


def _body(sections: Sequence[_Section], top: int, pre: Sequence[str]) -> str:
    """Markdown of sections under a heading of level ``top``: subheadings rebased to ``##``."""
    chunks: list[str] = []
    for s in sections:
        if s.heading is not None and s.heading.level > top:
            chunks.append("\n\n" + "#" * max(2, s.heading.level - top + 1) + " " + s.heading.title)
        chunks.extend(s.parts)
    return _fill(_squeeze("".join(chunks)), pre)


def _fill(text: str, pre: Sequence[str]) -> str:
    """Code blocks put back where their markers stand."""
    return _PRE_MARK.sub(lambda m: "```\n" + pre[int(m.group(1))] + "\n```", text)


@dataclass
class _Article:
    anchor: str
    title: str
    level: int
    sections: list[_Section]


def _group(sections: Sequence[_Section], level: int) -> tuple[list[_Section], list[_Article]]:
    """Sections before the first heading of ``level`` (or above it), and one group per such
    heading with everything under it."""
    lead: list[_Section] = []
    groups: list[_Article] = []
    for s in sections:
        h = s.heading
        if h is not None and h.level <= level:
            groups.append(_Article(h.anchor, h.title, h.level, [s]))
        elif groups:
            groups[-1].sections.append(s)
        else:
            lead.append(s)
    return lead, groups


def _page_articles(src: Source, path: Path) -> list[tuple[str, str, str]]:
    """(anchor, title, markdown) of each article of one page; anchor "" for the page.
    A footnote goes to the article that cites it."""
    rel = path.relative_to(src.root).as_posix()
    md = _Markdown(src.base_url + rel)
    text = md.render(_content_root(_parse(path.read_text(encoding="utf-8", errors="replace"))))
    out = []
    for anchor, title, body in _cut(src, path, md, text):
        cited = [_fill(note, md.pre) for mark, note in md.notes if mark in body]
        out.append((anchor, title, "\n\n".join([body, *cited])))
    return out


def _cut(src: Source, path: Path, md: _Markdown, text: str) -> Iterator[tuple[str, str, str]]:
    sections = _sections(text, md.headings)
    first = next((s.heading for s in sections if s.heading is not None), None)
    if first is None:
        yield "", clean_title(path.stem), _body(sections, 1, md.pre)
        return
    lead, groups = _group(sections, src.split_level)
    heads = [g for g in groups if g.level < src.split_level]  # the chapter's own title
    subs = [g for g in groups if g.level >= src.split_level]
    intro = lead + (heads[0].sections if heads else [])
    title, level = (heads[0].title, heads[0].level) if heads else (first.title, first.level)
    pieces: list[tuple[str, str, int, list[_Section]]] = []
    if not subs:
        pieces.append(("", title, level, intro))
    elif not heads and len(subs) == 1 and not _body(lead, level, md.pre):
        g = subs[0]  # the page is this one section
        pieces.append(("", g.title, g.level, g.sections))
    else:
        if len(_body(intro, level, md.pre)) >= src.min_chars:
            pieces.append(("", title, level, intro))
        rest = [g for g in groups if not heads or g is not heads[0]]
        pieces += [(g.anchor, g.title, g.level, g.sections) for g in rest]
    for anchor, title, level, secs in pieces:
        if len(_body(secs, level, md.pre)) > src.max_chars:
            yield from _split_long(src, anchor, title, level, secs, md.pre)
        else:
            yield anchor, title, _body(secs, level, md.pre)


def _split_long(
    src: Source, anchor: str, title: str, level: int, secs: list[_Section], pre: Sequence[str]
) -> Iterator[tuple[str, str, str]]:
    subs = [s.heading.level for s in secs[1:] if s.heading is not None]
    if not subs:
        yield anchor, title, _body(secs, level, pre)
        return
    lead, groups = _group(secs[1:], min(subs))
    intro = _body([secs[0], *lead], level, pre)
    if len(intro) >= src.min_chars:
        yield anchor, title, intro
    for g in groups:
        sub = g.title if len(g.title.split()) >= 4 else f"{title}: {g.title}"
        if len(_body(g.sections, g.level, pre)) > src.max_chars:
            yield from _split_long(src, g.anchor, sub, g.level, g.sections, pre)
        else:
            yield g.anchor, sub, _body(g.sections, g.level, pre)


def _stamp(path: Path) -> str:
    when = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
    return when.isoformat().replace("+00:00", "Z")


def missing(corpus: Mapping[str, Any]) -> bool:
    """Whether the corpus's pages are not installed."""
    return not Source.of(corpus).files()


def install(corpus: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[str]:
    """Install with ``apt-get`` the Debian packages of the corpora whose pages are missing
    (``apt-get update`` first only if the package is unknown); nothing when all are there.
    Returns the packages installed."""
    corpora = [corpus] if isinstance(corpus, Mapping) else list(corpus)
    packages = sorted({Source.of(c).package for c in corpora if missing(c)})
    if not packages:
        return []
    apt = shutil.which("apt-get")
    if apt is None:
        raise RuntimeError(
            f"the eval's help-desk corpora need the Debian package(s) {' '.join(packages)}, "
            "and apt-get is not available here: install them on a Debian or Ubuntu machine "
            f"(apt-get install --no-install-recommends {' '.join(packages)})"
        )
    prefix: list[str] = []
    if os.geteuid() != 0:
        sudo = shutil.which("sudo")
        if sudo is None:
            raise RuntimeError(f"installing {' '.join(packages)} needs root (or sudo)")
        prefix = [sudo, "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = [*prefix, apt, "install", "-y", "-q", "--no-install-recommends", *packages]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:  # a fresh machine has no package lists yet
        subprocess.run([*prefix, apt, "update", "-q"], env=env, capture_output=True, check=False)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    still = [Source.of(c).name for c in corpora if missing(c)]
    if still:
        raise RuntimeError(f"installed {' '.join(packages)} but no pages found for {still}")
    return packages


def installed_version(package: str) -> str | None:
    """The installed version of a Debian package (``None`` without dpkg or the package)."""
    dpkg = shutil.which("dpkg-query")
    if dpkg is None:
        return None
    done = subprocess.run(
        [dpkg, "-W", "-f=${Status}\t${Version}", package],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    status, _, version = done.stdout.partition("\t")
    if done.returncode != 0 or not status.endswith(" installed"):
        return None
    return version.strip() or None


def articles(corpus: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The corpus's help-desk articles as a Contract 1 listing ships them (installing its
    package first if its pages are missing)."""
    install(corpus)
    src = Source.of(corpus)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in src.files():
        rel = path.relative_to(src.root).as_posix()
        for anchor, title, body in _page_articles(src, path):
            article_id = f"{src.name}/{_stem(path)}" + (f"#{anchor}" if anchor else "")
            if article_id in seen or not body.strip():
                continue
            seen.add(article_id)
            metadata: dict[str, Any] = {
                "intent": list(src.intent), "device": list(src.device),
                "last_updated": _stamp(path),
            }  # fmt: skip
            if src.author:
                metadata["author"] = src.author
            out.append({
                "id": article_id, "title": title,
                "url": src.base_url + rel + (f"#{anchor}" if anchor else ""),
                "content": body, "metadata": metadata,
            })  # fmt: skip
    return out


def load(name: str) -> dict[str, Any]:
    """The corpus file ``tests/eval/corpora/kb/<name>.json``."""
    spec: dict[str, Any] = json.loads((KB_CORPORA / f"{name}.json").read_text())
    return spec


def corpora() -> list[dict[str, Any]]:
    """Every help-desk corpus file read from a Debian package."""
    specs = [load(p.stem) for p in sorted(KB_CORPORA.glob("*.json"))]
    return [s for s in specs if "debian_package" in s.get("source", {})]


def validate(corpus: Mapping[str, Any], loaded: Sequence[Mapping[str, Any]] | None = None) -> None:
    """Raise ``ValueError`` naming every problem: an expected id no loaded article has,
    duplicate ids or urls, too few questions, paraphrases or unanswerable questions, and
    an installed package whose version is not the one the questions were written for."""
    rows = list(loaded) if loaded is not None else articles(corpus)
    source = corpus["source"]
    wanted, found = source.get("version"), installed_version(source["debian_package"])
    version = (
        [f"labelled on {source['debian_package']} {wanted}, {found} is installed"]
        if wanted and found and found != wanted
        else []
    )
    ids = [a["id"] for a in rows]
    urls = [a["url"] for a in rows]
    problems = version + [
        f"duplicate article id {i}" for i in sorted({i for i in ids if ids.count(i) > 1})
    ]
    problems += [f"duplicate url {u}" for u in sorted({u for u in urls if urls.count(u) > 1})]
    known = set(ids)
    queries = corpus["queries"]
    questions = [q["q"] for q in queries]
    problems += [
        f"asked twice: {q}" for q in sorted({q for q in questions if questions.count(q) > 1})
    ]
    for q in queries:
        kind = q.get("kind")
        if kind not in ("literal", "paraphrase", "unanswerable"):
            problems.append(f"unknown kind {kind!r}: {q['q']}")
        if (kind == "unanswerable") != (q["expect"] == []):
            problems.append(f"unanswerable iff expect is []: {q['q']}")
        problems += [f"no article {e!r} (for {q['q']!r})" for e in q["expect"] if e not in known]
    n = len(queries)
    paraphrases = sum(q.get("kind") == "paraphrase" for q in queries)
    unanswerable = sum(q["expect"] == [] for q in queries)
    if n < MIN_QUERIES:
        problems.append(f"{n} questions, fewer than {MIN_QUERIES}")
    if paraphrases < PARAPHRASE_SHARE * n:
        problems.append(f"{paraphrases}/{n} paraphrases, under {PARAPHRASE_SHARE:.0%}")
    if unanswerable < MIN_UNANSWERABLE:
        problems.append(f"{unanswerable} unanswerable questions, fewer than {MIN_UNANSWERABLE}")
    if problems:
        raise ValueError(f"{corpus['name']}: " + "; ".join(problems))


def stats(corpus: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    queries = corpus["queries"]
    lengths = sorted(len(a["content"]) for a in rows)
    return {
        "corpus": corpus["name"], "package": corpus["source"]["debian_package"],
        "articles": len(rows), "mean_chars": round(sum(lengths) / max(1, len(lengths))),
        "median_chars": lengths[len(lengths) // 2] if lengths else 0,
        "max_chars": lengths[-1] if lengths else 0, "questions": len(queries),
        "paraphrase": sum(q.get("kind") == "paraphrase" for q in queries),
        "literal": sum(q.get("kind") == "literal" for q in queries),
        "unanswerable": sum(q["expect"] == [] for q in queries),
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eval.corpora_kb")
    parser.add_argument("--install", action="store_true", help="apt-get install what is missing")
    parser.add_argument("--validate", action="store_true", help="check labels against articles")
    parser.add_argument("names", nargs="*", help="corpora (default: every Debian one)")
    args = parser.parse_args(argv)
    specs = [load(n) for n in args.names] if args.names else corpora()
    if args.install:
        installed = install(specs)
        if installed:
            print(f"installed {' '.join(installed)}", file=sys.stderr)
    if args.validate:
        failed = 0
        for spec in specs:
            rows = articles(spec)
            print(json.dumps(stats(spec, rows)))
            try:
                validate(spec, rows)
            except ValueError as exc:
                failed += 1
                print(exc, file=sys.stderr)
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
