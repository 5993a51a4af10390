"""Variables plugin: per-user variables encrypted at rest, and ``service secret-key rotate``."""

__version__ = "0.1.0"
