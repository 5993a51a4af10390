"""An in-memory ring buffer of this process's log lines, for ``GET /logs`` and ``GET /logs-stream``.

Installed only when ``SERVICE_ENABLE_LOG_RETRIEVAL`` is true (like the
reference, log retrieval is off by default: logs can hold sensitive data).
Each gunicorn worker keeps its own buffer: a client sees the lines of the
worker that answers its request (a stream: of the worker that holds it).

Lines are redacted on the way in (:func:`redact`): bearer and basic
credentials, JWTs, ``sk-`` API keys and the values of secret-looking keys
(``api_key=``, ``"password": ...``, ``Authorization:``) never enter the
buffer, so neither endpoint can hand them out.
"""

from __future__ import annotations

import bisect
import collections
import logging
import re
import threading

#: the reference's default answer size when a read names no count
DEFAULT_LINES = 10

# Hand-written: no maintained library redacts free-form log text; these patterns cover the credential
# shapes this service and its components handle (our ``sk-`` keys, JWT sessions, vendor keys in URLs,
# headers and JSON bodies).
_SECRET_NAME = r"[\w.-]*(?:api[_-]?key|apikey|token|secret|passw(?:or)?d|authorization|cookie|credential)[\w.-]*"  # noqa: S105 (a pattern of names, not a password)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+"), r"\1 ***"),
    (re.compile(r"\beyJ[\w-]+\.[\w-]+\.[\w-]*"), "***"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{6,}"), "sk-***"),
    (
        re.compile(rf"(?i)([\"']?{_SECRET_NAME}[\"']?\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|(?:\w+ \*\*\*)|[^\s&,;}}\"']+)"),
        r"\1***",
    ),
)


def redact(line: str) -> str:
    """``line`` with every credential-looking value replaced by ``***``."""
    for pattern, replacement in _PATTERNS:
        line = pattern.sub(replacement, line)
    return line


class LogBuffer(logging.Handler):
    def __init__(self, capacity: int) -> None:
        super().__init__(level=logging.INFO)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self._lines: collections.deque[tuple[int, str]] = collections.deque(maxlen=capacity)
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = redact(self.format(record))
        except Exception:  # a broken record must not break logging
            return
        with self._guard:
            stamp = int(record.created * 1000)
            if self._lines and stamp <= self._lines[-1][0]:
                stamp = self._lines[-1][0] + 1  # keep keys unique and ordered
            self._lines.append((stamp, line))

    def read(self, *, lines_before: int, lines_after: int, timestamp: int) -> dict[str, str]:
        """The reference's selection: ``timestamp`` 0 means "the latest line"; counts default to 10.

        ``lines_after`` counts from the first line at or after ``timestamp``; ``lines_before`` (or the
        default) ends just before it, or at the newest line when none is that recent.
        """
        with self._guard:
            lines = list(self._lines)
        stamps = [s for s, _ in lines]
        at = bisect.bisect_left(stamps, timestamp) if timestamp > 0 else len(lines)
        if lines_after > 0:
            chosen = lines[at : at + lines_after]
        else:
            count = lines_before if lines_before > 0 else DEFAULT_LINES
            chosen = lines[max(0, at - count) : at]
        return {str(stamp): text for stamp, text in chosen}

    def latest(self) -> int:
        """The stamp of the newest line (0 when empty): where a new stream starts."""
        with self._guard:
            return self._lines[-1][0] if self._lines else 0

    def since(self, stamp: int) -> list[tuple[int, str]]:
        """The lines newer than ``stamp``, oldest first."""
        with self._guard:
            lines = list(self._lines)
        start = bisect.bisect_right([s for s, _ in lines], stamp)
        return lines[start:]


_installed: LogBuffer | None = None


def install(capacity: int) -> LogBuffer:
    """One buffer per process, attached to the root logger."""
    global _installed
    if _installed is None:
        _installed = LogBuffer(capacity)
        logging.getLogger().addHandler(_installed)
    return _installed
