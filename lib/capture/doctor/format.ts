import { requestCodeName, responseCodeName } from '../../../protocol/index.js';
import type { Finding } from './finding.js';

function time(ms: number): string {
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : String(ms);
}

/** The findings as `decode --doctor` prints them: one block per finding, evidence, then what it means. */
export function formatFindings(findings: readonly Finding[], frames: number): string {
  if (findings.length === 0) return `no problems found in ${frames} frames\n`;
  const lines = [`${findings.length} problem${findings.length === 1 ? '' : 's'} found in ${frames} frames:`];
  for (const f of findings) {
    const e = f.evidence;
    const code =
      e.code === undefined
        ? undefined
        : f.check === 'error-response'
          ? `${responseCodeName(e.code)}(${e.code})`
          : `${requestCodeName(e.code)}(${e.code})`;
    const at = e.firstMs === e.lastMs ? time(e.firstMs) : `${time(e.firstMs)} … ${time(e.lastMs)}`;
    const ev = [
      `at ${at}`,
      e.flow !== undefined ? `flow ${e.flow}` : '',
      e.opaque !== undefined ? `opaque ${e.opaque}` : '',
      e.queue !== undefined ? `queue ${e.queue}` : '',
      e.group !== undefined ? `group ${e.group}` : '',
      code !== undefined ? `code ${code}` : '',
      `seen ${e.count}x`,
    ].filter(Boolean);
    lines.push(
      '',
      `${f.severity.toUpperCase()} ${f.check}: ${f.summary}`,
      `  ${ev.join(', ')}`,
      `  means: ${f.meaning}`,
    );
  }
  return lines.join('\n') + '\n';
}
