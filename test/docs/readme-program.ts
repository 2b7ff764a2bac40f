// The README's first program: the ```js block under the `<!-- readme-program -->` marker, which must
// be the first js/ts block after the Install heading. test/docs/readme-program.test.ts runs it
// against the embedded broker; a test that installs the packed tarball can run the same text.

/** The HTML comment that marks the first program in README.md. */
export const MARKER = '<!-- readme-program';

export interface ReadmeProgram {
  lang: 'js' | 'ts';
  code: string;
}

/**
 * The code block right after the `<!-- readme-program … -->` marker. Throws, saying what is wrong,
 * when the marker is missing or repeated, when no ```js / ```ts block follows it, or when another
 * js/ts block comes before it after the Install heading (the first program must be the first one
 * a reader meets).
 */
export function readmeProgram(readme: string): ReadmeProgram {
  const lines = readme.split('\n');
  const markers = lines.flatMap((l, i) => (l.trim().startsWith(MARKER) ? [i] : []));
  if (markers.length !== 1) throw new Error(`README.md has ${markers.length} "${MARKER}" markers, expected 1`);
  const at = markers[0]!;
  const install = lines.findIndex((l) => /^##\s+Install\b/.test(l));
  if (install < 0) throw new Error('README.md has no "## Install" heading');
  if (install > at) throw new Error('the readme-program marker comes before the "## Install" heading');
  const fence = /^```(js|ts|javascript|typescript)\s*$/;
  const earlier = lines.slice(install, at).findIndex((l) => fence.test(l.trim()));
  if (earlier >= 0)
    throw new Error(`a js/ts block at line ${install + earlier + 1} comes before the readme-program marker`);
  let open = at + 1;
  while (open < lines.length && lines[open]!.trim() === '') open++;
  const m = fence.exec(lines[open]?.trim() ?? '');
  if (!m)
    throw new Error(
      `the line after the readme-program marker is not a \`\`\`js or \`\`\`ts fence: "${lines[open] ?? ''}"`,
    );
  const close = lines.findIndex((l, i) => i > open && l.trim() === '```');
  if (close < 0) throw new Error('the readme-program block is not closed');
  return { lang: m[1]!.startsWith('t') ? 'ts' : 'js', code: lines.slice(open + 1, close).join('\n') + '\n' };
}
