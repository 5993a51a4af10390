"""A database outage answers 503 with ``Retry-After`` and logs one line, not a traceback per request.

Issue 26 (low): with the database gone every request answered a bare 500 and logged a traceback.
The outage is made real: the app's engine is swapped for one on a closed PostgreSQL port (connection
refused), then swapped back.
"""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa

from core import errors
from tests.conftest import PASSWORD

CLOSED = "postgresql+psycopg://postgres@127.0.0.1:1/gone"


@pytest.fixture
def app(make_app):
    return make_app(
        plugins=["accounts", "flows"], auto_login=False, superuser_password=PASSWORD, rate_limit_enabled=False
    )


def _use_engine(app, engine) -> None:
    factory = app.extensions["service.db"]
    factory.remove()
    factory.configure(bind=engine)
    app.extensions["service.engine"] = engine


def _login(client):
    return client.post("/api/v1/login", data={"username": "service", "password": PASSWORD})


def _records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.INFO and "database" in r.getMessage().lower()]


def test_an_outage_is_503_with_retry_after_and_one_log_line(app, caplog):
    client = app.test_client()
    good = app.extensions["service.engine"]
    assert _login(client).status_code == 200
    errors.reset_outage()
    caplog.set_level(logging.DEBUG)
    bad = sa.create_engine(CLOSED)
    try:
        _use_engine(app, bad)
        first, second = _login(client), _login(client)
        flows = client.get("/api/v1/flows/", headers={"x-api-key": "sk-whatever"})
    finally:
        _use_engine(app, good)
        bad.dispose()
    for response in (first, second, flows):
        assert response.status_code == 503, response.get_data()[:300]
        assert response.get_json() == {"detail": "The database is unavailable; try again shortly"}
        assert response.headers["Retry-After"].isdigit()
    logged = _records(caplog)
    assert [r.levelno for r in logged] == [logging.WARNING], [r.getMessage() for r in logged]
    assert not any(r.exc_info for r in caplog.records), "no traceback is logged for an outage"
    assert "Connection refused" not in first.get_data(as_text=True)
    caplog.clear()
    # back: the next request succeeds and the recovery is logged once
    assert _login(client).status_code == 200
    assert _login(client).status_code == 200
    back = _records(caplog)
    assert len(back) == 1 and back[0].levelno == logging.INFO and "back" in back[0].getMessage()


def test_a_second_outage_is_logged_again(app, caplog):
    client = app.test_client()
    good = app.extensions["service.engine"]
    errors.reset_outage()
    caplog.set_level(logging.INFO)
    for _ in range(2):
        bad = sa.create_engine(CLOSED)
        try:
            _use_engine(app, bad)
            assert _login(client).status_code == 503
            assert _login(client).status_code == 503
        finally:
            _use_engine(app, good)
            bad.dispose()
        assert _login(client).status_code in (200, 429)
    levels = [r.levelno for r in _records(caplog)]
    assert levels == [logging.WARNING, logging.INFO, logging.WARNING, logging.INFO]


def test_an_unhandled_integrity_error_is_409_not_500(app):
    from flask import Blueprint

    from core import db

    bp = Blueprint("clash", __name__)

    @bp.route("/clash", methods=["POST"])
    def clash():
        from service_accounts.models import User

        with db.transaction() as s:
            s.add(User(username="service", password_hash="x"))  # the superuser's name: taken
        return {}

    app.register_blueprint(bp)
    response = app.test_client().post("/clash")
    assert response.status_code == 409
    assert "conflicts" in response.get_json()["detail"]
