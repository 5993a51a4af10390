"""The triggers plugin's settings (``SERVICE_TRIGGERS_<FIELD>``), read with :func:`settings`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "triggers"
SETTINGS_PREFIX = "SERVICE_TRIGGERS_"


@dataclass(frozen=True)
class TriggersSettings:
    #: seconds between two scheduler ticks in each web process (0 turns this process's ticker off)
    tick_s: float = 1.0
    #: seconds a signed webhook's timestamp may differ from the server's clock (either way)
    signature_tolerance_s: int = 300
    #: bytes of a signed webhook delivery's body at most (a larger one is refused with the same 404)
    max_body_bytes: int = 1024 * 1024
    #: signed deliveries a trigger takes per minute (counted once the signature is verified, across all
    #: processes); past it 429 with ``Retry-After``. 0: no limit
    ingress_per_minute: int = 600
    #: requests a client address may make to the signed ingress per minute, every one counted (refused ones
    #: too: checking a signature costs a lookup and an HMAC), before the signature is checked; past it 429
    #: with ``Retry-After`` whatever the id, so it tells a prober nothing. 0: no limit
    ingress_per_address_per_minute: int = 1200

    BOUNDS: ClassVar[dict[str, tuple[float, float | None]]] = {
        "tick_s": (0, 3600),
        "signature_tolerance_s": (1, 86400),
        "max_body_bytes": (1, None),
        "ingress_per_minute": (0, None),
        "ingress_per_address_per_minute": (0, None),
    }


def settings(app: Flask | None = None) -> TriggersSettings:
    from core.appstate import settings_of

    return settings_of(TriggersSettings, app)
