"""The code corpora's labels hold against the code they are read from: a labelled symbol
outside the folders a corpus indexes could never be found (this repository's corpus
lost 8 of its 55 questions that way when the producers moved to ``sources/``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.eval.corpora_code import CorpusError, validate

CODE = Path(__file__).parent / "corpora" / "code"


@pytest.mark.parametrize("path", sorted(CODE.glob("*.json")), ids=lambda p: p.stem)
def test_every_labelled_symbol_is_defined_in_a_file_the_corpus_indexes(path: Path) -> None:
    corpus = json.loads(path.read_text())
    try:
        validate(corpus)
    except CorpusError as exc:
        if "not installed" in str(exc):
            pytest.skip(str(exc))
        raise
