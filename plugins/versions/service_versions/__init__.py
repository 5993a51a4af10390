"""Flow versions (history, node-level diff, restore), publishing, and the audit log (issue 31)."""

__version__ = "0.1.0"
