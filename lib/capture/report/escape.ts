/**
 * Escaping for the HTML report. Every string that comes from a capture (topics, groups, remarks,
 * addresses, response code names of unknown codes) is user input: it goes through `escapeHtml`
 * before it reaches text or an attribute, and through `jsonForScript` before it reaches the
 * embedded data block.
 */

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or a quoted attribute value. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` become \u escapes, so no
 * value can close the element (`</script>`) or open a comment (`<!--`); JSON.parse reads them back
 * unchanged. U+2028/U+2029 too, in case someone pastes the block into a script.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
}
