/**
 * The number of pages (image file directories) of a TIFF or BigTIFF: the IFD chain is followed from
 * the header until its zero offset. Loops and offsets outside the file end the count (a damaged chain
 * still counts the pages it can reach).
 */
export function tiffPageCount(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const order = String.fromCharCode(bytes[0] ?? 0, bytes[1] ?? 0);
  if ((order !== "II" && order !== "MM") || bytes.length < 8) throw new Error("not a TIFF file");
  const little = order === "II";
  const big = view.getUint16(2, little) === 43;
  const seen = new Set<number>();
  let offset = big ? Number(view.getBigUint64(8, little)) : view.getUint32(4, little);
  let pages = 0;
  while (offset !== 0 && !seen.has(offset)) {
    seen.add(offset);
    const countSize = big ? 8 : 2;
    const entrySize = big ? 20 : 12;
    if (offset + countSize > bytes.length) break;
    const entries = big ? Number(view.getBigUint64(offset, little)) : view.getUint16(offset, little);
    const next = offset + countSize + entries * entrySize;
    if (next + (big ? 8 : 4) > bytes.length) break;
    pages++;
    offset = big ? Number(view.getBigUint64(next, little)) : view.getUint32(next, little);
  }
  return pages;
}
