"""Monitor plugin: chat messages and sessions, vertex builds, transactions and server logs."""

__version__ = "0.1.0"
