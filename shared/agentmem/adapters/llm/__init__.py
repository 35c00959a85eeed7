"""Language model adapters that are neither local nor AWS: any OpenAI-compatible chat endpoint."""
