"""Smart Transform's lambda is bounded in total memory and output size, not only per operation: each bomb the
audit found (or could build) fails fast with a clear error, and the process does not grow."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from service_bundle_models.safe_lambda import LambdaError, compile_lambda

BOMBS = [
    "lambda x: 'a' * 10**9",
    "lambda x: [0] * 10**9",
    "lambda x: str(x) * 10**8",
    "lambda x: [[0] * 999999 for i in range(1000)]",
    "lambda x: [str(i) * 999999 for i in range(2000)]",
    "lambda x: {i: 'a' * 999999 for i in range(1000)}",
    "lambda x: list(map(lambda i: 'b' * 999999, range(1000)))",
    "lambda x: [[j for j in range(999999)] for i in range(999999)]",
    "lambda x: ('a' * 999999).join(['a' * 999999] * 999999)",
    "lambda x: str(['a' * 999999] * 999999)",
    "lambda x: f\"{['a' * 999999] * 999999}\"",
    "lambda x: (lambda s: (lambda t: (lambda u: (lambda v: v + v)(u + u))(t + t))(s + s))('a' * 999999)",
    "lambda x: '%0999999999d' % 1",
    "lambda x: '%s' * 999999 % tuple(['a' * 999999] * 999999)",
    "lambda x: sum([[0] * 999999] * 999, [])",
    "lambda x: [('ab ' * 333333).split() for i in range(200)]",
    "lambda x: [['a' * 999999] * 999] * 999",
    "lambda x: [x[:] for i in range(100000)]",
    "lambda x: [list(x) for i in range(100000)]",
]
DATA = [{"n": i, "s": "v" * 20} for i in range(2000)]


@pytest.mark.parametrize("text", BOMBS)
def test_each_bomb_fails_fast_with_a_clear_error(text):
    t0 = time.monotonic()
    with pytest.raises(LambdaError) as caught:
        compile_lambda(text)(DATA)
    assert time.monotonic() - t0 < 5, text
    assert any(word in str(caught.value) for word in ("too large", "too much", "memory", "numbers")), caught.value


def test_ordinary_lambdas_still_work():
    assert compile_lambda("lambda x: [d for d in x if d['n'] % 2 == 0]")(DATA)[:2] == DATA[0:4:2]
    assert compile_lambda("lambda x: sorted(x, key=lambda d: -d['n'])[0]['n']")(DATA) == 1999
    assert compile_lambda("lambda x: ', '.join(str(d['n']) for d in x[:3])")(DATA) == "0, 1, 2"
    assert compile_lambda("lambda x: {d['n']: d['s'].upper() for d in x}")(DATA)[5] == "V" * 20
    assert compile_lambda("lambda t: t.upper() + '!' * 3")("hi") == "HI!!!"
    assert compile_lambda("lambda t: '%s-%05d' % (t, 42)")("a") == "a-00042"
    assert compile_lambda("lambda x: sum(d['n'] for d in x)")(DATA) == sum(range(2000))
    big = [{"id": i, "text": "w" * 200} for i in range(100_000)]  # ~25 MB of input: the bounds scale with it
    assert len(compile_lambda("lambda x: [d for d in x if d['id'] % 2]")(big)) == 50_000
    assert len(compile_lambda("lambda x: sorted(x, key=lambda d: -d['id'])")(big)) == 100_000


def test_the_process_does_not_grow():
    """Every bomb in a fresh interpreter: its peak RSS grows by less than 100 MB over the imports."""
    script = f"""
import json, resource, sys
from service_bundle_models.safe_lambda import LambdaError, compile_lambda
data = {json.dumps(DATA)}
compile_lambda("lambda x: x")(data)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
failed = []
for text in {json.dumps(BOMBS)}:
    try:
        compile_lambda(text)(data)
        failed.append(text)
    except LambdaError:
        pass
print(json.dumps({{"growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024, "ran": failed}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ran"] == []
    assert report["growth_mb"] < 100, report
