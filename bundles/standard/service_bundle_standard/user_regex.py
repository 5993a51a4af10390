"""Regular expressions written by flow authors, with a time limit.

A pattern such as ``(a+)+$`` backtracks catastrophically; with the standard
``re`` module one such run would hold a gevent worker (and every request on
it) for as long as it takes. The ``regex`` module accepts the same syntax and
can stop a match after a timeout, so every user-supplied pattern goes through
here and fails with a clear message instead.
"""

from __future__ import annotations

from typing import Any

import regex

#: seconds one match, search, split or substitution may take
TIMEOUT = 1.0


class UserPattern:
    def __init__(self, pattern: str, flags: int = 0) -> None:
        try:
            self._compiled = regex.compile(pattern, flags)
        except regex.error as exc:
            raise ValueError(f"Invalid regex pattern: {exc}") from None

    def _guard(self, method: str, *args: Any) -> Any:
        try:
            result = getattr(self._compiled, method)(*args, timeout=TIMEOUT)
            return [m.group(0) for m in result] if method == "finditer" else result  # iterate inside the guard
        except TimeoutError:
            raise ValueError(
                f"The regular expression took longer than {TIMEOUT:g} s on this input; simplify it"
            ) from None

    def findall(self, text: str) -> list[Any]:
        return self._guard("findall", text)  # type: ignore[no-any-return]

    def finditer_groups(self, text: str) -> list[str]:
        return self._guard("finditer", text)  # type: ignore[no-any-return]

    def search(self, text: str) -> bool:
        return self._guard("search", text) is not None

    def sub(self, replacement: str, text: str) -> str:
        return self._guard("sub", replacement, text)  # type: ignore[no-any-return]


IGNORECASE = regex.IGNORECASE
