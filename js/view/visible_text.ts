// Characters that change how a name reads without being seen: C0 and C1 controls (all but the
// newline, which breaks the line as before), bidi embeddings, overrides and isolates
// (U+202A-U+202E, U+2066-U+2069) and the direction marks U+200E/U+200F. A layer name holding a
// right-to-left override could read as another name; each such character is shown as its
// escape (`\u202e`) instead, in the page, tooltips, DOT and SVG. The one rule for the front end
// (paddleviz_widget/visible_text.py is the Python side's).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching those controls is the point
const INVISIBLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
