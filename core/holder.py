"""A tiny WSGI dispatcher that can swap in a freshly built app.

Flask forbids new routes after the first request, so changing the plugin set
means building a new app and swapping it in here. The swap is one reference
assignment: requests already inside the old app finish there, new requests
go to the new one, and none is dropped.

The holder also keeps its process in step with the rest of the deployment
(:mod:`core.reload`): at most every ``CHECK_INTERVAL`` seconds a request
first looks at the shared generation counters; a new plugin set rebuilds the
app here, a reloaded bundle swaps the registry snapshot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask

from core import appstate

log = logging.getLogger(__name__)


class AppHolder:
    """WSGI callable holding the current app; :meth:`rebuild` swaps in a new one."""

    def __init__(self, factory: Callable[..., Flask] | None = None, **factory_kwargs: Any) -> None:
        from core.app import create_app

        if factory is None:
            factory = create_app
        # the process that changed the plugin set ran the new plugins' migrations first
        self._catch_up_kwargs: dict[str, Any] = {"migrate": False} if factory is create_app else {}
        self._factory = factory
        self._factory_kwargs = factory_kwargs
        self._lock = threading.Lock()
        self.generation = 0
        self.app: Flask = factory(**factory_kwargs)
        self._rebuilding = threading.Lock()
        self._next_check = 0.0
        self.plugins_generation = self._shared_generation()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        now = time.monotonic()
        if now >= self._next_check:
            self._next_check = now + self.check_interval
            self.catch_up()
        return self.app(environ, start_response)

    #: seconds between two looks at the shared generations (see core.reload)
    check_interval = 0.2

    def _shared_generation(self) -> int:
        from core.reload import APPS_GEN, generation

        svc = appstate.state_or_none(self.app)
        return generation(svc.shared, APPS_GEN) if svc is not None else 0

    def catch_up(self) -> None:
        """Rebuild the app if the plugin set changed elsewhere; take reloaded bundles' components."""
        from core.reload import sync_components

        try:
            gen = self._shared_generation()
            if gen != self.plugins_generation and self._rebuilding.acquire(blocking=False):
                try:  # one greenlet rebuilds; the others keep serving the current app meanwhile
                    self.rebuild(**self._catch_up_kwargs)
                    self.plugins_generation = gen
                    log.info("app rebuilt for plugin generation %s", gen)
                finally:
                    self._rebuilding.release()
            sync_components(self.app, force=True)
        except Exception:  # the current app keeps serving; the next check tries again
            log.exception("could not catch up with the deployment's plugin or bundle changes")

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
