"""Data source components (entry point ``service.bundles: data``)."""

__version__ = "0.1.0"
