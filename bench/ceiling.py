"""The ceiling: a bare Flask endpoint served by gunicorn with ``service run``'s exact settings.

``python -m bench.ceiling <port> <workers>``: gevent monkey-patching first, then gunicorn with the same
worker class, worker connections, keep-alive, preload and timeouts as ``core.server``; ``POST``/``GET
/ping`` answers a small JSON object.
"""

from gevent import monkey

monkey.patch_all()

import sys  # noqa: E402

from flask import Flask, jsonify  # noqa: E402
from gunicorn.app.base import BaseApplication  # noqa: E402

app = Flask("ceiling")


@app.route("/ping", methods=["GET", "POST"])
def ping():
    return jsonify({"status": "ok", "answer": "hello"})


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


def options(port: int, workers: int) -> dict:
    """The options ``core.server.main`` passes to gunicorn (kept in step by hand)."""
    return {
        "bind": f"127.0.0.1:{port}",
        "workers": workers,
        "worker_class": "gevent",
        "worker_connections": 1000,
        "preload_app": True,
        "timeout": 120,
        "graceful_timeout": 10,
        "keepalive": 5,
        "loglevel": "warning",
        "accesslog": None,
        "errorlog": "-",
    }


if __name__ == "__main__":
    Server(app, options(int(sys.argv[1]), int(sys.argv[2]))).run()
