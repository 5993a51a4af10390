import { useEffect, useRef, type ReactNode } from "react";

interface Props {
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
  testId?: string;
}

/** A dialog: focus moves in, Escape closes, focus returns on close. */
export function Modal({ title, onClose, children, footer, wide, testId }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>("[autofocus], input, textarea, select, button:not(.modal-close)");
    (first ?? ref.current)?.focus();
    return () => before?.focus?.();
  }, []);
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={ref}
        className={`modal${wide ? " modal-wide" : ""}`}
        role="dialog"
        aria-modal="true"
        aria-label={title}
        tabIndex={-1}
        data-testid={testId}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.stopPropagation();
            onClose();
          }
        }}
      >
        <header className="modal-header">
          <h2>{title}</h2>
          <button className="icon-btn modal-close" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </header>
        <div className="modal-body">{children}</div>
        {footer && <footer className="modal-footer">{footer}</footer>}
      </div>
    </div>
  );
}

/** Ask for a line of text (names). Resolves through onSubmit; closes itself on success. */
export function PromptDialog(props: {
  title: string;
  label: string;
  initial?: string;
  submitLabel?: string;
  onSubmit: (value: string) => Promise<void> | void;
  onClose: () => void;
}) {
  return (
    <Modal title={props.title} onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const value = String(new FormData(e.currentTarget).get("value") ?? "").trim();
          if (!value) return;
          await props.onSubmit(value);
        }}
      >
        <label className="field">
          <span>{props.label}</span>
          <input name="value" defaultValue={props.initial} autoFocus required />
        </label>
        <DialogFooter onClose={props.onClose} submit={props.submitLabel ?? "Save"} />
      </form>
    </Modal>
  );
}

export function ConfirmDialog(props: { title: string; text: string; confirmLabel?: string; onConfirm: () => void; onClose: () => void }) {
  return (
    <Modal
      title={props.title}
      onClose={props.onClose}
      footer={
        <>
          <button className="btn" onClick={props.onClose}>
            Cancel
          </button>
          <button className="btn btn-danger" onClick={props.onConfirm} autoFocus>
            {props.confirmLabel ?? "Delete"}
          </button>
        </>
      }
    >
      <p>{props.text}</p>
    </Modal>
  );
}

/** A dialog's Cancel and submit buttons. */
export function DialogFooter({ onClose, busy = false, submit, disabled = false }: { onClose: () => void; busy?: boolean; submit: string; disabled?: boolean }) {
  return (
    <div className="modal-footer">
      <button type="button" className="btn" onClick={onClose}>
        Cancel
      </button>
      <button type="submit" className="btn btn-primary" disabled={busy || disabled}>
        {submit}
      </button>
    </div>
  );
}
