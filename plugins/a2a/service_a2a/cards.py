"""Agent cards: the reference's v0.3 card of an agent flow, overrides applied, checked by the a2a-sdk models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.contracts import FlowRecord
from core.engine.lazy import lazy_import
from core.errors import ApiError

if TYPE_CHECKING:
    import pydantic
    from a2a.compat.v0_3 import types as v03
else:  # the A2A SDK's models (about 0.2 s) on the first A2A request, not at start-up
    v03 = lazy_import("a2a.compat.v0_3.types")
    pydantic = lazy_import("pydantic")

#: members of ``a2a_card_overrides`` (everything else is refused when a card is built)
OVERRIDABLE = ("name", "description", "version", "tags", "examples")
#: folder auth types whose JSON-RPC needs the flow owner's API key (the card names the scheme)
KEYED = ("apikey", "oauth")


def override_errors(raw: Any) -> list[dict[str, Any]]:
    """What is wrong with a card overrides object, as ``{loc, msg, type}`` items (empty: it is fine)."""
    loc = "a2a_card_overrides"
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        return [{"loc": [loc], "msg": "must be an object", "type": "type_error"}]
    errors = [
        {"loc": [loc, key], "msg": f"unknown member (allowed: {', '.join(OVERRIDABLE)})", "type": "extra_forbidden"}
        for key in sorted(set(raw) - set(OVERRIDABLE))
    ]
    for key in ("name", "description", "version"):
        if raw.get(key) is not None and (not isinstance(raw[key], str) or not raw[key].strip()):
            errors.append({"loc": [loc, key], "msg": "must be a non-empty string", "type": "value_error"})
    for key in ("tags", "examples"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            errors.append({"loc": [loc, key], "msg": "must be a list of strings", "type": "type_error"})
    return errors


def overrides(flow: FlowRecord) -> dict[str, Any]:
    """The flow's card overrides, checked: known members with the right types (422 otherwise)."""
    raw = flow.a2a_card_overrides or {}
    errors = override_errors(raw)
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":  # the card's message names every unknown member
            unknown = [str(e["loc"][-1]) for e in errors if e["type"] == "extra_forbidden"]
            raise ApiError(422, f"a2a_card_overrides: unknown members {', '.join(unknown)}")
        raise ApiError(422, f"{where} {first['msg']}")
    out: dict[str, Any] = {}
    for key in ("name", "description", "version"):
        if raw.get(key) is not None:
            out[key] = raw[key]
    for key in ("tags", "examples"):
        if raw.get(key) is not None:
            out[key] = list(raw[key])
    return out


def build_card(flow: FlowRecord, *, rpc_url: str, auth_type: str | None, server_version: str) -> dict[str, Any]:
    """The agent card JSON of ``flow`` (reference-api.md section 6), validated as an a2a-sdk ``AgentCard``."""
    extra = overrides(flow)
    name = extra.get("name") or str(flow.name or "Agent")
    description = extra.get("description") or str(flow.description or name)
    skill: dict[str, Any] = {
        "id": flow.id,
        "name": name,
        "description": description,
        "tags": extra.get("tags") or ["service"],
        "inputModes": ["text/plain", "application/json"],
        "outputModes": ["text/plain", "application/json"],
    }
    if extra.get("examples"):
        skill["examples"] = extra["examples"]
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "version": extra.get("version") or server_version,
        "protocolVersion": "0.3.0",
        "url": rpc_url,
        "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [skill],
    }
    if (auth_type or "apikey") in KEYED:
        card["securitySchemes"] = {
            "apiKey": {
                "type": "apiKey",
                "in": "header",
                "name": "x-api-key",
                "description": "An API key of the agent's owner",
            }
        }
        card["security"] = [{"apiKey": []}]
    try:
        model = v03.AgentCard.model_validate(card)
    except pydantic.ValidationError as exc:  # an override the protocol does not accept
        raise ApiError(422, f"Invalid agent card: {exc.errors()[0].get('msg')}") from None
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    # the reference publishes the flow's input schema on the skill (an extension member the model drops)
    dumped["skills"][0]["inputSchema"] = {
        "type": "object",
        "properties": {"input_value": {"type": "string"}, "session_id": {"type": "string"}},
        "required": [],
    }
    return dumped
