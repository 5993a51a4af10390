"""Log records carry ``trace_id`` and ``span_id`` (empty outside a span): use them in any log format."""

from __future__ import annotations

import logging
from typing import Any

from service_observability import otel

_installed = False
#: the default ``logging.basicConfig`` format, and what it becomes while tracing is on
_BASIC = logging.BASIC_FORMAT
_TRACED = _BASIC + " trace_id=%(trace_id)s span_id=%(span_id)s"


def install() -> None:
    """Add the fields to every record (once per process); root handlers using the default format show them."""
    global _installed
    if not _installed:
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            record.trace_id, record.span_id = otel.log_ids()
            return record

        logging.setLogRecordFactory(factory)
        _installed = True
    for handler in logging.getLogger().handlers:
        formatter = handler.formatter
        if formatter is not None and getattr(formatter, "_fmt", None) == _BASIC:
            handler.setFormatter(logging.Formatter(_TRACED))
