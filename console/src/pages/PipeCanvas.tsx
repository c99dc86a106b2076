import { Background, type Edge, Handle, MarkerType, type Node, type NodeProps, Position, ReactFlow } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { clone } from "@bufbuild/protobuf";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import type { Run } from "../../../gen/docpipe/v1/run_pb.js";
import { type Node as PipeNodeMessage, type Pipeline, PipelineSchema } from "../../../gen/docpipe/v1/pipe_pb.js";
import { Field } from "../components.tsx";
import { layoutGraph } from "../graph-layout.ts";
import { kindLabel, NODE_KINDS } from "../node-kinds.ts";
import { NodeForm } from "./NodeForm.tsx";
import { runDataOf, runDataPaths, sampleRunData, stepOutput } from "../expressions/run-data.ts";
import { type NodeRunStatus, nodeStatus } from "../node-status.ts";
import { TryIt, type TryTarget } from "./TryIt.tsx";
import { refusalPath } from "../node-form.ts";
import { addNode, connect, deleteNode, disconnect, type GraphEdge, graphOf, type NodeKind, renameNode, renameProblem } from "../pipeline-graph.ts";

interface Props {
  pipeline: Pipeline;
  onChange: (pipeline: Pipeline) => void;
  readOnly: boolean;
  /**
   * The service's refusal of the node with this id (in the pipeline sent), shown on that node, and
   * on the field its path names ("pipeline.nodes[3].route.routes[0].when") in the node's form.
   */
  problem?: { nodeId: string; message: string; field: string | undefined } | undefined;
  /** The saved pipe, to test with a document and pick a run from; absent for a pipe not yet created. */
  tryIt?: TryTarget | undefined;
}

type CanvasNode = Node<{ id: string; kind: NodeKind | undefined; invalid: boolean; status: NodeRunStatus | undefined }, "pipe">;

