"""Flow Builder Service core: the plugin host, app factory and shared plumbing.

Plugins mark their hook implementations with :data:`hookimpl`::

    from core import hookimpl

    @hookimpl
    def register_blueprints():
        return [blp]
"""

import pluggy

__version__ = "0.1.0"

PROJECT_NAME = "service"

#: Marker for hook specifications (used only by :mod:`core.hookspecs`).
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
#: Marker for hook implementations in plugins and bundles.
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

__all__ = ["PROJECT_NAME", "__version__", "hookimpl", "hookspec"]
