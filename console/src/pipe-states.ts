import { PipeState } from "../../gen/docpipe/v1/pipe_pb.js";

/** The badge tone of each pipe state, on the pipes list and in the pipe editor. */
export const PIPE_STATE_TONES = { [PipeState.ACTIVE]: "good", [PipeState.PAUSED]: "warn", [PipeState.UNSPECIFIED]: "neutral" } as const;
