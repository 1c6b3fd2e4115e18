"""The operations behind both the HTTP API and the MCP tools: pure async functions over a
:class:`~api.services.context.ServiceContext`, answering the models of :mod:`api.schemas`."""
