import { escapeHtml } from './escape.js';

/**
 * The report's charts, drawn as inline SVG strings by our own code: a time chart (bars, lines,
 * areas over the time buckets) and a histogram. Every mark carries a `<title>` (the browser's
 * tooltip) and its number in a `data-v` attribute, so the figures can be read back from the page.
 */

export interface ChartSeries {
  name: string;
  kind: 'bar' | 'line' | 'area';
  /** One value per bucket; null where there is none (a line breaks, a bar is not drawn). */
  values: readonly (number | null)[];
  /** CSS class giving the colour (see the report's style sheet), e.g. 's0'. */
  cls: string;
}

export interface TimeChartOptions {
  /** A stable name for the chart, in `data-chart`. */
  chart: string;
  title: string;
  series: readonly ChartSeries[];
  buckets: number;
  /** Label of the start of bucket i on the x axis. */
  xLabel: (bucket: number) => string;
  /** The y axis starts at 0 (counts) or at the smallest value (offsets). */
  zeroBased: boolean;
  width?: number;
  height?: number;
}

const MARGIN = { left: 64, right: 12, top: 22, bottom: 22 };

/** A round step near span/n: 1, 2 or 5 times a power of ten. */
function niceStep(span: number, n: number): number {
  if (!(span > 0)) return 1;
  const raw = span / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/** A short label for an axis number (1.2k, 3.4M), exact below 10 000. */
export function shortNumber(v: number): string {
  const a = Math.abs(v);
  if (a < 10_000) return String(Math.round(v * 1000) / 1000);
  if (a < 1e6) return `${Math.round(v / 100) / 10}k`;
  if (a < 1e9) return `${Math.round(v / 1e5) / 10}M`;
  return `${Math.round(v / 1e8) / 10}G`;
}

function fmt(v: number): string {
  return String(Math.round(v * 10) / 10);
}

export function timeChart(o: TimeChartOptions): string {
  const W = o.width ?? 960;
  const legend: string[] = [];
  let top = MARGIN.top;
  // Legend, right-aligned in the title row, or on rows of its own under it when too wide; widths
  // are estimated (7.6 px a character is enough for capitals at 11 px): gaps, never overlap.
  const legendWidth = o.series.reduce((w, s) => w + 20 + s.name.length * 7.6, 0);
  if (legendWidth <= W - MARGIN.right - MARGIN.left - 7 * o.title.length - 20) {
    let lx = W - MARGIN.right;
    for (const s of [...o.series].reverse()) {
      lx -= 20 + s.name.length * 7.6;
      legend.push(
        `<rect class="${s.cls}" x="${fmt(lx)}" y="6" width="10" height="10"/><text class="lg" x="${fmt(lx + 13)}" y="15">${escapeHtml(s.name)}</text>`,
      );
    }
  } else {
    let lx = MARGIN.left;
    let ly = 20;
    for (const s of o.series) {
      const w = 20 + s.name.length * 7.6;
      if (lx + w > W - MARGIN.right && lx > MARGIN.left) {
        lx = MARGIN.left;
        ly += 14;
      }
      legend.push(
        `<rect class="${s.cls}" x="${fmt(lx)}" y="${ly}" width="10" height="10"/><text class="lg" x="${fmt(lx + 13)}" y="${ly + 9}">${escapeHtml(s.name)}</text>`,
      );
      lx += w;
    }
    top = ly + 18;
  }
  // Legend rows make the chart taller, not the plot smaller.
  const H = (o.height ?? 150) + top - MARGIN.top;
  const pw = W - MARGIN.left - MARGIN.right;
  const ph = H - top - MARGIN.bottom;
  const n = Math.max(1, o.buckets);
  const bw = pw / n;
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of o.series) {
    for (const v of s.values) {
      if (v === null) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  const empty = lo === Infinity;
  if (empty || o.zeroBased) lo = Math.min(0, empty ? 0 : lo);
  if (empty) hi = 1;
  if (hi === lo) hi = lo + 1;
  const step = niceStep(hi - lo, 4);
  const y0 = Math.floor(lo / step) * step;
  // A little room above the highest value, so a flat line at the top does not sit on the frame.
  const y1 = Math.ceil((hi + (hi - lo) * 0.04) / step) * step;
  const y = (v: number): number => top + ph - ((v - y0) / (y1 - y0)) * ph;
  const xc = (i: number): number => MARGIN.left + (i + 0.5) * bw;

  const out: string[] = [];
  out.push(
    `<svg class="chart" data-chart="${escapeHtml(o.chart)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(o.title)}">`,
  );
  out.push(`<text class="ct" x="${MARGIN.left}" y="14">${escapeHtml(o.title)}</text>`);
  out.push(...legend);
  // Axes and grid.
  for (let v = y0; v <= y1 + step / 2; v += step) {
    const yy = fmt(y(v));
    out.push(`<line class="grid" x1="${MARGIN.left}" x2="${W - MARGIN.right}" y1="${yy}" y2="${yy}"/>`);
    out.push(
      `<text class="ax" x="${MARGIN.left - 6}" y="${fmt(y(v) + 3)}" text-anchor="end">${escapeHtml(shortNumber(v))}</text>`,
    );
  }
  const ticks = Math.min(6, n);
  for (let t = 0; t <= ticks; t++) {
    const i = Math.round((t * n) / ticks);
    const xx = fmt(MARGIN.left + i * bw);
    out.push(`<line class="tick" x1="${xx}" x2="${xx}" y1="${top + ph}" y2="${top + ph + 4}"/>`);
    const anchor = t === 0 ? 'start' : t === ticks ? 'end' : 'middle';
    out.push(`<text class="ax" x="${xx}" y="${H - 6}" text-anchor="${anchor}">${escapeHtml(o.xLabel(i))}</text>`);
  }
  out.push(`<line class="axis" x1="${MARGIN.left}" x2="${W - MARGIN.right}" y1="${top + ph}" y2="${top + ph}"/>`);

  const bars = o.series.filter((s) => s.kind === 'bar');
  bars.forEach((s, k) => {
    const w = Math.max(1, (bw * 0.8) / bars.length);
    out.push(`<g class="${s.cls}" data-series="${escapeHtml(s.name)}">`);
    s.values.forEach((v, i) => {
      if (v === null || v === 0) return;
      const x = MARGIN.left + i * bw + bw * 0.1 + k * w;
      const top = y(Math.max(v, y0));
      out.push(
        `<rect x="${fmt(x)}" y="${fmt(top)}" width="${fmt(w)}" height="${fmt(Math.max(0.5, y(y0) - top))}" data-b="${i}" data-v="${v}"><title>${escapeHtml(`${o.xLabel(i)}: ${s.name} ${v}`)}</title></rect>`,
      );
    });
    out.push('</g>');
  });
  for (const s of o.series) {
    if (s.kind === 'bar') continue;
    // Lines break where a value is missing; each run of values is one path.
    const runs: string[] = [];
    let cur: string[] = [];
    const flush = (): void => {
      if (cur.length > 0) runs.push(cur.join(' '));
      cur = [];
    };
    s.values.forEach((v, i) => {
      if (v === null) {
        flush();
        return;
      }
      cur.push(`${fmt(xc(i))},${fmt(y(v))}`);
    });
    flush();
    out.push(`<g class="${s.cls}" data-series="${escapeHtml(s.name)}">`);
    for (const r of runs) {
      const pts = r.split(' ');
      if (s.kind === 'area') {
        const base = fmt(y(Math.max(y0, 0)));
        const first = pts[0]!.split(',')[0]!;
        const last = pts[pts.length - 1]!.split(',')[0]!;
        out.push(`<polygon class="area" points="${first},${base} ${r} ${last},${base}"/>`);
      }
      out.push(
        pts.length === 1
          ? `<circle class="dot" cx="${pts[0]!.split(',')[0]}" cy="${pts[0]!.split(',')[1]}" r="2"/>`
          : `<polyline class="line" points="${r}"/>`,
      );
    }
    // Invisible marks that hold each value for tooltips and for reading back.
    s.values.forEach((v, i) => {
      if (v === null) return;
      out.push(
        `<circle class="hit" cx="${fmt(xc(i))}" cy="${fmt(y(v))}" r="${fmt(Math.max(2, Math.min(6, bw / 2)))}" data-b="${i}" data-v="${v}"><title>${escapeHtml(`${o.xLabel(i)}: ${s.name} ${v}`)}</title></circle>`,
      );
    });
    out.push('</g>');
  }
  if (empty)
    out.push(
      `<text class="none" x="${MARGIN.left + pw / 2}" y="${top + ph / 2}" text-anchor="middle">nothing seen</text>`,
    );
  out.push('</svg>');
  return out.join('');
}

export interface HistogramOptions {
  chart: string;
  title: string;
  /** Labels of the buckets, one per count. */
  labels: readonly string[];
  counts: readonly number[];
  width?: number;
  height?: number;
}

export function histogramChart(o: HistogramOptions): string {
  const W = o.width ?? 470;
  const H = o.height ?? 150;
  const left = 44;
  const pw = W - left - 8;
  const ph = H - 22 - 34;
  const n = o.counts.length;
  const bw = pw / n;
  const max = Math.max(1, ...o.counts);
  const step = niceStep(max, 3);
  const top = Math.ceil((max * 1.04) / step) * step;
  const y = (v: number): number => 22 + ph - (v / top) * ph;
  const out: string[] = [];
  out.push(
    `<svg class="chart hist" data-chart="${escapeHtml(o.chart)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(o.title)}">`,
  );
  out.push(`<text class="ct" x="${left}" y="14">${escapeHtml(o.title)}</text>`);
  for (let v = 0; v <= top + step / 2; v += step) {
    out.push(`<line class="grid" x1="${left}" x2="${W - 8}" y1="${fmt(y(v))}" y2="${fmt(y(v))}"/>`);
    out.push(
      `<text class="ax" x="${left - 5}" y="${fmt(y(v) + 3)}" text-anchor="end">${escapeHtml(shortNumber(v))}</text>`,
    );
  }
  out.push(`<g class="s0" data-series="responses">`);
  o.counts.forEach((c, i) => {
    const x = left + i * bw;
    const label = escapeHtml(o.labels[i] ?? '');
    if (c > 0) {
      out.push(
        `<rect x="${fmt(x + 1)}" y="${fmt(y(c))}" width="${fmt(Math.max(1, bw - 2))}" height="${fmt(Math.max(0.5, y(0) - y(c)))}" data-b="${i}" data-v="${c}"><title>${label} ms: ${c}</title></rect>`,
      );
    }
    out.push(
      `<text class="ax" x="${fmt(x + bw / 2)}" y="${H - 24}" text-anchor="end" transform="rotate(-50 ${fmt(x + bw / 2)} ${H - 24})">${label}</text>`,
    );
  });
  out.push('</g>');
  out.push(`<line class="axis" x1="${left}" x2="${W - 8}" y1="${fmt(y(0))}" y2="${fmt(y(0))}"/>`);
  out.push('</svg>');
  return out.join('');
}
