"""What is remembered: read stores folded from events.

Every projection applies a batch of events and the (topic, partition, offset) of each
in one transaction (or one idempotent batch, for stores without transactions), and
skips what it has already applied. Deleting a store and replaying the topics rebuilds
it, without calling the LLM or the embedding model again.
"""
