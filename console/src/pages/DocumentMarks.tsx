import type { Box } from "../review-fields.ts";

/** Where one value was read on a page: its field's key and name, and box. */
export interface Mark {
  id: string;
  name: string;
  page: number;
  box: Box;
}

/**
 * The marks of one page, drawn over the page as it is shown: each box is placed in percent of the
 * page's own size (`width` and `height` in the box's units: PDF points, or a picture's pixels),
 * so the marks stay on their values at any rendered size. Both count from the top-left corner.
 */
export function DocumentMarks({ marks, width, height, active }: { marks: readonly Mark[]; width: number; height: number; active: string | undefined }) {
  return (
    <div className="marks" aria-hidden="true">
      {marks.map(({ id, name, box: [x0, y0, x1, y1] }) => (
        <div
          key={id}
          className={id === active ? "mark active" : "mark"}
          data-id={id}
          style={{
            left: `${(x0 / width) * 100}%`,
            top: `${(y0 / height) * 100}%`,
            width: `${((x1 - x0) / width) * 100}%`,
            height: `${((y1 - y0) / height) * 100}%`,
          }}
        >
          <span>{name}</span>
        </div>
      ))}
    </div>
  );
}
