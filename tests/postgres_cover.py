"""Which tests the PostgreSQL pass may leave to the SQLite pass: those whose SQL others already send.

The PostgreSQL pass exists to run on PostgreSQL the SQL that could behave differently there: types and
lengths it enforces, locks, transactions aborted by an error, JSON and text operators, ordering. A test
that sends no statement (and no outcome of one) that another test of the pass does not also send proves
nothing more on PostgreSQL than the SQLite pass proved, so the pass may deselect it.

``make postgres-cover`` records, for every test of the full PostgreSQL pass, each statement it sends
(normalised: bound parameter names, expanded ``IN`` lists and multi-row ``VALUES`` folded) together with
its outcome: how many rows (none, one, several) or the error's SQLSTATE. A weighted greedy cover then keeps
the tests that send every recorded (statement, outcome) at the least time, and writes the others to
``tests/postgres_covered.txt``. The PostgreSQL pass deselects exactly those, except a test

* that is not in the recording (a new or renamed test), or whose module changed since (its hash differs),
* in a module that works with concurrency or the database itself (:data:`ALWAYS`): races, locks and
  connection handling are not a matter of which statements are sent.

``SERVICE_TEST_POSTGRES_FULL=1`` runs the whole pass (the recording does).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COVERED = Path(__file__).with_name("postgres_covered.txt")
RECORD_ENV = "SERVICE_TEST_SQL_RECORD"
FULL_ENV = "SERVICE_TEST_POSTGRES_FULL"
#: a module naming any of these runs whole on PostgreSQL (threads, locks, the database fixture itself)
ALWAYS = (
    "ThreadPoolExecutor",
    "threading.Thread",
    "Barrier(",
    "FOR UPDATE",
    "service_database_url",
    "SERVICE_TEST_DATABASE_URL",
)

_PARAM = re.compile(r"%\((\w+?)(?:_+\d+)+\)s")
_REPEATED_PARAM = re.compile(r"(%\(\w+\)s)(?:, \1)+")
_REPEATED_ROW = re.compile(r"(\((?:[^()]|%\(\w+\)s)*\))(?:, \1)+")
_SAVEPOINT = re.compile(r"sa_savepoint_\d+")
_SPACE = re.compile(r"\s+")


def normalise(statement: str) -> str:
    """One text for every execution of a statement: parameter numbering, ``IN`` lists and batched rows folded."""
    text = _SPACE.sub(" ", statement).strip()
    text = _SAVEPOINT.sub("sa_savepoint", text)
    text = _PARAM.sub(r"%(\1)s", text)
    text = _REPEATED_PARAM.sub(r"\1", text)
    return _REPEATED_ROW.sub(r"\1", text)


def fingerprint(statement: str, outcome: str) -> str:
    return hashlib.blake2b(f"{outcome}\0{normalise(statement)}".encode(), digest_size=8).hexdigest()


def module_hash(path: str) -> str:
    try:
        return hashlib.blake2b(Path(path).read_bytes(), digest_size=6).hexdigest()
    except OSError:
        return "missing"


# --- recording (a pytest plugin, registered by tests/conftest.py when SERVICE_TEST_SQL_RECORD is set) --------
class Recorder:
    """Each test's (statement, outcome) fingerprints and duration, one JSON line per test."""

    def __init__(self, directory: str, worker: str) -> None:
        import sqlalchemy as sa

        Path(directory).mkdir(parents=True, exist_ok=True)
        self.out = open(Path(directory) / f"record-{worker}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self.lock = threading.Lock()
        self.current: set[str] | None = None
        self.started = 0.0
        self.failed = False
        sa.event.listen(sa.engine.Engine, "after_cursor_execute", self._executed)
        sa.event.listen(sa.engine.Engine, "handle_error", self._failed)

    def _add(self, statement: str, outcome: str) -> None:
        with self.lock:
            if self.current is not None:
                self.current.add(fingerprint(statement, outcome))

    def _executed(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        rows = getattr(cursor, "rowcount", -1)
        self._add(statement, "rows:" + ("none" if rows == 0 else "one" if rows == 1 else "many"))

    def _failed(self, context: Any) -> None:
        error = getattr(context.original_exception, "sqlstate", None) or type(context.original_exception).__name__
        self._add(context.statement or "", f"error:{error}")

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        with self.lock:
            self.current = set()
        self.started = time.perf_counter()
        self.failed = False

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.failed = self.failed or report.failed

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        with self.lock:
            prints, self.current = sorted(self.current or ()), None
        path = nodeid.split("::", 1)[0]
        line = {
            "id": nodeid,
            "module": path,
            "hash": module_hash(str(ROOT / path)),
            "seconds": round(time.perf_counter() - self.started, 3),
            "failed": self.failed,
            "sql": prints,
        }
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()


# --- the cover ------------------------------------------------------------------------------------------------
def always_on_postgres(path: str) -> bool:
    try:
        source = (ROOT / path).read_text(encoding="utf-8")
    except OSError:
        return True
    return any(mark in source for mark in ALWAYS)


def cover(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept, covered): the greedy cover of every fingerprint, cheapest new fingerprints first."""
    by_id = {r["id"]: r for r in records}  # a test recorded twice (a rerun): the last
    kept: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for record in by_id.values():  # a test that failed in the recording may not have sent all it sends
        if record.get("failed") or always_on_postgres(record["module"]):
            kept[record["id"]] = record
            seen.update(record["sql"])
    while True:
        best, best_score = None, 0.0
        for record in by_id.values():
            if record["id"] in kept:
                continue
            new = len(set(record["sql"]) - seen)
            score = new / max(record["seconds"], 0.05)
            if new and score > best_score:
                best, best_score = record, score
        if best is None:
            break
        kept[best["id"]] = best
        seen.update(best["sql"])
    covered = [r for r in by_id.values() if r["id"] not in kept]
    return list(kept.values()), covered


def write(records: list[dict[str, Any]], commit: str) -> str:
    kept, covered = cover(records)
    total = sum(r["seconds"] for r in kept + covered)
    saved = sum(r["seconds"] for r in covered)
    prints = {p for r in records for p in r["sql"]}
    lines = [
        "# The PostgreSQL pass's tests whose (statement, outcome) pairs others of the pass also send (see",
        "# tests/postgres_cover.py). Written by `make postgres-cover`; do not edit. Each line: test id, then the",
        "# hash of its module when recorded (a changed module runs whole again until the next recording).",
        f"# recorded at {commit}: {len(kept) + len(covered)} tests, {len(prints)} distinct pairs; "
        f"{len(kept)} tests send them all; {len(covered)} listed here ({saved:.0f} of {total:.0f} s)",
    ]
    lines += [f"{r['id']} {r['hash']}" for r in sorted(covered, key=lambda r: r["id"])]
    COVERED.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines[3]


def covered_tests() -> dict[str, str]:
    """test id -> its module's hash at the recording, for the PostgreSQL pass's deselection."""
    if os.environ.get(FULL_ENV) or os.environ.get(RECORD_ENV) or not COVERED.exists():
        return {}
    out = {}
    for line in COVERED.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            test, _, digest = line.rpartition(" ")
            out[test] = digest
    return out


def main(argv: list[str]) -> None:
    directory, commit = Path(argv[0]), argv[1] if len(argv) > 1 else "?"
    records = [json.loads(line) for path in sorted(directory.glob("record-*.jsonl")) for line in path.open()]
    if not records:
        raise SystemExit(f"no recording in {directory}")
    print(write(records, commit))


if __name__ == "__main__":
    main(sys.argv[1:])
