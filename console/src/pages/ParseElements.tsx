import type { JsonValue } from "@bufbuild/protobuf";

/** An element of a parse step's output (src/documents/parse/elements/element.ts), as it arrives in JSON. */
interface Element {
  type: string;
  text: string;
  page?: number;
  level?: number;
  table?: { rows: string[][] };
}

/** Elements shown at most; the rest are in the output's JSON. */
const SHOWN = 500;

function isElement(value: JsonValue): value is JsonValue & Element {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof value.type === "string" && typeof value.text === "string";
}

/** A parse step's elements, in reading order: type (a Title with its level), page, text; a table as a table. */
export function ParseElements({ elements }: { elements: JsonValue[] }) {
  const shown = elements.filter(isElement).slice(0, SHOWN);
  return (
    <details>
      <summary>Elements ({elements.length.toLocaleString("en")})</summary>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable). */}
      <div className="scroll" tabIndex={0}>
        <table className="elements">
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Page</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((element, index) => (
              // Elements have no identity beyond their place in the document.
              // biome-ignore lint/suspicious/noArrayIndexKey: the list is never reordered
              <tr key={index}>
                <td>{element.level === undefined ? element.type : `${element.type} ${element.level}`}</td>
                <td>{element.page ?? ""}</td>
                <td>{element.table ? <ElementTable rows={element.table.rows} /> : element.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {elements.length > SHOWN && (
          <p className="muted">
            The first {SHOWN} of {elements.length.toLocaleString("en")} elements; all are in the output.
          </p>
        )}
      </div>
    </details>
  );
}

/** A Table element's rows, the first as its header. */
function ElementTable({ rows }: { rows: string[][] }) {
  const [head, ...body] = rows;
  return (
    <table>
      {head && (
        <thead>
          <tr>
            {head.map((cell, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: cells are never reordered
              <th key={index} scope="col">
                {cell}
              </th>
            ))}
          </tr>
        </thead>
      )}
      <tbody>
        {body.map((row, rowIndex) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are never reordered
          <tr key={rowIndex}>
            {row.map((cell, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: cells are never reordered
              <td key={index}>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
