"""A quick run of the eval harness: the table and KB sets on the real pipeline and API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from scripts.eval import corpus
from scripts.eval.evaluate import evaluate
from streams.embedder.model import SentenceTransformerEmbedder
from tests.api.demo import MODEL

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(MODEL)


@pytest.fixture(scope="module")
async def report(
    tansu_bootstrap: str,
    postgres_dsn: str,
    embedder: SentenceTransformerEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    sets = {
        "tables": corpus.load_set("tables"),
        "code": {"queries": []},
        "kb": {"queries": corpus.load_set("kb")["queries"][::3]},
        "joins": {"pairs": corpus.load_set("joins")["pairs"][:4]},
    }
    data_dir: Path = tmp_path_factory.mktemp("eval")
    return await evaluate(tansu_bootstrap, postgres_dsn, data_dir, embedder, Console(), sets)


def test_the_labelled_sets_are_big_enough_and_mostly_paraphrased() -> None:
    for name in ("tables", "code", "kb"):
        queries = corpus.load_set(name)["queries"]
        assert len(queries) >= 40, name
        assert sum(q["kind"] != "literal" for q in queries) * 3 >= 2 * len(queries), name


def test_the_report_splits_every_metric_by_literal_and_paraphrase(report: dict[str, Any]) -> None:
    for section in ("tables", "code"):
        for system in ("hybrid", "bm25", "vector"):
            for split in ("all", "literal", "paraphrase"):
                assert set(report[section][system][split]) == {"n", "recall@1", "recall@5", "mrr"}
    for system in ("hybrid", "bm25", "vector"):
        assert "precision@0.7" in report["knowledge"][system]["paraphrase"]
    assert report["joins"]["exact"] == 1.0


def test_hybrid_beats_both_baselines_on_paraphrased_table_questions(
    report: dict[str, Any],
) -> None:
    tables = report["tables"]
    hybrid = tables["hybrid"]["paraphrase"]
    for baseline in ("bm25", "vector"):
        assert hybrid["recall@5"] >= tables[baseline]["paraphrase"]["recall@5"], baseline
        assert hybrid["mrr"] >= tables[baseline]["paraphrase"]["mrr"], baseline
