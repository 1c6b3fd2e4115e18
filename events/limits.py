"""Every input bound, in one place: the event models, the API models and the README use these.

The numbers are chosen against what the stores downstream can hold, with room for any
real caller:

- Ids end up in PostgreSQL btree keys (at most ~2,700 bytes per index entry), in Kafka
  keys and in Weaviate tenant names (at most 64 characters: longer tenants are mapped
  to a hash, see ``projections.index.scoring.weaviate_tenant``). 128 characters fit a
  UUID, a slug or a host's own session key several times over, and keep a composite
  key far below the btree limit.
- Metadata is copied into every episode of a turn and filtered on, never searched as
  text: a few dozen short labels are what it is for. Anything bigger belongs in the
  message itself.
"""

from __future__ import annotations

TENANT_MAX = 128
"""Characters of a tenant id (``[A-Za-z0-9_.-]``); unchanged since the first event schema."""

SESSION_MAX = 128
"""Characters of the session part of a ``group_id``."""

GROUP_ID_MAX = TENANT_MAX + 1 + SESSION_MAX
"""Characters of a ``group_id`` (``tenant:session``): 257."""

TURN_ID_MAX = 64
"""Characters of a caller-supplied turn id: any spelling of a UUID (36, braced 38, urn 45)."""

EVENT_TYPE_MAX = 128
"""Characters of a system event's ``event_type`` (a label such as ``tool_run``)."""

SPEAKER_MAX = 200
"""Characters of a turn's ``speaker``: a person's name as the conversation shows it."""

METADATA_MAX_ENTRIES = 32
"""Entries of a turn's or event's ``metadata``."""

METADATA_KEY_MAX = 64
"""Characters of a metadata key."""

METADATA_VALUE_MAX = 2_000
"""Characters of a metadata value (after ``str()`` for non-string values)."""

MESSAGE_MAX = 100_000
"""Characters of a user message, agent response or event content (about 25k tokens)."""

IMPORT_TURNS_MAX = 1_000
"""Turns of one ``POST /v1/memory/import`` (the body stays within ``BODY_MAX_BYTES`` too)."""

REASON_MAX = 1_000
"""Characters of a ``forget`` reason."""

QUERY_MAX = 1_000
"""Characters of a search query (tables, code, memory)."""

NAME_FILTER_MAX = 200
"""Characters of a name used as a filter: database, domain, repository, product."""

FQN_MAX = 400
"""Characters of a fully qualified table name ``database.schema.table``."""

PATH_GLOB_MAX = 500
"""Characters of a code path glob."""

LABEL_MAX = 50
"""Characters of a short label filter: language, symbol kind."""

INTENT_MAX = 100
"""Characters of a retrieve ``intent``."""

RETRIEVE_MESSAGE_MAX = 8_000
"""Characters of the customer message given to ``retrieve_knowledge``."""

BODY_MAX_BYTES = 1024 * 1024
"""Bytes of an HTTP request body (and of a schema registered over HTTP)."""

SUBJECT_MAX = 512
"""Characters of a schema-registry subject: a topic name (Kafka allows 249), ``-`` and an
Avro full name, with room."""
