"""Search and lookup tool components (entry point ``service.bundles: tools``)."""

__version__ = "0.1.0"
