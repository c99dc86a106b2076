import type { DescService } from "@bufbuild/protobuf";
import { createConnectQueryKey } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";

/**
 * A function that marks stale the cached answers of the given services only (every method, any
 * input), so a change refetches what it can have changed and nothing else.
 */
export function useInvalidate(...services: DescService[]): () => Promise<void> {
  const queryClient = useQueryClient();
  return async () => {
    await Promise.all(services.map((schema) => queryClient.invalidateQueries({ queryKey: createConnectQueryKey({ schema, cardinality: undefined }) })));
  };
}
