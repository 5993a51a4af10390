"""Production server: gevent-patched gunicorn master that builds the app once.

Run through ``service run``. The master patches the standard library first,
builds the app (which migrates the database and applies the start-up rules:
a refusal exits with status 3), then forks gevent workers that share the
preloaded app; each child drops inherited database connections.
"""

from gevent import monkey

monkey.patch_all()

import gc  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402

import gevent  # noqa: E402
from gunicorn.app.base import BaseApplication  # noqa: E402

from core.errors import StartupError  # noqa: E402
from core.settings import Settings, SettingsError  # noqa: E402

EXIT_STARTUP = 3


def yield_between_requests(worker, req, environ, resp) -> None:
    """gunicorn ``post_request``: let every other ready connection go first before reading the next request.

    gunicorn's gevent worker loops over a keep-alive connection's requests: when the client's next
    request is already in the socket buffer (a fast client on loopback), the greenlet reads and serves it
    without ever yielding, so one connection can monopolise its worker while the others wait for
    seconds (measured: 2 workers, 16 clients, 2 ms per request: p50 2.6 ms but p99 0.6-1 s).
    ``gevent.idle()`` parks this greenlet until the event loop has nothing else ready, which serves
    the connections round-robin (same case: p50 21 ms, p99 28 ms; the same req/s). ``gevent.sleep(0)``
    is not enough: it resumes before pending I/O is polled (p99 still 0.8 s). In a closed system the
    wait is bounded: parked greenlets produce no new events, so the loop soon runs idle.
    """
    gevent.idle()


def gunicorn_options(*, bind: str, workers: int, log_level: str, access_log: bool = False) -> dict:
    """The options ``service run`` gives gunicorn (the bench's ceiling server uses the same)."""
    return {
        "bind": bind,
        "workers": workers,
        "worker_class": "gevent",
        "worker_connections": 1000,
        "preload_app": True,
        "timeout": 120,
        "graceful_timeout": 10,
        "keepalive": 5,
        "loglevel": log_level,
        "accesslog": "-" if access_log else None,
        "errorlog": "-",
        # gunicorn 27's control socket sits at one path per user: several servers would clash
        "control_socket_disable": True,
        "post_request": yield_between_requests,
    }


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
        # The app's objects (modules, catalog, SQLAlchemy metadata: about 270,000) live as long as
        # the process: out of the collector's reach, a full collection in a worker scans what the
        # requests made, not them (measured: p99 of the simplified run at 16 clients 230-300 ms
        # before, see bench/NOTES.md), and the workers share the pages instead of copying them. No
        # collection first (Python's documentation: freeze right before fork): it found 245 garbage
        # objects of about 205,000 and cost 0.1-0.2 s of start-up (docs/performance.md).
        gc.freeze()
    except (StartupError, SettingsError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        sys.exit(EXIT_STARTUP)
    options = gunicorn_options(
        bind=f"{settings.host}:{settings.port}",
        workers=settings.workers,
        log_level=settings.log_level,
        access_log="--access-log" in argv,
    )
    log = logging.getLogger("service.startup")
    from core.startup import summary

    for line in summary(holder.app):
        log.info(line)
    log.info("serving on http://%s:%s with %d worker(s)", settings.host, settings.port, settings.workers)
    Server(holder, options).run()


if __name__ == "__main__":
    main()
