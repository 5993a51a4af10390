"""Flows plugin: flows and projects (folders), upload/download, public read, example flows."""

__version__ = "0.1.0"
