"""Hook implementations of the observability plugin (thin: the work is in otel, http and metrics)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import hookimpl
from core.contracts import RunStarted


@hookimpl
def register_settings():
    from core.records import SettingsSection
    from service_observability.config import SETTINGS_NAME, SETTINGS_PREFIX, ObservabilitySettings

    return [SettingsSection(SETTINGS_NAME, ObservabilitySettings, SETTINGS_PREFIX)]


@hookimpl
def register_blueprints():
    from service_observability.resources import metrics_blp
    from service_observability.traces import traces_blp
    from service_observability.usage_api import usage_blp

    return [metrics_blp, traces_blp, usage_blp]


@hookimpl
def register_migrations():
    from core.records import Migrations

    return [Migrations("observability", Path(__file__).parent / "migrations")]


@hookimpl
def on_app_created(app: Any) -> None:
    from core import appstate
    from core.engine import egress
    from core.errors import StartupError
    from service_observability import http, instrument, logs, metrics, native, otel, runs
    from service_observability.config import parse_prices, settings

    try:
        traced = otel.configure() is not None
    except ValueError as exc:  # an unsupported OTLP protocol, or gRPC without its extra
        raise StartupError(str(exc)) from None
    if traced:
        from core.jobs import at_work_horse_exit

        egress.add_header_source(otel.current_headers)
        logs.install()
        at_work_horse_exit(otel.flush)  # a forked RQ job process exports its spans before it ends
    if otel.exporting():
        providers = (otel.tracer_provider(), otel.meter_provider())
        instrument.install_http(app, *providers)
        instrument.install_database(appstate.engine(app), *providers)
    else:
        instrument.detach_database(appstate.engine(app))
    conf = settings(app)
    if conf.metrics_enabled:
        config_dir = appstate.settings(app).resolved_config_dir
        metrics.enable(metrics.choose_directory(config_dir, conf.metrics_multiproc_dir))
    else:
        metrics.disable()
    runs.native.update(on=conf.native_tracing, retention_days=conf.native_tracing_retention_days)
    try:
        native.prices = parse_prices(conf.token_prices)
    except ValueError as exc:
        raise StartupError(str(exc)) from None
    if metrics.current() is not None:
        http.install(app)


def observing_runs() -> bool:
    """Whether ``observe_run`` has anything to do (read by the core per run: off, the run path skips it)."""
    from service_observability import runs

    return runs.observing()


@hookimpl
def observe_run(run: RunStarted) -> Any:
    from service_observability import runs

    return runs.observe(run)


@hookimpl
def propagation_headers() -> dict[str, str] | None:
    from service_observability import otel

    return otel.current_headers() if otel.tracer() is not None else None


@hookimpl
def on_user_deleted(user_id: str) -> None:
    from service_observability.traces import delete_user_rows

    delete_user_rows(user_id)


@hookimpl
def check_run(user_id: str | None, flow: Any, surface: str) -> None:
    """Refuse a run whose budget is spent (429 with ``Retry-After``) before any component runs."""
    from service_observability import runs

    if surface == "subflow" or not runs.native["on"]:
        return
    from core import appstate
    from core.errors import ApiError
    from service_observability import budgets

    engine = appstate.engine()
    if not budgets.all_budgets(engine):
        return
    owner = str(flow.user_id or user_id or "")
    found = budgets.applying(engine, owner, str(flow.id), str(flow.folder_id) if flow.folder_id else None)
    hit = budgets.spent(engine, found)
    if hit is not None:
        budget, _used = hit
        raise ApiError(429, f"{budgets.message(budget)}.", headers={"Retry-After": str(budgets.retry_after(budget))})
