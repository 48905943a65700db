/**
 * Text from a remote host (ssh's stderr, the harness's output and errors, names from its files)
 * made fit for an editor pop-up: one plain line of bounded length. The full text belongs in the
 * log; this is only what the notification shows.
 */

/** ANSI escape sequences: CSI (colours, cursor moves), OSC (titles, hyperlinks) and two-byte escapes. */
// eslint-disable-next-line no-control-regex -- escape sequences are what this removes
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[@-_]?/g;
/** Other C0/C1 controls and DEL, and the invisible marks that reorder text (bidi overrides, isolates). */
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g;

export const MAX_MESSAGE_CHARS = 400;

export function plainMessage(text: string, maxChars = MAX_MESSAGE_CHARS): string {
  const flat = text
    .replace(ANSI, '')
    .replace(/[\t\n\r]+/g, ' ')
    .replace(CONTROLS, '')
    // VS Code renders [label](target) in a notification as a link (command: targets included), so
    // the host must not be able to write one: a space between ] and ( keeps it plain text.
    .replace(/\]\(/g, '] (')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...flat]; // code points: a cut never splits a surrogate pair
  return chars.length <= maxChars ? flat : `${chars.slice(0, maxChars - 1).join('').trimEnd()}…`;
}
