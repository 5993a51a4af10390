"""Responses plugin: run a flow through an OpenAI-style POST /api/v1/responses (a translator over core.runs)."""

__version__ = "0.1.0"