/** A node on the canvas: its id, its kind, a handle to connect from (bottom) and to (top). */
function PipeNode({ data, selected }: NodeProps<CanvasNode>) {
  return (
    <div className={`canvas-node${selected ? " selected" : ""}${data.invalid ? " invalid" : ""}${data.status ? ` status-${data.status}` : ""}`}>
      <Handle type="target" position={Position.Top} />
      <strong>{data.id}</strong>
      <small>{kindLabel(data.kind)}</small>
      {data.status && <span className="node-status">{data.status}</span>}
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

const NODE_TYPES = { pipe: PipeNode };

/**
 * The pipeline as a graph: nodes laid out top to bottom as runs flow, edges for next, route targets
 * and otherwise, a split's child runs to its merge. Nodes are added from the palette, connected by
 * dragging from a node's bottom handle (or in the panel), and the selected node's settings are
 * edited in its form in the panel beside the canvas, where it is also renamed, connected,
 * disconnected or deleted. A refused node is selected, its form showing the refusal on its field.
 */
export default function PipeCanvas({ pipeline, onChange, readOnly, problem, tryIt }: Props) {
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const graph = useMemo(() => graphOf(pipeline), [pipeline]);
  const positions = useMemo(() => layoutGraph(graph.nodes, graph.edges), [graph]);
  const invalidId = problem?.nodeId;
  // A refused node is selected, its form showing the refusal; the operator may select another after.
  const refusedId = problem?.nodeId;
  useEffect(() => {
    if (refusedId !== undefined) setSelected(refusedId);
  }, [refusedId]);
  // The run shown on the canvas (each node's status and output), its data what expressions are
  // completed and tried against; without one, data shaped as this pipeline writes it.
  const [run, setRun] = useState<Run | undefined>(undefined);
  const data = useMemo(() => (run === undefined ? sampleRunData(pipeline) : runDataOf(run)), [pipeline, run]);
  const paths = useMemo(() => [...new Set([...pipeline.nodes.map((node) => node.id), ...runDataPaths(data)])], [pipeline, data]);
  const nodes: CanvasNode[] = graph.nodes.map((node) => ({
    id: node.id,
    type: "pipe",
    position: positions.get(node.id) ?? { x: 0, y: 0 },
    data: { ...node, invalid: node.id === invalidId, status: run === undefined ? undefined : nodeStatus(run, node.id) },
    selected: node.id === selected,
    ariaLabel: `${kindLabel(node.kind)} node ${node.id}${run === undefined ? "" : `, ${nodeStatus(run, node.id)}`}`,
  }));
  const edges: Edge[] = graph.edges.map((edge) => ({
    id: edge.id,
    source: edge.source,
    target: edge.target,
    label: edge.label === undefined ? undefined : shorten(edge.label),
    animated: edge.kind === "gathers",
    className: `edge-${edge.kind}`,
    markerEnd: { type: MarkerType.ArrowClosed },
    focusable: false,
  }));
  const current = selected === undefined ? undefined : graph.nodes.find((node) => node.id === selected);

  return (
    <>
      {problem && (
        <p className="notice error" role="alert">
          The pipe was not saved: node <code>{problem.nodeId}</code>, marked on the canvas: {problem.message}
        </p>
      )}
      {tryIt !== undefined && <TryIt target={tryIt} onRun={setRun} />}
      <div className="canvas-editor">
        {!readOnly && (
          <nav className="palette" aria-label="Add a node">
            <h3>Add a node</h3>
            {NODE_KINDS.map((kind) => (
              <button
                key={kind}
                type="button"
                onClick={() => {
                  const added = addNode(pipeline, kind);
                  onChange(added.pipeline);
                  setSelected(added.id);
                }}
              >
                {kindLabel(kind)}
              </button>
            ))}
          </nav>
        )}
        <section className="canvas" aria-label="Pipeline graph">
          <ReactFlow
            // Drawn anew, and fitted to the view, when a node is added or deleted.
            key={graph.nodes.length}
            nodes={nodes}
            edges={edges}
            nodeTypes={NODE_TYPES}
            nodesDraggable={false}
            nodesConnectable={!readOnly}
            elementsSelectable
            deleteKeyCode={null}
            fitView
            fitViewOptions={{ padding: 0.15, maxZoom: 1 }}
            minZoom={0.2}
            proOptions={{ hideAttribution: true }}
            onNodeClick={(_, node) => setSelected(node.id)}
            onPaneClick={() => setSelected(undefined)}
            onConnect={(connection) => onChange(connect(pipeline, connection.source, connection.target))}
          >
            <Background gap={16} />
          </ReactFlow>
        </section>
        <aside className="node-panel" aria-label="Selected node">
          {current === undefined ? (
            <p className="muted">Select a node to rename, connect or delete it{readOnly ? "" : ", or add one from the palette"}.</p>
          ) : (
            <>
              {run !== undefined && <NodeRun run={run} id={current.id} />}
              <NodePanel
                key={current.id}
                pipeline={pipeline}
                id={current.id}
                kind={current.kind}
                edges={graph.edges.filter((edge) => edge.source === current.id)}
                readOnly={readOnly}
                onChange={onChange}
                onSelect={setSelected}
                problem={problem?.nodeId === current.id ? problem : undefined}
                data={data}
                paths={paths}
              />
            </>
          )}
        </aside>
      </div>
    </>
  );
}

/** The chosen run at the selected node: its status, what it produced or why it failed. */
function NodeRun({ run, id }: { run: Run; id: string }) {
  const step = run.steps.findLast((candidate) => candidate.nodeId === id);
  const output = step === undefined ? undefined : stepOutput(step);
  return (
    <section className="node-run" aria-label={`Run at node ${id}`}>
      <h4>
        In this run: <span className={`node-status status-${nodeStatus(run, id)}`}>{nodeStatus(run, id)}</span>
      </h4>
      {step !== undefined && step.error !== "" && <p className="notice error">{step.error}</p>}
      {output !== undefined && (
        <details open>
          <summary>Output</summary>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable). */}
          <pre className="scroll" tabIndex={0}>
            {JSON.stringify(output, null, 2)}
          </pre>
        </details>
      )}
    </section>
  );
}

