"""Scores and batch planning shared by every index adapter (pure, no services)."""

from __future__ import annotations

from uuid import UUID

from events.chunks import ChunksEmbedded, DocumentRetracted
from projections.index.batching import ChunkedRun, plan
from projections.index.scoring import (
    blend,
    fuse,
    glob_to_like,
    lexical_score,
    object_uuid,
    vector_score_from_distance,
    weaviate_tenant,
)
from tests.projections.test_index_events import kb_doc


def test_scores_stay_in_the_unit_interval() -> None:
    assert vector_score_from_distance(0.0) == 1.0
    assert vector_score_from_distance(1.7) == 0.0
    assert lexical_score(0.0, 1.0) == 0.0
    assert 0.49 < lexical_score(1.0, 1.0) < 0.51
    assert lexical_score(1e9, 1.0) <= 1.0
    assert blend(None, 0.8) == 0.8  # no vector: judged on its text alone
    assert abs(blend(1.0, 0.0) - 0.7) < 1e-9


def test_fusion_orders_by_reciprocal_rank_and_keeps_both_scores() -> None:
    fused = fuse([("a", 0.9), ("b", 0.8)], [("b", 0.6), ("c", 0.5)], 3, {"c": 0.1})
    assert [f.key for f in fused] == ["b", "a", "c"]
    assert fused[0].vector == 0.8
    assert fused[0].lexical == 0.6
    assert fused[2].vector == 0.1


def test_object_ids_are_stable_and_tenant_scoped() -> None:
    assert object_uuid("default", "kb:1#0") == object_uuid("default", "kb:1#0")
    assert object_uuid("acme", "kb:1#0") != object_uuid("default", "kb:1#0")
    assert isinstance(object_uuid("default", "x"), UUID)


def test_tenant_names_and_globs_translate_safely() -> None:
    assert weaviate_tenant("acme") == "acme"
    assert weaviate_tenant("acme.eu").startswith("x-")
    assert weaviate_tenant("x-1") != "x-1"
    assert glob_to_like("src/*_v?.py") == "src/%\\_v_.py"


def test_vectors_ride_with_the_last_version_of_their_document() -> None:
    v1, v2 = kb_doc("apollo", extra="old"), kb_doc("apollo")
    e2 = ChunksEmbedded(
        document_id=v2.document_id,
        document_version=v2.document_version,
        model="m",
        dims=2,
        vectors=(),
    )
    steps = plan([v1, e2, v2, kb_doc("wifi")])
    assert len(steps) == 2  # v1, then v2 and wifi together; e2 rides with v2
    assert all(isinstance(s, ChunkedRun) for s in steps)
    retracted = DocumentRetracted(document_id=v2.document_id)
    steps = plan([v2, e2, retracted])
    assert steps[1:] == [e2, retracted]  # v2 is not the document's last word


def test_each_sides_best_make_the_fused_cut_even_when_many_objects_are_on_both_sides() -> None:
    # "best" is nearest by meaning and shares no word with the question; forty objects
    # share a word and sit deep in both lists: by RRF alone each outscores "best".
    both = [f"o{i}" for i in range(40)]
    vector_side = [("best", 0.9), *((key, 0.5) for key in both)]
    lexical_side = [("word", 0.9), *((key, 0.4) for key in both)]
    fused = fuse(vector_side, lexical_side, 10)
    keys = [f.key for f in fused]
    assert len(keys) == 10
    assert "best" in keys
    assert "word" in keys
    assert keys == sorted(keys, key=lambda k: -next(f.rrf for f in fused if f.key == k))
