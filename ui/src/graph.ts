// A range query's answer as lines, one per series, with uPlot: a legend that names each series and
// shows its value under the cursor; stacked as areas on request.

import uPlot from 'uplot';
import { parseValue, RangeSeries, seriesName } from './api';
import { h } from './dom';

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

export function color(i: number): string {
  return COLORS[i % COLORS.length];
}

function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
  return String(Number(v.toPrecision(6)));
}

/**
 * Draws {@code series} over [startSec, endSec] at {@code stepSec} into {@code parent}; returns the
 * plot so the caller can destroy it.
 */
export function drawGraph(parent: HTMLElement, series: RangeSeries[], startSec: number, endSec: number, stepSec: number, stacked: boolean): uPlot {
  const n = Math.floor((endSec - startSec) / stepSec) + 1;
  const xs = new Array<number>(n);
  for (let i = 0; i < n; i++) xs[i] = startSec + i * stepSec;
  const raw: (number | null)[][] = series.map((s) => {
    const ys = new Array<number | null>(n).fill(null);
    for (const [t, v] of s.values ?? []) {
      const i = Math.round((t - startSec) / stepSec);
      if (i >= 0 && i < n) ys[i] = parseValue(v);
    }
    return ys;
  });
  let shown = raw;
  if (stacked) {
    const sum = new Array<number>(n).fill(0);
    shown = raw.map((ys) =>
      ys.map((v, i) => {
        if (v !== null && Number.isFinite(v)) sum[i] += v;
        return v === null ? null : sum[i];
      }),
    );
  }
  const opts: uPlot.Options = {
    width: Math.max(300, parent.clientWidth || 800),
    height: 320,
    cursor: { focus: { prox: 16 } },
    focus: { alpha: 0.3 },
    legend: { live: true },
    scales: { x: { time: true } },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    series: [
      {},
      ...series.map((s, i) => ({
        label: seriesName(s.metric),
        stroke: color(i),
        width: 1.5,
        fill: stacked ? color(i) + '55' : undefined,
        spanGaps: false,
        points: { show: n < 60 },
        value: (_u: uPlot, _v: number | null, si: number, idx: number | null) => formatValue(idx === null ? null : raw[si - 1][idx]),
      })),
    ],
    bands: stacked ? series.slice(1).map((_, i) => ({ series: [i + 2, i + 1] as [number, number] })) : undefined,
    axes: [{}, { size: 70, values: (_u, vals) => vals.map((v) => formatValue(v)) }],
  };
  const plot = new uPlot(opts, [xs, ...shown] as uPlot.AlignedData, parent);
  parent.appendChild(h('div', { class: 'hint' }, `${series.length} series, ${n} points each at most`));
  return plot;
}
