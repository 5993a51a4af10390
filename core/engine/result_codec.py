"""A suspended run as JSON, and back: what a checkpoint stores so any process can resume it.

A checkpoint holds the graph that ran (its flow JSON, tweaks already
applied), the results of every vertex that completed (typed values encoded
with a type tag, so a ``Message`` comes back a ``Message``), the vertices
found inactive, and the suspended vertex's request and state. Nothing in it
is code; decoding builds only the engine's own value types.
"""

from __future__ import annotations

from typing import Any

from core.engine.results import RunResult, VertexResult
from core.engine.types import Data, DataFrame, Message

__all__ = ["decode_results", "decode_value", "encode_results", "encode_value"]

_TAG = "__engine_type__"


def encode_value(value: Any) -> Any:
    """A JSON value for an engine value; typed values are tagged so :func:`decode_value` restores them."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Message):
        return {_TAG: "Message", "value": value.to_dict()}
    if isinstance(value, Data):
        return {
            _TAG: "Data",
            "data": encode_value(value.data),
            "text_key": value.text_key,
            "default_value": value.default_value,
        }
    if isinstance(value, DataFrame):
        return {_TAG: "DataFrame", "rows": encode_value(value.rows), "columns": list(value.columns)}
    if isinstance(value, dict):
        return {str(k): encode_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [encode_value(v) for v in value]
    return str(value)


def decode_value(value: Any) -> Any:
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(_TAG)
    if tag == "Message":
        return Message.from_dict(value.get("value") or {})
    if tag == "Data":
        return Data(
            decode_value(value.get("data") or {}),
            text_key=value.get("text_key") or "text",
            default_value=value.get("default_value", ""),
        )
    if tag == "DataFrame":
        return DataFrame(decode_value(value.get("rows") or []), columns=value.get("columns"))
    return {k: decode_value(v) for k, v in value.items()}


def _plain(value: Any) -> bool:
    """Can :func:`encode_value` restore ``value`` exactly? (Not: tools, model clients and other live objects.)"""
    if value is None or isinstance(value, (str, int, float, bool, Message, Data, DataFrame)):
        return True
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return False


def encode_results(result: RunResult) -> dict[str, Any]:
    """The completed vertices of ``result`` (in run order) and the inactive ones.

    A vertex whose outputs are live objects (a component's tools, a language model)
    is left out: it is built again when the run resumes (such vertices only build
    objects from their settings).
    """
    done = []
    for vid in result.order:
        vr = result.results.get(vid)
        if vr is None or not vr.valid or not _plain(vr.outputs):
            continue
        done.append(
            {
                "id": vr.id,
                "key": vr.key,
                "display_name": vr.display_name,
                "outputs": encode_value(vr.outputs),
                "stopped_outputs": sorted(vr.stopped_outputs),
                "inactivated": list(vr.inactivated),
                "duration": vr.duration,
                "timedelta": vr.timedelta,
            }
        )
    return {"completed": done, "inactive": sorted(result.inactive)}


def decode_results(data: dict[str, Any]) -> tuple[dict[str, VertexResult], set[str], list[str]]:
    """``(results by vertex id, inactive vertex ids, run order)`` of :func:`encode_results` output."""
    results: dict[str, VertexResult] = {}
    order: list[str] = []
    for item in data.get("completed") or []:
        vr = VertexResult(str(item["id"]), str(item.get("key") or ""), str(item.get("display_name") or ""))
        vr.outputs = decode_value(item.get("outputs") or {})
        vr.stopped_outputs = set(item.get("stopped_outputs") or [])
        vr.inactivated = list(item.get("inactivated") or [])
        vr.duration = str(item.get("duration") or "0 ms")
        vr.timedelta = float(item.get("timedelta") or 0.0)
        results[vr.id] = vr
        order.append(vr.id)
    return results, set(data.get("inactive") or []), order
