"""The anthropic path of extraction: the real SDK against a local Messages API answers
the same schema as the local rules, with what earlier turns established in the prompt."""

from __future__ import annotations

import uuid

from devstack.messages_api import messages_api, tool_reply
from events.memory import EpisodeRecorded
from streams.llm.anthropic import AnthropicProvider
from streams.memory.config import EntityExtractionConfig
from streams.memory.extraction import EntityExtractor

ANSWER = {
    "entities": [
        {"name": "Priya Raman", "entity_type": "person", "confidence": "high"},
        {"name": "Bristol", "entity_type": "place", "confidence": "high"},
    ],
    "relationships": [
        {
            "source": "Priya Raman",
            "relation": "lives_in",
            "target": "Bristol",
            "fact": "Priya moved to Bristol",
            "confidence": "high",
        }
    ],
}


def episode() -> EpisodeRecorded:
    return EpisodeRecorded(
        group_id="acme:priya",
        episode_id=uuid.uuid4(),
        source_event_id=uuid.uuid4(),
        content="User: I moved to Bristol last month.\nAgent: Noted!",
        content_type="message",
        source="user",
        embedding_error="not embedded in this test",
    )


async def test_the_messages_api_answers_the_extraction_schema_with_the_speaker_known() -> None:
    with messages_api(lambda body: tool_reply(body, ANSWER)) as server:
        provider = AnthropicProvider(api_key="test-key", base_url=server.url, max_retries=0)
        extractor = EntityExtractor(provider, EntityExtractionConfig())
        result = await extractor.extract(episode(), {"speaker": "Priya Raman"})
    assert [(r.source, r.relation, r.target) for r in result.relationships] == [
        ("Priya Raman", "lives_in", "Bristol")
    ]
    assert result.provider == "anthropic"
    [sent] = server.requests
    body = sent["body"]
    assert body["tool_choice"]["type"] == "tool"
    assert {"entities", "relationships"} <= set(body["tools"][0]["input_schema"]["properties"])
    prompt = body["messages"][0]["content"]
    assert "known from earlier turns" in prompt
    assert '"speaker": "Priya Raman"' in prompt
