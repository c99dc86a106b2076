import { useRef } from "react";

/**
 * `start` wrapped so that a call while one it started has not settled does nothing: a double click
 * sends one request. A button's `disabled={mutation.isPending}` comes a render late, after the
 * second click has already gone (two keys, one of them never shown). Errors stay on the mutation.
 */
export function useSingleFlight<A extends unknown[]>(start: (...args: A) => Promise<unknown>): (...args: A) => void {
  const inFlight = useRef(false);
  return (...args: A) => {
    if (inFlight.current) return;
    inFlight.current = true;
    start(...args)
      .catch(() => {})
      .finally(() => {
        inFlight.current = false;
      });
  };
}
