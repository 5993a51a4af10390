"""Run plugin: simplified/advanced/session runs, webhooks, the component catalog and code/prompt validation."""

__version__ = "0.1.0"
