"""Fixtures of the triggers tests: the run plugins plus the triggers plugin, the ticker thread off (tests tick)."""

from __future__ import annotations

import pytest

from tests.run.conftest import PLUGINS, MessageRecorder

TRIGGERS = [*PLUGINS, "triggers"]


@pytest.fixture
def recorder() -> MessageRecorder:
    return MessageRecorder()


@pytest.fixture
def app(make_app, recorder):
    return make_app(plugins=[*TRIGGERS, ("recorder", recorder)], triggers_tick_s=0)


def rq_worker_env(app, redis_url: str) -> dict[str, str]:
    """The environment of a real RQ worker process sharing ``app``'s database and config (no scheduler ticks)."""
    import os
    from pathlib import Path

    from core import appstate

    settings = appstate.settings(app)
    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(
        SERVICE_CONFIG_DIR=str(settings.resolved_config_dir),
        SERVICE_DATABASE_URL=settings.resolved_database_url,
        SERVICE_REDIS_URL=redis_url,
        SERVICE_JOB_BACKEND="rq",
        SERVICE_ENV_FILE=os.devnull,
        SERVICE_LOG_LEVEL="warning",
        SERVICE_TRIGGERS_TICK_S="0",
        PYTHONPATH=os.pathsep.join(filter(None, [str(repo), env.get("PYTHONPATH")])),
    )
    return env
