"""The core's own features, registered through the same hooks as any plugin.

Endpoints: ``GET /health``, ``GET /health_check``, ``GET /api/v1/version``,
``GET /api/v1/config``, the interactive API docs at ``/docs``. Commands:
``service db upgrade``, ``service plugins list``, ``service worker``.
"""

PLUGIN_NAME = "core"
