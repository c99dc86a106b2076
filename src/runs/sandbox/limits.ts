/** The limits the sandbox's threads and the process that runs them agree on. */

/**
 * The most matches findMatches returns for one text: an extract field tries its pattern's matches
 * in order until one holds a value, and a pattern that matches at every position of a long page
 * would otherwise copy a match object per character (125,000 of them held the event loop for about
 * 120 ms as the thread's answer was copied in).
 */
export const MAX_MATCHES = 1000;

/**
 * The most characters findMatches returns for one text, its groups' together: a group may hold
 * the rest of the page (`(?=([^]*))` does at every position), and the thread's answer is copied
 * onto the event loop, then read by extract. Once past it, no further match is taken.
 */
export const MAX_MATCHED_CHARACTERS = 1_000_000;

/**
 * How Ajv compiles and checks a validate node's schema in a thread: every error, not just the
 * first, so a reviewer sees all that is wrong at once; formats are not asserted (no ajv-formats).
 */
export const AJV_OPTIONS = { allErrors: true, strict: false } as const;
/** The schemas a thread keeps compiled; past that it starts over (a new Ajv, an empty cache). */
export const MAX_THREAD_SCHEMAS = 200;
/** The most errors a validation reports; a large array of bad items would otherwise fill the step. */
export const MAX_SCHEMA_ERRORS = 100;

/**
 * The heap of one sandbox thread, in MiB: everything an expression builds (a `$pad`, a `$join`, the
 * sequences of a `$map`), a regex's match list, a schema check's errors. Past it the thread is ended
 * and the evaluation fails naming this limit.
 */
export const THREAD_HEAP_MB = 128;

/**
 * The most characters an expression's result may hold, its strings and keys together: the result
 * is copied onto the event loop that serves requests, then stored as a step's output.
 */
export const MAX_RESULT_CHARACTERS = 16 * 1024 * 1024;

/** The code of a thread's fault for a result past MAX_RESULT_CHARACTERS (not one of JSONata's). */
export const RESULT_TOO_LARGE = "result_too_large";

/**
 * The most characters of one string an expression builds (`&`, `$pad`, `$join`, `$replace`, ...) or
 * hands to a built-in: checked before it is built, so no one allocation outgrows THREAD_HEAP_MB (V8
 * ends the whole process, not the thread, for one allocation far past the heap).
 */
export const MAX_STRING_CHARACTERS = 16 * 1024 * 1024;
/** The code of a thread's fault for a string past MAX_STRING_CHARACTERS. */
export const VALUE_TOO_LARGE = "value_too_large";

/** JSONata's code for an evaluation past its timeout (it checks the clock between its steps). */
export const JSONATA_TIMEOUT_CODE = "D1012";
