"""The current Flask app, read from Flask's context variable instead of through ``current_app``.

``current_app`` is a Werkzeug ``LocalProxy``: every attribute read resolves the context variable again
through several Python calls (about 1 us). The run's hot path asked for the app or its state about
fifty times per request (2-3% of a simple run); these helpers read the variable once.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

try:  # Flask 2.3-3.1 keep the app context in this variable
    from flask.globals import _cv_app
except ImportError:  # pragma: no cover - a Flask without it: the public proxies
    _cv_app = None  # type: ignore[assignment]


def app_or_none() -> Flask | None:
    """The app of the current app context, or None outside one."""
    if _cv_app is None:  # pragma: no cover
        from flask import current_app, has_app_context

        return current_app._get_current_object() if has_app_context() else None  # type: ignore[attr-defined]
    ctx: Any = _cv_app.get(None)
    return ctx.app if ctx is not None else None


def current() -> Flask:
    """The app of the current app context (``RuntimeError`` outside one, as ``current_app``)."""
    app = app_or_none()
    if app is None:
        raise RuntimeError("Working outside of application context.")
    return app
