"""WSGI entry point: ``gunicorn wsgi:application`` or ``flask --app wsgi ...``.

``application`` is an :class:`core.holder.AppHolder`, so a rebuilt app can be
swapped in while serving; ``flask --app wsgi`` uses ``create_app``.
"""

from core.app import create_app
from core.holder import AppHolder

__all__ = ["application", "create_app"]


def __getattr__(name: str):
    # Built on first access, so `flask --app wsgi` (which calls create_app) builds one app only.
    if name == "application":
        global application
        application = AppHolder(create_app)
        return application
    raise AttributeError(name)
