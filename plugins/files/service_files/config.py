"""The files plugin's settings (``SERVICE_FILES_*``) and its per-app storage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flask import Flask, current_app

from service_files.storage import LocalStorage, Storage

EXTENSION = "service.files"
SETTINGS_PREFIX = "SERVICE_FILES_"
SHIPPED_PICTURES = Path(__file__).parent / "profile_pictures"


@dataclass(frozen=True)
class FilesConfig:
    #: where uploaded bytes are kept (default ``<config_dir>/files``); share it between web processes
    storage_dir: Path | None = None
    #: ephemeral uploads (``ephemeral=true``) older than this are deleted by the cleanup job
    ephemeral_max_age_seconds: int = 86400
    #: how often the cleanup job runs (one job per interval across processes); 0 turns it off
    ephemeral_cleanup_interval_seconds: int = 3600


@dataclass
class FilesRuntime:
    storage: Storage
    root: Path
    config_dir: Path

    @property
    def picture_roots(self) -> list[Path]:
        return [self.config_dir / "profile_pictures", SHIPPED_PICTURES]


def init_app(app: Flask) -> FilesRuntime:
    from core import appstate
    from core.appstate import plugin_settings

    config: FilesConfig = plugin_settings("files", app)
    config_dir = appstate.settings(app).resolved_config_dir
    root = config.storage_dir or (config_dir / "files")
    rt = FilesRuntime(storage=LocalStorage(root), root=root, config_dir=config_dir)
    app.extensions[EXTENSION] = rt
    return rt


def runtime(app: Flask | None = None) -> FilesRuntime:
    target = app if app is not None else current_app
    rt = target.extensions.get(EXTENSION)
    return rt if rt is not None else init_app(target)
