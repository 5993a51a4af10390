"""The standard component bundle (entry point ``service.bundles: standard``)."""

__version__ = "0.1.0"