/** A route's condition as an edge label: its first 40 characters. */
function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function NodePanel(props: {
  pipeline: Pipeline;
  id: string;
  kind: NodeKind | undefined;
  edges: GraphEdge[];
  readOnly: boolean;
  onChange: (pipeline: Pipeline) => void;
  onSelect: (id: string | undefined) => void;
  problem: Props["problem"];
  data: unknown;
  paths: readonly string[];
}) {
  const { pipeline, id, edges, readOnly, onChange, onSelect } = props;
  const node = pipeline.nodes.find((candidate) => candidate.id === id);
  const refusal = refusalPath(props.problem?.field, props.kind);
  const setSettings = (settings: Record<string, unknown>) => {
    const next = clone(PipelineSchema, pipeline);
    const changed = next.nodes.find((candidate) => candidate.id === id)!;
    changed.kind = { case: props.kind, value: settings } as PipeNodeMessage["kind"];
    onChange(next);
  };
  const [newId, setNewId] = useState(id);
  const [target, setTarget] = useState("");
  const renameError = newId === id ? undefined : renameProblem(pipeline, id, newId);
  const rename = (event: FormEvent) => {
    event.preventDefault();
    if (renameError !== undefined || newId === id) return;
    onChange(renameNode(pipeline, id, newId));
    onSelect(newId);
  };
  const targets = pipeline.nodes.map((node) => node.id).filter((candidate) => candidate !== id && !edges.some((edge) => edge.target === candidate));
  return (
    <div>
      <h3>
        {kindLabel(props.kind)} <code>{id}</code>
      </h3>
      <fieldset disabled={readOnly}>
        <div className="inline-form">
          <Field label="Node id" error={renameError ?? (refusal?.node && refusal.path === "id" ? props.problem?.message : undefined)}>
            {(control) => (
              <input
                {...control}
                value={newId}
                onChange={(event) => setNewId(event.target.value)}
                onKeyDown={(event) => event.key === "Enter" && rename(event)}
              />
            )}
          </Field>
          <button type="button" onClick={rename} disabled={renameError !== undefined || newId === id}>
            Rename
          </button>
        </div>
        {refusal?.node && refusal.path !== "id" && (
          <p className="field-error" role="alert">
            {props.problem?.message}
          </p>
        )}
        {node !== undefined && props.kind !== undefined && (
          <NodeForm
            kind={props.kind}
            settings={node.kind.value as unknown as Record<string, unknown>}
            onChange={setSettings}
            context={{ nodeIds: pipeline.nodes.map((each) => each.id).filter((each) => each !== id), paths: props.paths, data: props.data, readOnly }}
            refusal={refusal === undefined || refusal.node || props.problem === undefined ? undefined : { path: refusal.path, message: props.problem.message }}
          />
        )}
        <h4>Runs next</h4>
        {edges.length === 0 ? (
          <p className="muted">Nothing: the branch ends here.</p>
        ) : (
          <ul className="edges">
            {edges.map((edge) => (
              <li key={edge.id}>
                {edgeText(edge)} <code>{edge.target}</code>
                {edge.kind !== "gathers" && (
                  <button
                    type="button"
                    className="small"
                    onClick={() => onChange(disconnect(pipeline, edge))}
                    aria-label={`Disconnect ${id} from ${edge.target}`}
                  >
                    Disconnect
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {targets.length > 0 && (
          <div className="inline-form">
            <Field label="Connect to" hint={props.kind === "route" ? "Taken when no route's condition holds (otherwise)." : undefined}>
              {(control) => (
                <select {...control} value={target} onChange={(event) => setTarget(event.target.value)}>
                  <option value="">Choose a node…</option>
                  {targets.map((candidate) => (
                    <option key={candidate} value={candidate}>
                      {candidate}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <button
              type="button"
              disabled={target === ""}
              onClick={() => {
                onChange(connect(pipeline, id, target));
                setTarget("");
              }}
            >
              Connect
            </button>
          </div>
        )}
        <div className="actions start">
          <button
            type="button"
            className="danger"
            onClick={() => {
              onChange(deleteNode(pipeline, id));
              onSelect(undefined);
            }}
          >
            Delete node
          </button>
        </div>
      </fieldset>
    </div>
  );
}

function edgeText(edge: GraphEdge): string {
  switch (edge.kind) {
    case "route":
      return `when ${shorten(edge.label ?? "")} →`;
    case "otherwise":
      return "otherwise →";
    case "gathers":
      return "child runs gathered by";
    case "listed-after":
      return "→ (listed after it)";
    default:
      return "→";
  }
}
