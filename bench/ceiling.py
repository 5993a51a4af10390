"""The ceiling: a bare Flask endpoint served by gunicorn with ``service run``'s exact settings.

``python -m bench.ceiling <port> <workers>``: gevent monkey-patching first, then gunicorn with the same
worker class, worker connections, keep-alive, preload, timeouts and hooks as ``core.server``; ``POST``/``GET
/ping`` answers a small JSON object.
"""

from gevent import monkey

monkey.patch_all()

import sys  # noqa: E402

from flask import Flask, jsonify  # noqa: E402

app = Flask("ceiling")


#: ``python -m bench.ceiling <port> <workers> [<bytes>]``: answer about as many bytes as the measured endpoint
PAD = max(0, int(sys.argv[3]) - 36) if len(sys.argv) > 3 else 0


@app.route("/ping", methods=["GET", "POST"])
def ping():
    return jsonify({"status": "ok", "answer": "hello", "pad": "x" * PAD})


def options(port: int, workers: int) -> dict:
    """Exactly the options ``core.server`` passes to gunicorn."""
    from core.server import gunicorn_options

    return gunicorn_options(bind=f"127.0.0.1:{port}", workers=workers, log_level="warning")


if __name__ == "__main__":
    from core.server import Server

    Server(app, options(int(sys.argv[1]), int(sys.argv[2]))).run()
