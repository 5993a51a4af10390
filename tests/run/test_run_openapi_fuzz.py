"""Property-based check of the run plugin's own operations (as tests/core/test_openapi_fuzz.py does for all):
no 5xx and responses matching their declared schemas, for fuzzed paths, queries and bodies."""

from __future__ import annotations

import schemathesis
from conftest import PLUGINS
from hypothesis import HealthCheck, given, settings
from runkit import chat_echo, create_flow
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.conftest import superuser

MINE = ("/api/v1/run", "/api/v1/webhook", "/api/v1/all", "/api/v1/validate")


def test_run_operations_never_fail_with_5xx(make_app):
    app = make_app(plugins=PLUGINS, rate_limit_enabled=False)
    client = app.test_client()
    admin = superuser(client)
    create_flow(client, admin, chat_echo(), name="fuzz", endpoint_name="fuzz")
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    tested = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if not operation.path.startswith(MINE):
            continue

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
        )
        def check(case):
            if "flow_id_or_name" in (case.path_parameters or {}):
                case.path_parameters["flow_id_or_name"] = "fuzz"  # run the real flow with fuzzed bodies
            case.call_and_validate(
                headers={"x-api-key": admin.api_key, "Accept-Encoding": "identity"},
                checks=[not_a_server_error, response_schema_conformance],
            )

        check()
        tested.append(f"{operation.method.upper()} {operation.path}")
    assert len(tested) == 7, tested
