"""The WSGI holder swaps in a rebuilt app while requests are in flight, dropping none."""

import threading
import time

from werkzeug.test import Client

from core.holder import AppHolder


def test_swap_during_traffic_drops_no_request(make_app):
    holder = AppHolder(make_app, plugins=["accounts"])
    first = holder.app
    statuses: list[int] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def hammer():
        client = Client(holder)
        while not stop.is_set():
            try:
                statuses.append(client.get("/api/v1/version").status_code)
            except BaseException as exc:  # any exception is a dropped request
                errors.append(exc)

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        swaps = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and swaps < 5:
            holder.rebuild(plugins=[] if swaps % 2 == 0 else ["accounts"])
            swaps += 1
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert statuses and set(statuses) == {200}
    assert holder.generation == swaps == 5
    assert holder.app is not first
    # the last build had no accounts plugin: its routes are gone, the core's remain
    assert Client(holder).get("/api/v1/users/whoami").status_code == 404


def test_a_failing_rebuild_keeps_the_current_app(make_app):
    holder = AppHolder(make_app, plugins=["accounts"])
    current = holder.app
    try:
        holder.rebuild(plugins=["no_such_plugin_anywhere"])
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("the rebuild should have failed")
    assert holder.app is current and holder.generation == 0
    assert Client(holder).get("/health").status_code == 200
