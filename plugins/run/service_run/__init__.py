"""Run plugin: simplified/advanced/session runs and webhooks."""

__version__ = "0.1.0"
