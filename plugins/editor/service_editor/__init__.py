"""The visual editor: a React single-page app, built into ``static/`` and served by a plain blueprint."""

__version__ = "0.1.0"
