"""Model providers (any OpenAI-style endpoint), the Agent component and its tools."""
