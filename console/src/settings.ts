import { useQuery } from "@tanstack/react-query";

/** What the serving process tells the console: the JSON of ConsoleSettings in src/inbound/rpc/console.ts (an unset edgeUrl is left out). */
export interface ConsoleSettings {
  edgeUrl?: string;
  /** Whether people may sign in with the OpenID provider (/auth/oidc/start). */
  singleSignOn?: boolean;
  /** The domain email triggers receive for, when this deployment receives mail. */
  emailDomain?: string;
}

/** The console's settings; undefined until loaded. */
export function useSettings(): ConsoleSettings | undefined {
  return useQuery({
    queryKey: ["console-settings"],
    queryFn: async (): Promise<ConsoleSettings> => (await fetch("settings.json")).json(),
    staleTime: Infinity,
  }).data;
}
