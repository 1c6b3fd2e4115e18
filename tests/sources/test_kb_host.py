"""`demo.kb_host` keeps seed 002's Contract 1 (`GET /api/kb/articles`) to the letter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from demo.kb_host import KbStore, create_kb_host
from tests.sources.kb_fixtures import HELPDESK, helpdesk_articles

PATH = "/api/kb/articles"


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_kb_host(KbStore.from_json(HELPDESK))) as c:
        yield c


def listing(client: TestClient, **params: Any) -> dict[str, Any]:
    response = client.get(PATH, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_listing_has_exactly_the_contract_shape(client: TestClient) -> None:
    body = listing(client)
    assert set(body) == {"articles", "total", "updated_at"}
    assert body["total"] == 20
    assert body["updated_at"].endswith("Z")
    article = next(a for a in body["articles"] if a["id"] == "kb-001")
    assert article == {
        "id": "kb-001",
        "title": "Apollo Not Hashing Troubleshooting",
        "url": "https://docs.futurebit.com/apollo-not-hashing",
        "content": article["content"],
        "metadata": {
            "intent": ["not_hashing", "performance_issue"],
            "device": ["Apollo", "Apollo II", "Apollo III"],
            "last_updated": "2024-12-15T10:00:00Z",
            "author": "FutureBit Support",
        },
    }
    assert article["content"].startswith("If your Apollo shows 0 H/s")
    assert len(article["content"]) > 300  # full text, not an excerpt


def test_no_filters_return_every_article_with_last_updated(client: TestClient) -> None:
    body = listing(client)
    assert sorted(a["id"] for a in body["articles"]) == sorted(a["id"] for a in helpdesk_articles())
    assert all(a["metadata"]["last_updated"] for a in body["articles"])


def test_intent_and_device_filter_articles(client: TestClient) -> None:
    by_intent = listing(client, intent="not_hashing")
    assert {a["id"] for a in by_intent["articles"]} == {"kb-001", "kb-002", "kb-013"}
    both = listing(client, intent="setup", device="Apollo III")
    assert {a["id"] for a in both["articles"]} == {"kb-005", "kb-010", "kb-016", "kb-017"}
    assert both["total"] == 4


def test_updated_since_keeps_articles_updated_on_or_after_it(client: TestClient) -> None:
    by_date = listing(client, updated_since="2024-12-10")
    assert [a["id"] for a in by_date["articles"]] == ["kb-017", "kb-018", "kb-001"]
    exact = listing(client, updated_since="2024-12-15T10:00:00Z")
    assert [a["id"] for a in exact["articles"]] == ["kb-001"]


def test_limit_and_offset_page_through_a_stable_order(client: TestClient) -> None:
    assert len(listing(client)["articles"]) == 20  # default limit 100
    pages = [listing(client, limit=6, offset=o) for o in (0, 6, 12, 18)]
    assert [len(p["articles"]) for p in pages] == [6, 6, 6, 2]
    assert {p["total"] for p in pages} == {20}
    ids = [a["id"] for p in pages for a in p["articles"]]
    stamps = [a["metadata"]["last_updated"] for p in pages for a in p["articles"]]
    assert len(set(ids)) == 20
    assert stamps == sorted(stamps)


def test_an_outage_answers_500_with_the_contract_error_body(client: TestClient) -> None:
    store: KbStore = client.app.state.kb  # type: ignore[attr-defined]
    store.outage(count=1)
    response = client.get(PATH)
    assert response.status_code == 500
    assert response.json() == {
        "error": "Internal server error",
        "message": "Knowledge base unavailable",
    }
    assert client.get(PATH).status_code == 200
    assert client.post("/_control/outage", json={}).json() == {"ok": True}
    assert client.get(PATH).status_code == 500
    client.post("/_control/recover")
    assert client.get(PATH).status_code == 200
    assert client.get("/_control/stats").json() == {"requests": 4, "errors_served": 2}


@pytest.mark.parametrize(
    "params",
    [{"limit": "0"}, {"limit": "many"}, {"offset": "-1"}, {"updated_since": "last week"}],
)
def test_bad_parameters_answer_400_in_the_same_error_shape(
    client: TestClient, params: dict[str, str]
) -> None:
    response = client.get(PATH, params=params)
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"error", "message"}
    assert body["error"] == "Bad request"


def test_articles_are_added_updated_and_deleted_over_http(client: TestClient) -> None:
    before = listing(client)["updated_at"]
    new = {"title": "Fan Replacement", "url": "https://docs.futurebit.com/fan", "content": "…"}
    put = client.put(f"{PATH}/kb-100", json=new | {"metadata": {"device": ["Apollo II"]}})
    assert put.status_code == 200
    assert put.json()["metadata"]["last_updated"].endswith("Z")
    after = listing(client)
    assert after["total"] == 21
    assert after["updated_at"] > before
    assert after["articles"][-1]["id"] == "kb-100"  # newest last
    assert client.delete(f"{PATH}/kb-100").status_code == 204
    assert client.delete(f"{PATH}/kb-100").status_code == 404
    assert client.put(f"{PATH}/kb-101", json={"title": "no url"}).status_code == 400
    assert listing(client)["total"] == 20


def test_a_token_protected_host_refuses_requests_without_it() -> None:
    with TestClient(create_kb_host(KbStore(), token="t0k")) as c:
        refused = c.get(PATH)
        assert refused.status_code == 401
        assert set(refused.json()) == {"error", "message"}
        ok = c.get(PATH, headers={"Authorization": "Bearer t0k"})
        assert ok.json() == {"articles": [], "total": 0, "updated_at": ok.json()["updated_at"]}
