/** A node of the page's lines as a trie of their words: `end` when a line ends here. */
interface WordNode {
  readonly next: Map<string, WordNode>;
  end: boolean;
}

const node = (): WordNode => ({ next: new Map(), end: false });

/**
 * A page's text lines, to split an element's text at them: a PDF paragraph's element joins its
 * lines with spaces ("Total: 12,00 € Amount due: 12,00 €"), its page's text keeps them apart.
 *
 * The lines are kept as a trie of their words, so splitting walks each word of the text once per
 * line it could start: linear in the text for a page of 20,000 lines that all start with one word.
 */
export class PageLines {
  readonly #root = node();

  constructor(text: string) {
    for (const line of text.split("\n")) {
      const words = wordsOf(line);
      if (words.length === 0) continue;
      let at = this.#root;
      for (const word of words) {
        let next = at.next.get(word);
        if (next === undefined) {
          next = node();
          at.next.set(word, next);
        }
        at = next;
      }
      at.end = true;
    }
  }

  /** `text` as the page's lines it joins, longest first from its start; what no line starts stays one line. */
  split(text: string): string[] {
    const words = wordsOf(text);
    const parts: string[] = [];
    let start = 0;
    while (start < words.length) {
      if (words[start] === "") {
        start++;
        continue;
      }
      // The longest line starting at `start`: the deepest end the words reach in the trie.
      let longest = start;
      let at: WordNode | undefined = this.#root;
      for (let index = start; index < words.length; index++) {
        at = at.next.get(words[index]!);
        if (at === undefined) break;
        if (at.end) longest = index + 1;
      }
      if (longest === start || longest === words.length) break;
      parts.push(words.slice(start, longest).join(" "));
      start = longest;
    }
    if (start < words.length) parts.push(words.slice(start).join(" "));
    return parts;
  }
}

/** A line's words as its spaces part them, its ends trimmed: "a  b" keeps its empty word, so it joins back as drawn. */
function wordsOf(line: string): string[] {
  const trimmed = line.trim();
  return trimmed === "" ? [] : trimmed.split(" ");
}
