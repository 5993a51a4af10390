"""Production server: gevent-patched gunicorn master that builds the app once.

Run through ``service run``. The master patches the standard library first,
builds the app (which migrates the database and applies the start-up rules:
a refusal exits with status 3), then forks gevent workers that share the
preloaded app; each child drops inherited database connections.
"""

from gevent import monkey

monkey.patch_all()

import gevent  # noqa: E402

import logging  # noqa: E402
import sys  # noqa: E402

from gunicorn.app.base import BaseApplication  # noqa: E402

from core.errors import StartupError  # noqa: E402
from core.settings import Settings, SettingsError  # noqa: E402

EXIT_STARTUP = 3


class Server(BaseApplication):
    def __init__(self, application, options):
        self.application = application
        self.options = options
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return self.application


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        settings = Settings.load()
        from core.holder import AppHolder

        holder = AppHolder()
        # Let greenlets the app started finish before gunicorn forks (the rate limiter's
        # in-memory storage starts a 10 ms timer): a child resuming a parent's greenlet fails.
        gevent.sleep(0.05)
    except (StartupError, SettingsError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        sys.exit(EXIT_STARTUP)
    options = {
        "bind": f"{settings.host}:{settings.port}",
        "workers": settings.workers,
        "worker_class": "gevent",
        "worker_connections": 1000,
        "preload_app": True,
        "timeout": 120,
        "graceful_timeout": 10,
        "keepalive": 5,
        "loglevel": settings.log_level,
        "accesslog": "-" if "--access-log" in argv else None,
        "errorlog": "-",
        # gunicorn 27's control socket sits at one path per user: several servers would clash
        "control_socket_disable": True,
    }
    logging.getLogger(__name__).info("serving on http://%s:%s", settings.host, settings.port)
    Server(holder, options).run()


if __name__ == "__main__":
    main()
