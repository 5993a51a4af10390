"""The shared-state primitive: the same contract on files, Redis and memory; CAS across processes."""

from __future__ import annotations

import multiprocessing
import os
import time
import uuid

import pytest
import redis

from core.shared import FileState, MemoryState, RedisState, SharedLimitsStorage

REDIS_URL = os.environ.get("SERVICE_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")


@pytest.fixture(params=["memory", "files", "redis"])
def store(request, tmp_path):
    if request.param == "memory":
        yield MemoryState()
    elif request.param == "files":
        yield FileState(tmp_path / "shared")
    else:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        try:
            client.ping()
        except redis.RedisError as exc:
            pytest.skip(f"no Redis: {exc}")
        state = RedisState(client, namespace=f"test-{uuid.uuid4().hex[:8]}")
        yield state
        state.clear()


def test_get_put_delete_and_only_if_exists(store):
    assert store.get("a/b") is None
    assert not store.put("a/b", "1", only_if_exists=True)
    assert store.put("a/b", "1")
    assert store.put("a/b", "2", only_if_exists=True) and store.get("a/b") == "2"
    assert store.delete("a/b") is True
    assert store.delete("a/b") is False  # the second claimer loses
    assert store.get("a/b") is None


def test_cas_from_absent_and_from_a_value(store):
    assert store.cas("cursor:1", None, "10")
    assert not store.cas("cursor:1", None, "11")  # no longer absent
    assert not store.cas("cursor:1", "9", "11")
    assert store.cas("cursor:1", "10", "11") and store.get("cursor:1") == "11"


def test_counters_expire_as_a_fixed_window(store):
    assert store.incr("hits", ttl=0.3) == 1
    assert store.incr("hits", 4, ttl=0.3) == 5
    assert 0 < (store.ttl("hits") or 0) <= 0.3
    time.sleep(0.4)
    assert store.get("hits") is None
    assert store.incr("hits", ttl=0.3) == 1


def test_values_expire_and_scan_lists_live_keys_by_prefix(store):
    store.put("polling/a", "1")
    store.put("polling/b", "2", ttl=0.2)
    store.put("other/c", "3")
    assert store.scan("polling/") == {"polling/a": "1", "polling/b": "2"}
    time.sleep(0.3)
    assert store.scan("polling/") == {"polling/a": "1"}
    assert store.ttl("polling/a") is None


def test_bad_keys_are_refused(store):
    for key in ("", "../escape", "a b", "x" * 201, "/etc\x00"):
        with pytest.raises(ValueError):
            store.put(key, "1")


def _bump(root: str, rounds: int) -> None:
    state = FileState(root)
    for _ in range(rounds):
        while True:  # compare-and-set loop: read, add one, write if nobody wrote meanwhile
            current = state.get("n")
            if state.cas("n", current, str(int(current or 0) + 1)):
                break
        state.incr("counter")


def test_file_state_cas_and_counters_hold_across_processes(tmp_path):
    root = str(tmp_path / "shared")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_bump, args=(root, 150)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    state = FileState(root)
    assert state.get("n") == "600"
    assert state.get("counter") == "600"


def test_limits_storage_over_shared_state(tmp_path):
    storage = SharedLimitsStorage("service-shared://", state=FileState(tmp_path / "s"))
    assert storage.incr("LIMITER/login/1.2.3.4", 60) == 1
    assert storage.incr("LIMITER/login/1.2.3.4", 60) == 2
    assert storage.get("LIMITER/login/1.2.3.4") == 2
    assert time.time() < storage.get_expiry("LIMITER/login/1.2.3.4") <= time.time() + 60
    storage.clear("LIMITER/login/1.2.3.4")
    assert storage.get("LIMITER/login/1.2.3.4") == 0
    storage.incr("a", 60)
    storage.incr("b", 60)
    assert storage.reset() == 2


def test_a_redis_state_namespace_shares_the_client_and_keeps_its_own_keys():
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis: {exc}")
    base = RedisState(client, namespace=f"test-{uuid.uuid4().hex[:8]}")
    other = base.namespaced(f"test-{uuid.uuid4().hex[:8]}")
    try:
        assert other.r is client
        base.put("k", "base")
        other.put("k", "other")
        assert (base.get("k"), other.get("k")) == ("base", "other")
        assert other.prefix != base.prefix
    finally:
        base.clear()
        other.clear()
