"""The PostgreSQL pass's cover (tests/postgres_cover.py): what it folds, whom it keeps, what it deselects."""

from __future__ import annotations

from tests import postgres_cover as pc


def test_statements_are_folded_to_one_text_per_statement():
    rows = "INSERT INTO t (a, b) VALUES (%(a__0)s, %(b__0)s), (%(a__1)s, %(b__1)s) RETURNING t.id"
    assert pc.normalise(rows) == "INSERT INTO t (a, b) VALUES (%(a)s, %(b)s) RETURNING t.id"
    listed = "SELECT x\n  FROM t WHERE t.id IN (%(id_1_1)s, %(id_1_2)s, %(id_1_3)s) LIMIT %(param_1)s"
    assert pc.normalise(listed) == "SELECT x FROM t WHERE t.id IN (%(id)s) LIMIT %(param)s"
    assert pc.normalise("RELEASE SAVEPOINT sa_savepoint_12") == "RELEASE SAVEPOINT sa_savepoint"
    # the outcome is part of the pair: the same statement answering no row, or failing, is another pair
    select = "SELECT * FROM t WHERE id = %(id_1)s"
    pairs = {pc.fingerprint(select, o) for o in ("rows:none", "rows:one", "error:23505")}
    assert len(pairs) == 3
    assert pc.fingerprint(select, "rows:one") == pc.fingerprint(select.replace("id_1", "id_7"), "rows:one")


def test_the_cover_keeps_every_pair_and_the_failed_and_concurrent_tests(tmp_path, monkeypatch):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_plain.py").write_text("def test(): pass\n")
    (tmp_path / "tests" / "test_race.py").write_text("from concurrent.futures import ThreadPoolExecutor\n")
    monkeypatch.setattr(pc, "ROOT", tmp_path)

    def record(name, prints, seconds=1.0, failed=False, module="tests/test_plain.py"):
        return {"id": f"{module}::{name}", "module": module, "seconds": seconds, "sql": prints, "failed": failed}

    records = [
        record("cheap_1_2", ["p1", "p2"], 1.0),
        record("only_1", ["p1"], 0.1),
        record("slow_2_3", ["p2", "p3"], 5.0),
        record("failed_1", ["p1"], failed=True),
        record("race_1", ["p1"], module="tests/test_race.py"),
        record("nothing", []),
    ]
    kept, covered = pc.cover(records)
    kept_ids = {r["id"].split("::")[1] for r in kept}
    assert {r["id"].split("::")[1] for r in covered} == {"only_1", "nothing"}
    assert {"failed_1", "race_1", "slow_2_3"} <= kept_ids  # failed, concurrent, the only one with p3
    assert {p for r in kept for p in r["sql"]} == {"p1", "p2", "p3"}


def test_the_pass_deselects_a_covered_test_only_while_its_module_is_unchanged(tmp_path, monkeypatch):
    module = tmp_path / "tests" / "test_plain.py"
    module.parent.mkdir()
    module.write_text("def test(): pass\n")
    monkeypatch.setattr(pc, "ROOT", tmp_path)
    listing = tmp_path / "covered.txt"
    monkeypatch.setattr(pc, "COVERED", listing)
    listing.write_text(f"# header\ntests/test_plain.py::test {pc.module_hash(str(module))}\n")
    assert pc.covered_tests() == {"tests/test_plain.py::test": pc.module_hash(str(module))}
    monkeypatch.setenv(pc.FULL_ENV, "1")
    assert pc.covered_tests() == {}  # the whole pass
    monkeypatch.delenv(pc.FULL_ENV)
    module.write_text("def test(): assert 1\n")
    assert pc.covered_tests()["tests/test_plain.py::test"] != pc.module_hash(str(module))
