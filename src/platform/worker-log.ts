/** The part of a pino logger the workers use. Secrets are never logged. */
export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}
