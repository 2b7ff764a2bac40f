/**
 * A self-contained SVG line chart of throughput over time (no charting dependency): one line per
 * series, x = seconds since start, y = messages per second, with axes, grid and a legend.
 */
export interface ChartSeries {
  name: string;
  /** [seconds since start, messages per second] */
  points: [number, number][];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

function niceStep(range: number, ticks: number): number {
  const raw = range / Math.max(1, ticks);
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fmt(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${+(n / 1e3).toFixed(1)}k`;
  return `${+n.toFixed(1)}`;
}

export function renderThroughputSvg(title: string, series: ChartSeries[], width = 1040, height = 440): string {
  const m = { left: 70, right: 260, top: 40, bottom: 50 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  let maxX = 0;
  let maxY = 0;
  for (const s of series) {
    for (const [x, y] of s.points) {
      if (x > maxX) maxX = x;
      if (y > maxY) maxY = y;
    }
  }
  const xStep = niceStep(maxX || 1, 8);
  const yStep = niceStep(maxY || 1, 6);
  const xMax = Math.max(xStep, Math.ceil((maxX || 1) / xStep) * xStep);
  const yMax = Math.max(yStep, Math.ceil((maxY || 1) / yStep) * yStep);
  const sx = (x: number) => m.left + (x / xMax) * w;
  const sy = (y: number) => m.top + h - (y / yMax) * h;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${m.left + w / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
  );
  for (let y = 0; y <= yMax + 1e-9; y += yStep) {
    out.push(
      `<line x1="${m.left}" y1="${sy(y)}" x2="${m.left + w}" y2="${sy(y)}" stroke="#e5e5e5"/>`,
      `<text x="${m.left - 6}" y="${sy(y) + 4}" text-anchor="end">${fmt(y)}</text>`,
    );
  }
  for (let x = 0; x <= xMax + 1e-9; x += xStep) {
    out.push(
      `<line x1="${sx(x)}" y1="${m.top}" x2="${sx(x)}" y2="${m.top + h}" stroke="#f0f0f0"/>`,
      `<text x="${sx(x)}" y="${m.top + h + 16}" text-anchor="middle">${fmt(x)}</text>`,
    );
  }
  out.push(
    `<line x1="${m.left}" y1="${m.top + h}" x2="${m.left + w}" y2="${m.top + h}" stroke="#333"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${m.top + h}" stroke="#333"/>`,
    `<text x="${m.left + w / 2}" y="${height - 10}" text-anchor="middle">seconds</text>`,
    `<text transform="translate(16 ${m.top + h / 2}) rotate(-90)" text-anchor="middle">messages / s</text>`,
  );
  // One colour and one legend entry per consumer: rounds of the same consumer ("name #2") share them.
  const base = (name: string) => name.replace(/ #\d+$/, '');
  const names = [...new Set(series.map((s) => base(s.name)))];
  const colorOf = (name: string) => COLORS[names.indexOf(base(name)) % COLORS.length];
  for (const s of series) {
    const color = colorOf(s.name);
    if (s.points.length > 0) {
      const d = s.points.map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
      out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
      // Short phases may yield one or two samples: mark them so they stay visible.
      if (s.points.length <= 3)
        for (const [x, y] of s.points)
          out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${color}"/>`);
    }
  }
  names.forEach((name, i) => {
    const ly = m.top + 10 + i * 20;
    const rounds = series.filter((s) => base(s.name) === name).length;
    const label = rounds > 1 ? `${name} (${rounds} rounds)` : name;
    out.push(
      `<line x1="${m.left + w + 15}" y1="${ly}" x2="${m.left + w + 40}" y2="${ly}" stroke="${colorOf(name)}" stroke-width="3"/>`,
      `<text x="${m.left + w + 46}" y="${ly + 4}">${esc(label)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/**
 * A curve: y against x on a log₂ x axis (queue and topic counts double from point to point), one
 * line with a marker per point for each series, ticks at the measured x values.
 */
export function renderCurveSvg(
  title: string,
  xLabel: string,
  yLabel: string,
  series: ChartSeries[],
  width = 900,
  height = 420,
): string {
  const m = { left: 70, right: 240, top: 40, bottom: 50 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const xs = [...new Set(series.flatMap((s) => s.points.map(([x]) => x)))].sort((a, b) => a - b);
  const lo = Math.log2(xs[0] ?? 1);
  const hi = Math.max(lo + 1, Math.log2(xs.at(-1) ?? 2));
  const maxY = Math.max(1, ...series.flatMap((s) => s.points.map(([, y]) => y)));
  const yStep = niceStep(maxY, 6);
  const yMax = Math.ceil(maxY / yStep) * yStep;
  const sx = (x: number) => m.left + ((Math.log2(x) - lo) / (hi - lo)) * w;
  const sy = (y: number) => m.top + h - (y / yMax) * h;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${m.left + w / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let y = 0; y <= yMax + 1e-9; y += yStep)
    out.push(
      `<line x1="${m.left}" y1="${sy(y)}" x2="${m.left + w}" y2="${sy(y)}" stroke="#e5e5e5"/>`,
      `<text x="${m.left - 6}" y="${sy(y) + 4}" text-anchor="end">${fmt(y)}</text>`,
    );
  for (const x of xs)
    out.push(
      `<line x1="${sx(x)}" y1="${m.top}" x2="${sx(x)}" y2="${m.top + h}" stroke="#f0f0f0"/>`,
      `<text x="${sx(x)}" y="${m.top + h + 16}" text-anchor="middle">${x}</text>`,
    );
  out.push(
    `<line x1="${m.left}" y1="${m.top + h}" x2="${m.left + w}" y2="${m.top + h}" stroke="#333"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${m.top + h}" stroke="#333"/>`,
    `<text x="${m.left + w / 2}" y="${height - 10}" text-anchor="middle">${esc(xLabel)} (log scale)</text>`,
    `<text transform="translate(16 ${m.top + h / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter(([x, y]) => x > 0 && Number.isFinite(y));
    if (pts.length > 0) {
      const d = pts.map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
      out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
      for (const [x, y] of pts)
        out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${color}"/>`);
    }
    const ly = m.top + 10 + i * 20;
    out.push(
      `<line x1="${m.left + w + 15}" y1="${ly}" x2="${m.left + w + 40}" y2="${ly}" stroke="${color}" stroke-width="3"/>`,
      `<text x="${m.left + w + 46}" y="${ly + 4}">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
