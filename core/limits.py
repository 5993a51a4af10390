"""IP rate limits on Flask-Limiter, shared by every plugin that needs one.

Each app has its own ``Limiter``. With ``SERVICE_RATE_LIMIT_STORAGE_URI=memory://``
(the default) its counters live in the core's shared state (:mod:`core.shared`:
files of the config directory, or Redis in scale-out), so every worker process
of a server counts together and counts survive an app rebuild; any other URI
(``redis://...``) is used as it is. Plugins decorate views with
:func:`rate_limited`; a breach answers 429 with ``Retry-After: 60``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask, current_app, jsonify, request
from flask_limiter import Limiter, RateLimitExceeded
from limits import RateLimitItemPerMinute

from core import appstate
from core.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])
TOO_MANY = "Too many requests. Please try again later."


def client_ip() -> str:
    """The caller's IP: the rightmost ``X-Forwarded-For`` entry when the proxy is trusted."""
    settings = appstate.settings()
    if settings.rate_limit_trust_proxy:
        forwarded = request.headers.get("X-Forwarded-For", "")
        entries = [e.strip() for e in forwarded.split(",") if e.strip()]
        if entries:
            return entries[-1]
    return request.remote_addr or "unknown"


class TooManyRequests(Exception):
    """Raised by :func:`rate_limited`; answered 429 with ``Retry-After: 60``."""


def init_app(app: Flask, settings: Settings, shared: appstate.SharedStatePort | None = None) -> Limiter:
    uri, options = settings.rate_limit_storage_uri, dict[str, Any]()
    if uri == "memory://" and shared is not None:
        from core.shared import SharedLimitsStorage

        uri, options = f"{SharedLimitsStorage.STORAGE_SCHEME[0]}://", {"state": shared}
    limiter = Limiter(
        key_func=client_ip,
        app=app,
        storage_uri=uri,
        storage_options=options,
        enabled=settings.rate_limit_enabled,
        headers_enabled=False,  # its headers would overwrite our Retry-After
        strategy="fixed-window",
    )
    app.extensions["service.limiter"] = limiter
    _skip_check_without_limits(app, limiter)

    @app.errorhandler(RateLimitExceeded)
    @app.errorhandler(TooManyRequests)
    def _too_many(_error: Exception):
        response = jsonify({"detail": TOO_MANY, "retry_after": "60"})
        response.status_code = 429
        response.headers["Retry-After"] = "60"
        return response

    return limiter


def _skip_check_without_limits(app: Flask, limiter: Limiter) -> None:
    """Run Flask-Limiter's request hooks only when it has limits to check.

    The before-request check resolves default, application, meta, decorated and blueprint limits on
    every request (about 0.2 ms of a 2 ms run), the after-request hook looks for headers and
    deductions the check would have left, the teardown clears them. The service declares none of
    those limits (views count with :func:`rate_limited`, which calls the limits strategy itself), so
    the hooks have nothing to do; should one ever be declared, the containers below are no longer
    empty and the hooks run again.
    """
    manager = limiter.limit_manager

    def declared() -> bool:
        # These are Flask-Limiter internals: if a release renames them, run the hooks (slower,
        # never wrong) instead of failing or skipping a limit.
        try:
            return bool(
                manager._default_limits
                or manager._application_limits
                or manager._decorated_limits
                or manager._blueprint_limits
                or limiter._meta_limits
                or limiter._marked_for_limiting
            )
        except AttributeError:
            return True

    before = app.before_request_funcs.get(None, [])
    check = limiter._check_request_limit
    if check in before:

        def check_declared_limits() -> None:
            if declared():
                check()

        before[before.index(check)] = check_declared_limits
    after = app.after_request_funcs.get(None, [])
    inject = next((f for f in after if isinstance(f, functools.partial) and f.args == (limiter,)), None)
    if inject is not None:

        def inject_declared_limits(response: Any) -> Any:
            return inject(response) if declared() else response

        after[after.index(inject)] = inject_declared_limits
    teardown = app.teardown_request_funcs.get(None, [])
    release = getattr(limiter, "_Limiter__release_context", None)
    if release is not None and release in teardown:

        def release_declared_limits(exc: BaseException | None = None) -> None:
            if declared():
                release(exc)

        teardown[teardown.index(release)] = release_declared_limits


def hit(per_minute: int, scope: str) -> None:
    """Count one call of ``scope`` for the client IP; :class:`TooManyRequests` (429) past ``per_minute``.

    For views that limit only some callers (anonymous sign-up, not a superuser creating accounts).
    """
    limiter: Limiter = current_app.extensions["service.limiter"]
    # the limits strategy of Flask-Limiter, keyed by scope and client IP
    if limiter.enabled and not limiter.limiter.hit(RateLimitItemPerMinute(per_minute), "service", scope, client_ip()):
        raise TooManyRequests()


def rate_limited(per_minute: Callable[[Settings], int], scope: str) -> Callable[[F], F]:
    """Limit a view to ``per_minute(settings)`` calls per minute per client IP, counting every call."""

    def decorator(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            hit(per_minute(appstate.settings()), scope)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorator
