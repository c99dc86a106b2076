import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { describeError } from "./errors.ts";

/** An RPC's failure: its message and reason, announced to screen readers. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const problem = describeError(error);
  return (
    <p className="notice error" role="alert">
      {problem.message} <span className="reason">({problem.reason ?? problem.code})</span>
    </p>
  );
}

/** A labelled control with its hint and the service's error about it, tied together for assistive technology. */
export function Field(props: {
  label: string;
  error?: string | undefined;
  hint?: string;
  children: (control: { id: string; "aria-describedby"?: string; "aria-invalid"?: boolean }) => ReactNode;
}) {
  const id = useId();
  const described = [props.hint ? `${id}-hint` : "", props.error ? `${id}-error` : ""].filter((part) => part !== "").join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children({ id, ...(described === "" ? {} : { "aria-describedby": described }), ...(props.error ? { "aria-invalid": true } : {}) })}
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
      {props.error && (
        <small id={`${id}-error`} className="field-error">
          {props.error}
        </small>
      )}
    </div>
  );
}

/** A modal dialog (the browser's <dialog>: focus stays inside, Escape closes). */
export function Modal(props: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog !== null && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={props.onClose}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** Asks before an action; the action's error is shown inside. */
export function ConfirmDialog(props: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  pending: boolean;
  error: unknown;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Modal title={props.title} onClose={props.onCancel}>
      {props.children}
      <ErrorNotice error={props.error} />
      <div className="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" className={props.danger ? "danger" : "primary"} disabled={props.pending} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </Modal>
  );
}

/** Copies text to the clipboard and says whether it worked. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [status, setStatus] = useState("");
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setStatus("Copied"),
      () => setStatus("Could not copy: select the text and copy it"),
    );
  return (
    <span className="copy">
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" className="muted">
        {status}
      </span>
    </span>
  );
}

/** A one-line state such as Active / Paused, coloured by tone and always written out. */
export function Badge({ tone, children }: { tone: "good" | "warn" | "bad" | "neutral"; children: ReactNode }) {
  return <span className={`badge ${tone}`}>{children}</span>;
}

/** What an empty list shows: what it is and what to do next. */
export function EmptyState({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** A table that scrolls sideways on narrow screens; the box can take focus so keyboards can scroll it too. */
export function TableBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable).
    <section className="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

/** Loads the next page of a paged list; shown only while there is one, so no list is silently cut. */
export function LoadMore({ query }: { query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown } }) {
  if (!query.hasNextPage) return null;
  return (
    <div className="load-more">
      <button type="button" onClick={() => query.fetchNextPage()} disabled={query.isFetchingNextPage}>
        {query.isFetchingNextPage ? "Loading…" : "Load more"}
      </button>
    </div>
  );
}

/** A column of a DataTable: its header (written out, or for screen readers only) and each row's cell. */
export interface Column<T> {
  header: string;
  /** The header is read to screen readers only (a column of buttons). */
  hiddenHeader?: boolean;
  /** The cell names its row (a row header, `<th scope="row">`). */
  rowHeader?: boolean;
  className?: string;
  cell: (row: T) => ReactNode;
}

/**
 * A list as a table in a TableBox, one row per item; while the list loads, nothing; an empty list
 * shows `empty` (what it is and what to do next) when given, else the table's headers alone.
 */
export function DataTable<T>(props: { label: string; columns: Column<T>[]; rows: readonly T[] | undefined; rowKey: (row: T) => string; empty?: ReactNode }) {
  const { rows, columns } = props;
  if (rows === undefined) return null;
  if (rows.length === 0 && props.empty !== undefined) return <EmptyState>{props.empty}</EmptyState>;
  return (
    <TableBox label={props.label}>
      <table>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column.header}>
                {column.hiddenHeader ? <span className="visually-hidden">{column.header}</span> : column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {columns.map((column) =>
                column.rowHeader ? (
                  <th scope="row" key={column.header} className={column.className}>
                    {column.cell(row)}
                  </th>
                ) : (
                  <td key={column.header} className={column.className}>
                    {column.cell(row)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
