"""Request and response models of the API and the MCP tools, with the seeds' field names."""
