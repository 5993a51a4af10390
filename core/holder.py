"""A tiny WSGI dispatcher that can swap in a freshly built app.

Flask forbids new routes after the first request, so changing the plugin set
means building a new app and swapping it in here. The swap is one reference
assignment: requests already inside the old app finish there, new requests
go to the new one, and none is dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask


class AppHolder:
    """WSGI callable holding the current app; :meth:`rebuild` swaps in a new one."""

    def __init__(self, factory: Callable[..., Flask] | None = None, **factory_kwargs: Any) -> None:
        if factory is None:
            from core.app import create_app

            factory = create_app
        self._factory = factory
        self._factory_kwargs = factory_kwargs
        self._lock = threading.Lock()
        self.generation = 0
        self.app: Flask = factory(**factory_kwargs)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        return self.app(environ, start_response)

    def swap(self, app: Flask) -> Flask:
        """Install ``app``; return the previous one."""
        with self._lock:
            old, self.app = self.app, app
            self.generation += 1
            return old

    def rebuild(self, **overrides: Any) -> Flask:
        """Build a new app (same factory, optional new arguments) and swap it in.

        A failing build raises and leaves the current app serving.
        """
        kwargs = {**self._factory_kwargs, **overrides}
        new_app = self._factory(**kwargs)
        self._factory_kwargs = kwargs
        return self.swap(new_app)
