/**
 * A page's text lines, to split an element's text at them: a PDF paragraph's element joins its
 * lines with spaces ("Total: 12,00 € Amount due: 12,00 €"), its page's text keeps them apart.
 */
export class PageLines {
  /** The page's lines by their first word. */
  readonly #byFirstWord = new Map<string, string[]>();

  constructor(text: string) {
    for (const line of text.split("\n")) {
      const trimmed = line.trim();
      if (trimmed === "") continue;
      const first = firstWord(trimmed);
      const lines = this.#byFirstWord.get(first) ?? [];
      lines.push(trimmed);
      this.#byFirstWord.set(first, lines);
    }
  }

  /** `text` as the page's lines it joins, longest first from its start; what no line starts stays one line. */
  split(text: string): string[] {
    const parts: string[] = [];
    let rest = text.trim();
    while (rest !== "") {
      let longest = "";
      for (const line of this.#byFirstWord.get(firstWord(rest)) ?? []) {
        if (line.length > longest.length && (rest === line || rest.startsWith(`${line} `))) longest = line;
      }
      if (longest === "" || longest === rest) break;
      parts.push(longest);
      rest = rest.slice(longest.length).trim();
    }
    if (rest !== "") parts.push(rest);
    return parts;
  }
}

function firstWord(text: string): string {
  const space = text.indexOf(" ");
  return space === -1 ? text : text.slice(0, space);
}
