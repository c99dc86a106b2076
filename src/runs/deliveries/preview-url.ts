/** Stands for what a test mode preview leaves out. */
export const MASKED = "****";

/**
 * A URL as a test mode preview records it: its origin, with its path and query masked. Chat
 * webhooks carry their token in the path and others in the query, and a preview is a step's output,
 * which whoever may read runs sees (a real callback's step records only the host).
 */
export function previewUrl(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname === "/" && parsed.search === "" ? `${parsed.origin}/` : `${parsed.origin}/${MASKED}`;
}
