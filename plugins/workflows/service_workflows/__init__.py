"""Workflows plugin: ``/api/v2/workflows`` (sync, stream, background; AG-UI) and ``/api/v2/workflows/public``."""

__version__ = "0.1.0"
