// A flow's automation: its executions (list, filters, details, retry), schedules and signed webhook triggers.
import { useState } from "react";
import { Modal } from "../components/Modal";
import { ExecutionsTab } from "./ExecutionsTab";
import { PolicyTab } from "./PolicyTab";
import { SchedulesTab } from "./SchedulesTab";
import { WebhooksTab } from "./WebhooksTab";

const TABS = [
  { id: "executions", label: "Executions" },
  { id: "schedules", label: "Schedules" },
  { id: "webhooks", label: "Signed webhooks" },
  { id: "policy", label: "Retry policy" },
] as const;
export type AutomationTab = (typeof TABS)[number]["id"];

export function AutomationDialog(props: { flowId: string; initialTab?: AutomationTab; onClose: () => void; onOpenInPlayground?: (input: string) => void }) {
  const [tab, setTab] = useState<AutomationTab>(props.initialTab ?? "executions");
  return (
    <Modal title="Automation" onClose={props.onClose} wide testId="automation-dialog">
      <div className="tabs" role="tablist" aria-label="Automation">
        {TABS.map((t) => (
          <button key={t.id} role="tab" id={`automation-tab-${t.id}`} aria-selected={tab === t.id} className={tab === t.id ? "active" : ""} onClick={() => setTab(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-labelledby={`automation-tab-${tab}`} className="automation-panel">
        {tab === "executions" && <ExecutionsTab flowId={props.flowId} onOpenInPlayground={props.onOpenInPlayground} />}
        {tab === "schedules" && <SchedulesTab flowId={props.flowId} />}
        {tab === "webhooks" && <WebhooksTab flowId={props.flowId} />}
        {tab === "policy" && <PolicyTab flowId={props.flowId} />}
      </div>
    </Modal>
  );
}
