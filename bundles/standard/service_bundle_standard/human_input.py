"""Human Input: pause the run for a person's decision, then route to that decision's branch.

Built on the engine's suspension (:meth:`Component.suspend`): the first build stores a
checkpoint whose request carries the prompt, the decisions and the deadline; the run service
resumes the run with the answer (``core.runs.resume``), which builds this vertex again. Each
decision has an output ``branch_<decision>`` (``Approve`` -> ``branch_approve``); the branches
not chosen are stopped, so their vertices are inactive.
"""

from __future__ import annotations

import re
import time
from typing import Any

from core.engine import Component, Message, Output
from core.engine.inputs import BoolInput, Input, MessageTextInput
from core.engine.types import to_text

DEFAULT_DECISIONS = ["Approve", "Reject"]
UNITS = {"Minutes": 60, "Hours": 3600, "Days": 86400}


class ActionPickerInput(Input):
    """The reference's decision list editor (``type: actionPicker``)."""

    input_type = "ActionPickerInput"
    field_type = "actionPicker"
    default: Any = []


class DurationInput(Input):
    """A ``{"unit", "value"}`` duration (``type: duration``)."""

    input_type = "DurationInput"
    field_type = "duration"
    default: Any = {}


def branch_name(decision: str) -> str:
    return "branch_" + (re.sub(r"[^0-9a-z]+", "_", decision.strip().lower()).strip("_") or "decision")


def timeout_seconds(value: Any) -> float | None:
    if not isinstance(value, dict) or value.get("value") in (None, "", 0):
        return None
    unit = value.get("unit") or "Days"
    if unit not in UNITS:
        raise ValueError(f"Invalid timeout unit '{unit}'. Use one of: {', '.join(UNITS)}")
    try:
        amount = float(value["value"])
    except (TypeError, ValueError):
        raise ValueError(f"Invalid timeout value {value.get('value')!r}") from None
    if amount <= 0:
        raise ValueError("The timeout must be positive.")
    return amount * UNITS[unit]


class HumanInput(Component):
    key = "HumanInput"
    display_name = "Human Input"
    display_names = {"en": "Human Input", "fr": "Saisie humaine", "de": "Menschliche Eingabe", "es": "Entrada humana"}
    description = "Pause the flow until a person chooses one of the decisions, then continue on that branch."
    icon = "user-check"
    category = "flow_controls"
    dynamic_outputs = True
    inputs = [
        MessageTextInput("prompt", "Prompt", "", info="What the person is asked."),
        ActionPickerInput(
            "decisions",
            "Decisions",
            list(DEFAULT_DECISIONS),
            required=True,
            is_list=True,
            info="The choices offered; each has its own output branch.",
        ),
        DurationInput(
            "timeout",
            "Timeout",
            {"unit": "Days", "value": 3},
            advanced=True,
            show=False,
            options=list(UNITS),
            info="How long the person has to answer.",
        ),
        BoolInput(
            "enable_fallback",
            "Enable Fallback",
            False,
            advanced=True,
            info="A late answer takes the last decision's branch instead of failing the run.",
        ),
    ]
    outputs = [
        Output("branch_approve", "Approve", "route_branch", ["Message"], group_outputs=True),
        Output("branch_reject", "Reject", "route_branch", ["Message"], group_outputs=True),
    ]

    def _decisions(self) -> list[str]:
        values = self.decisions if isinstance(self.decisions, list) else [self.decisions]
        decisions = [to_text(d.get("name") if isinstance(d, dict) else d).strip() for d in values]
        decisions = [d for d in decisions if d]
        if not decisions:
            raise ValueError("Add at least one decision.")
        return decisions

    def stop(self, output_name: str) -> None:
        # decisions beyond the two declared outputs are node-declared (dynamic) outputs
        self._stopped.add(output_name)

    def _choose(self) -> str:
        if hasattr(self, "_chosen"):
            return self._chosen
        decisions = self._decisions()
        resumed = self.resumed()
        if resumed is None:
            limit = timeout_seconds(self.timeout)
            self.suspend(
                {
                    "type": "human_input",
                    "prompt": to_text(self.prompt),
                    "decisions": decisions,
                    "timeout_seconds": limit,
                },
                state={"deadline": time.time() + limit if limit else None},
            )
        answer = to_text(resumed.get("answer")).strip()
        by_name = {d.lower(): d for d in decisions} | {branch_name(d): d for d in decisions}
        chosen = by_name.get(answer.lower())
        deadline = (resumed.get("state") or {}).get("deadline")
        if deadline is not None and time.time() > float(deadline):
            if not self.enable_fallback:
                raise ValueError("The decision came after the timeout.")
            chosen = decisions[-1]
        if chosen is None:
            raise ValueError(f"'{answer}' is not one of the decisions: {', '.join(decisions)}")
        for decision in decisions:
            if decision != chosen:
                self.stop(branch_name(decision))
        self._chosen = chosen
        self.status = f"Decision: {chosen}"
        return chosen

    def route_branch(self) -> Message:
        chosen = self._choose()
        return Message(text=to_text(self.prompt) or chosen, properties={"decision": chosen})

    def build_dynamic_output(self, name: str) -> Message:
        return self.route_branch()

    def active_outputs(self) -> list[str] | None:
        return [branch_name(d) for d in self._decisions()]


COMPONENTS = [HumanInput]
