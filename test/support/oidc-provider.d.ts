// oidc-provider ships no types; the tests use its constructor, its Koa callback and findAccount.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown> & { findAccount?: (context: unknown, sub: string) => Promise<Account> });
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
