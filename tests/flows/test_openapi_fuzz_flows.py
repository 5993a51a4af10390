"""Property-based API test of the flows and variables endpoints alone (accounts, flows, variables loaded).

Same checks as tests/core/test_openapi_fuzz.py: no 5xx, every response matches its declared schema.
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
    app = make_app(plugins=["accounts", "flows", "variables"], rate_limit_enabled=False)
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
            case.call_and_validate(headers={"x-api-key": key}, checks=[not_a_server_error, response_schema_conformance])

        check()
        tested.append(f"{operation.method.upper()} {operation.path}")
    assert sum("/flows" in t or "/projects" in t or "/variables" in t for t in tested) >= 24, tested
