"""Example plugin: ``GET /api/v1/hello`` greets the caller and counts the greetings in its own table."""

__version__ = "0.1.0"
