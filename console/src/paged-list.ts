import type { DescMessage, DescMethodUnary, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { useInfiniteQuery } from "@connectrpc/connect-query";

/** A list RPC's request (its page token is the hook's) and response (one page and the next one's token). */
type PagedRequest = DescMessage;
type PagedResponse = DescMessage;

/**
 * A paged list: the pages an RPC answers with `nextPageToken`, loaded as LoadMore asks, and their
 * items in order. `refetchInterval` is given the items loaded so far (a list of runs refreshes
 * while one is in progress).
 */
export function usePagedList<I extends PagedRequest, O extends PagedResponse, T>(
  method: DescMethodUnary<I, O>,
  input: Omit<MessageInitShape<I>, "pageToken">,
  itemsOf: (page: MessageShape<O>) => T[],
  options: { refetchInterval?: (items: T[]) => number | false } = {},
) {
  const { refetchInterval } = options;
  const query = useInfiniteQuery(
    method,
    { ...input, pageToken: "" } as never,
    {
      pageParamKey: "pageToken" as never,
      getNextPageParam: (page: MessageShape<O>) => (page as { nextPageToken?: string }).nextPageToken || undefined,
      ...(refetchInterval === undefined
        ? {}
        : {
            refetchInterval: (query: { state: { data?: { pages: MessageShape<O>[] } | undefined } }) =>
              refetchInterval(query.state.data?.pages.flatMap(itemsOf) ?? []),
          }),
    } as never,
  );
  const pages = query.data as { pages: MessageShape<O>[] } | undefined;
  return { query, error: query.error, items: pages?.pages.flatMap(itemsOf) };
}
