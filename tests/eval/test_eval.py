"""A quick run of the eval harness: the table and KB sets on the real pipeline and API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from bench.eval.corpora import all_corpora
from bench.eval.evaluate import evaluate
from devstack.deployment import MODEL
from streams.embedder.model import SentenceTransformerEmbedder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
async def report(
    tansu_bootstrap: str, postgres_dsn: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    chosen = [
        c
        for c in all_corpora(("tables", "kb"))
        if c.name in ("shop", "billing", "pypi-descriptions")
    ]
    for c in chosen:
        if c.kind == "kb":
            c.queries = c.queries[::3]
    data_dir: Path = tmp_path_factory.mktemp("eval")
    embedder = SentenceTransformerEmbedder(MODEL)
    return await evaluate(tansu_bootstrap, postgres_dsn, data_dir, embedder, Console(), chosen)


def test_every_corpus_is_big_enough_mostly_paraphrased_and_not_reserved() -> None:
    for c in all_corpora():
        assert c.queries, c.name
        if c.spec.get("written"):  # the corpora written for the leave-one-out eval
            assert len(c.queries) >= 40, c.name
            paraphrased = sum(q["kind"] == "paraphrase" for q in c.queries)
            assert paraphrased * 10 >= 7 * len(c.queries), c.name
            if c.kind == "kb":
                assert c.unanswerable >= 5, c.name


def test_the_report_has_held_out_product_and_baselines_per_corpus(report: dict[str, Any]) -> None:
    tables = report["corpora"]["tables"]
    assert set(tables) == {"shop", "billing"}
    for row in tables.values():
        for system in ("loco", "hybrid", "bm25", "vector"):
            for split in ("all", "literal", "paraphrase"):
                assert set(row[system][split]) == {"n", "recall@1", "recall@5", "mrr"}
        assert row["joins"]["exact"] == 1.0
        assert row["scores"]["reliability"]
    kb = report["corpora"]["kb"]["pypi-descriptions"]
    assert kb["loco"] is None  # the only help desk here: nothing to fit on without it
    assert "precision@0.7" in kb["hybrid"]["paraphrase"]


def test_held_out_tables_beat_bm25_on_paraphrased_questions(report: dict[str, Any]) -> None:
    for row in report["corpora"]["tables"].values():
        assert row["loco"]["paraphrase"]["recall@5"] >= row["bm25"]["paraphrase"]["recall@5"]


def test_a_corpus_read_from_a_reserved_project_is_refused_whatever_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bench.eval import corpora

    spec = {"source": {"go_module": "github.com/spf13/cobra", "version": "v1.8.0"}}
    renamed = corpora.Corpus("cli-lib", "code", [{"q": "x"}], spec=spec)
    monkeypatch.setattr(corpora, "_file_corpora", lambda: [renamed])
    with pytest.raises(AssertionError, match="reserved"):
        corpora.all_corpora()
