"""An in-memory ring buffer of this process's log lines, for ``GET /logs``.

Installed only when ``SERVICE_ENABLE_LOG_RETRIEVAL`` is true (like the
reference, log retrieval is off by default: logs can hold sensitive data).
Each gunicorn worker keeps its own buffer.
"""

from __future__ import annotations

import bisect
import collections
import logging
import threading
import time


class LogBuffer(logging.Handler):
    def __init__(self, capacity: int) -> None:
        super().__init__(level=logging.INFO)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self._lines: collections.deque[tuple[int, str]] = collections.deque(maxlen=capacity)
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # a broken record must not break logging
            return
        with self._guard:
            stamp = int(record.created * 1000)
            if self._lines and stamp <= self._lines[-1][0]:
                stamp = self._lines[-1][0] + 1  # keep keys unique and ordered
            self._lines.append((stamp, line))

    def read(self, *, lines_before: int, lines_after: int, timestamp: int) -> dict[str, str]:
        with self._guard:
            lines = list(self._lines)
        stamps = [s for s, _ in lines]
        if lines_after > 0:
            start = bisect.bisect_right(stamps, timestamp)
            chosen = lines[start : start + lines_after]
        else:
            end = bisect.bisect_right(stamps, timestamp) if timestamp else len(lines)
            count = lines_before if lines_before > 0 else end
            chosen = lines[max(0, end - count) : end]
        return {str(stamp): text for stamp, text in chosen}


_installed: LogBuffer | None = None


def install(capacity: int) -> LogBuffer:
    """One buffer per process, attached to the root logger."""
    global _installed
    if _installed is None:
        _installed = LogBuffer(capacity)
        logging.getLogger().addHandler(_installed)
    return _installed


def now_ms() -> int:
    return int(time.time() * 1000)
