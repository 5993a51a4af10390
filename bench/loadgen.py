"""A small HTTP/1.1 keep-alive load generator (one process, non-blocking sockets, one selector).

``python -m bench.loadgen --url http://127.0.0.1:7860/api/v1/run/x --connections 16 --duration 10
--max-requests 100000 --body-file body.json --header x-api-key:sk-...`` prints one JSON object:
requests, duration, rps, latency percentiles (ms), status counts, errors. Each connection keeps one
request in flight (no pipelining); the run stops at ``--duration`` seconds or ``--max-requests``.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import time
from urllib.parse import urlsplit


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


class Conn:
    __slots__ = ("buf", "sock", "started")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()
        self.started = 0.0


def _response_length(buf: bytearray) -> tuple[int, int] | None:
    """``(total bytes, status)`` of the first complete response in ``buf``, or None."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = bytes(buf[:end]).decode("latin-1")
    lines = head.split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    total = end + 4 + length
    return (total, status) if len(buf) >= total else None


def run(
    url: str,
    *,
    connections: int,
    duration: float,
    max_requests: int,
    method: str = "POST",
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> dict:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    head = [
        f"{method} {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Connection: keep-alive",
        f"Content-Length: {len(body)}",
    ]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    request = ("\r\n".join(head) + "\r\n\r\n").encode() + body

    sel = selectors.DefaultSelector()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    errors = 0
    issued = 0

    def connect() -> Conn:
        sock = socket.create_connection((host, port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        conn = Conn(sock)
        sel.register(sock, selectors.EVENT_READ, conn)
        return conn

    def send(conn: Conn) -> None:
        nonlocal issued
        issued += 1
        conn.started = time.perf_counter()
        conn.sock.sendall(request)

    start = time.perf_counter()
    deadline = start + duration
    live = 0
    for _ in range(connections):
        conn = connect()
        send(conn)
        live += 1
    while live:
        now = time.perf_counter()
        if now > deadline + 10:  # in-flight requests get 10 s to finish
            break
        for key, _mask in sel.select(timeout=0.5):
            conn = key.data
            try:
                data = conn.sock.recv(262144)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:  # closed by the server: count an error, reconnect if still running
                errors += 1
                sel.unregister(conn.sock)
                conn.sock.close()
                live -= 1
                if time.perf_counter() < deadline and issued < max_requests:
                    fresh = connect()
                    send(fresh)
                    live += 1
                continue
            conn.buf += data
            while True:
                done = _response_length(conn.buf)
                if done is None:
                    break
                total, status = done
                del conn.buf[:total]
                end = time.perf_counter()
                latencies.append(end - conn.started)
                statuses[status] = statuses.get(status, 0) + 1
                if end < deadline and issued < max_requests:
                    send(conn)
                else:
                    sel.unregister(conn.sock)
                    conn.sock.close()
                    live -= 1
                break
    elapsed = time.perf_counter() - start
    latencies.sort()
    ok = sum(n for s, n in statuses.items() if 200 <= s < 300)
    return {
        "tool": "python-loadgen",
        "connections": connections,
        "requests": len(latencies),
        "ok": ok,
        "errors": errors + len(latencies) - ok,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "duration_s": round(elapsed, 3),
        "rps": round(len(latencies) / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(percentile(latencies, 50) * 1000, 2),
        "p90_ms": round(percentile(latencies, 90) * 1000, 2),
        "p99_ms": round(percentile(latencies, 99) * 1000, 2),
        "max_ms": round((latencies[-1] if latencies else 0) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--max-requests", type=int, default=1_000_000)
    parser.add_argument("--method", default="POST")
    parser.add_argument("--body-file")
    parser.add_argument("--header", action="append", default=[])
    args = parser.parse_args()
    body = open(args.body_file, "rb").read() if args.body_file else b""  # noqa: SIM115
    headers = dict(h.split(":", 1) for h in args.header)
    print(
        json.dumps(
            run(
                args.url,
                connections=args.connections,
                duration=args.duration,
                max_requests=args.max_requests,
                method=args.method,
                body=body,
                headers=headers,
            )
        )
    )


if __name__ == "__main__":
    main()
