import { autocompletion } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { Annotation, EditorState, Transaction } from "@codemirror/state";
import { EditorView, keymap, placeholder } from "@codemirror/view";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { type Evaluation, ExpressionEvaluator } from "./evaluate.ts";
import { completeRunData, jsonataLanguage } from "./jsonata-language.ts";

/** Marks the editor's text set from its value (changed elsewhere): not reported back, not undone by Ctrl+Z. */
const fromValue = Annotation.define<boolean>();

export interface ExpressionEditorProps {
  value: string;
  onChange: (value: string) => void;
  /** The control's accessible name and description (the field's label; its help and error). */
  label: string;
  description: string | undefined;
  invalid: boolean;
  readOnly: boolean;
  /** Paths the completion offers, such as "extract.fields.total". */
  paths: readonly string[];
  /** The run data the expression is evaluated against as it is typed. */
  data: unknown;
}

/** The editor's look, inside its shadow root (the console's stylesheet does not reach there). */
const EDITOR_THEME = EditorView.theme({
  "&": { fontFamily: "ui-monospace, monospace", fontSize: "0.9rem" },
  "&.cm-focused": { outline: "2px solid #0b5cad" },
  ".cm-content": { minHeight: "2.2rem", padding: "0.4rem 0" },
  ".cm-line": { padding: "0 0.55rem" },
  ".cm-placeholder": { color: "#57606a" },
});

/**
 * A JSONata expression in CodeMirror: highlighted, run-data paths completed (Ctrl-Space, or as one
 * types), and evaluated against `data` as one types, its value or JSONata's error shown below.
 */
export default function ExpressionEditor(props: ExpressionEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  // The latest props, for the editor's listeners, which are made once.
  const latest = useRef(props);
  latest.current = props;
  const [evaluation, setEvaluation] = useState<Evaluation | undefined>(undefined);
  const evaluator = useRef<ExpressionEvaluator | undefined>(undefined);

  useEffect(() => {
    // The editor lives in a shadow root: CodeMirror mounts its styles there as constructed
    // stylesheets, which the console's Content-Security-Policy (no inline styles) allows, where
    // in the document it would add <style> elements that the policy blocks.
    const root = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: "open" });
    const editor = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc: latest.current.value,
        extensions: [
          history(),
          bracketMatching(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          jsonataLanguage,
          syntaxHighlighting(defaultHighlightStyle),
          autocompletion({ override: [(context) => completeRunData(latest.current.paths)(context)] }),
          placeholder("JSONata, such as extract.fields.total > 1000"),
          EditorView.lineWrapping,
          EDITOR_THEME,
          EditorState.readOnly.of(latest.current.readOnly),
          EditorView.updateListener.of((update) => {
            if (update.docChanged && !update.transactions.some((transaction) => transaction.annotation(fromValue))) {
              latest.current.onChange(update.state.doc.toString());
            }
          }),
        ],
      }),
    });
    view.current = editor;
    evaluator.current = new ExpressionEvaluator();
    return () => {
      editor.destroy();
      evaluator.current?.stop();
    };
  }, []);

  // The editor follows a value changed elsewhere (a node renamed, another version restored). A
  // layout effect: it runs as its render commits, before the next keystroke; a passive effect could
  // run after one and put back the value from before it (a typed character lost under load).
  useLayoutEffect(() => {
    const editor = view.current;
    if (editor !== undefined && editor.state.doc.toString() !== props.value) {
      editor.dispatch({
        changes: { from: 0, to: editor.state.doc.length, insert: props.value },
        annotations: [fromValue.of(true), Transaction.addToHistory.of(false)],
      });
    }
  }, [props.value]);

  // The accessible name, description and state of the editable part: as text, since ids in the
  // document cannot be referred to from inside the shadow root.
  useEffect(() => {
    const content = view.current?.contentDOM;
    if (content === undefined) return;
    content.setAttribute("aria-label", props.label);
    if (props.description === undefined) content.removeAttribute("aria-description");
    else content.setAttribute("aria-description", props.description);
    content.setAttribute("aria-invalid", String(props.invalid));
  }, [props.label, props.description, props.invalid]);

  useEffect(() => {
    if (props.value.trim() === "") {
      setEvaluation(undefined);
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      void evaluator.current?.evaluate(props.value, props.data).then((answer) => {
        if (current && answer !== undefined) setEvaluation(answer);
      });
    }, 150);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [props.value, props.data]);

  return (
    <div className="expression">
      <div ref={host} className={`expression-editor${props.invalid ? " invalid" : ""}`} />
      {evaluation !== undefined && (
        <>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long value scrolls in its box, which must then be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable). */}
          <output className={`expression-result${"error" in evaluation ? " error" : ""}`} aria-live="polite" tabIndex={0}>
            {"error" in evaluation ? `Error ${evaluation.error}` : evaluation.result === undefined ? "No value (nothing matches)" : `= ${evaluation.result}`}
          </output>
        </>
      )}
    </div>
  );
}
