"""Property-based API test: every endpoint in the app's own OpenAPI document, authenticated.

Fails on any 5xx and on any response that does not match its declared schema.
Bounded (examples per operation, no deadline) so the whole run stays well under a minute,
and it covers every endpoint later plugins add, since it reads the live document.
(schemathesis' own pytest integration does not run on pytest 9 yet, so operations
are iterated here, each under its own hypothesis test.)
"""

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.conftest import superuser

# Endpoints whose side effects would invalidate the session the fuzzer uses.
SKIP = {("POST", "/api/v1/logout"), ("DELETE", "/api/v1/users/{user_id}")}
EXAMPLES = 12


def test_no_server_errors_and_responses_match_their_schema(make_app):
    app = make_app(rate_limit_enabled=False, enable_log_retrieval=True)
    key = superuser(app.test_client()).api_key
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    tested = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIP:
            continue

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case):
            # identity: schemathesis' WSGI transport does not decode gzip bodies
            case.call_and_validate(
                headers={"x-api-key": key, "Accept-Encoding": "identity"},
                checks=[not_a_server_error, response_schema_conformance],
            )

        check()
        tested.append(f"{operation.method.upper()} {operation.path}")
    assert len(tested) >= 15, tested
