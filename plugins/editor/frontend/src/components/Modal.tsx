import { useEffect, useRef, type ReactNode } from "react";

interface Props {
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
  testId?: string;
  /** why the caller may only look (e.g. their role on a shared flow): said above the body, whose controls are
   * disabled (a disabled fieldset); closing stays possible */
  readOnly?: string;
}

const FOCUSABLE = 'a[href], button:not(:disabled), input:not(:disabled):not([type="hidden"]), select:not(:disabled), textarea:not(:disabled), [tabindex]:not([tabindex="-1"])';

/**
 * A dialog: focus moves in and stays in (Tab and Shift+Tab cycle through it, focus that escaped comes back on
 * the next Tab), Escape closes the topmost dialog wherever focus is, and focus returns on close.
 */
export function Modal({ title, onClose, children, footer, wide, testId, readOnly }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>("[autofocus], input, textarea, select, button:not(.modal-close)");
    (first ?? ref.current)?.focus();
    const onKey = (e: KeyboardEvent) => {
      const dialog = ref.current;
      if (!dialog) return;
      const backdrops = document.querySelectorAll(".modal-backdrop");
      if (backdrops[backdrops.length - 1] !== dialog.parentElement) return; // a dialog opened above this one
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        closeRef.current();
        return;
      }
      if (e.key !== "Tab") return;
      const items = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null || el === document.activeElement);
      if (!items.length) {
        e.preventDefault();
        dialog.focus();
        return;
      }
      const at = items.indexOf(document.activeElement as HTMLElement);
      if (at === -1 || !dialog.contains(document.activeElement)) {
        e.preventDefault();
        (e.shiftKey ? items[items.length - 1] : items[0]).focus();
      } else if (!e.shiftKey && at === items.length - 1) {
        e.preventDefault();
        items[0].focus();
      } else if (e.shiftKey && at === 0) {
        e.preventDefault();
        items[items.length - 1].focus();
      }
    };
    document.addEventListener("keydown", onKey, true);
    return () => {
      document.removeEventListener("keydown", onKey, true);
      before?.focus?.();
    };
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
      >
        <header className="modal-header">
          <h2>{title}</h2>
          <button className="icon-btn modal-close" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </header>
        <div className="modal-body">
          {readOnly ? (
            <>
              <p className="banner banner-info" role="status" data-testid="modal-read-only">
                {readOnly}
              </p>
              <fieldset disabled className="modal-fieldset">
                {children}
              </fieldset>
            </>
          ) : (
            children
          )}
        </div>
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
