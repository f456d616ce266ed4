// The cardinality page: /api/v1/status/tsdb as Prometheus' TSDB status page shows it (head series,
// series per metric, label values per label name, bytes per label name, series per label pair),
// plus what Tidemark adds to it: new series per metric in the newest hour (churn), the buckets with
// their series and bytes on disk, and the compactor's state.

import { api, formatBytes, formatDuration } from './api';
import { errorBox, h, table } from './dom';

interface Entry { name: string; value: number }
interface Bucket { start: number; durationSeconds: number; open: boolean; series: number; bytes: number }
export interface TsdbStatus {
  headStats: { numSeries: number; chunkCount: number; minTime: number; maxTime: number; numLabelPairs: number };
  seriesCountByMetricName: Entry[];
  labelValueCountByLabelName: Entry[];
  memoryInBytesByLabelName: Entry[];
  seriesCountByLabelValuePair: Entry[];
  newSeriesCountByMetricName?: Entry[];
  buckets?: Bucket[];
  compaction?: Record<string, number>;
}

const COMPACTION: Record<string, string> = {
  buckets: 'Buckets',
  openBuckets: 'Open buckets (the head)',
  compactedBuckets: 'Buckets larger than an hour (compacted)',
  compactions: 'Compactions since the start',
  bucketsMerged: 'Buckets merged by them',
  bytesWritten: 'Bytes they wrote',
  millis: 'Time they took',
  abandoned: 'Compactions abandoned (a bucket changed meanwhile, or the server stopped)',
  failures: 'Compactions failed',
};

function entries(title: string, id: string, list: Entry[], total: number | null, bytes = false): HTMLElement {
  const max = Math.max(1, ...list.map((e) => e.value));
  return h('section', { class: 'card', id },
    h('h2', {}, title),
    list.length === 0 ? h('div', { class: 'hint' }, 'None.') :
      table(['Name', bytes ? 'Bytes' : 'Count', total ? 'Share' : '', ''], list.map((e) => [
        h('code', {}, e.name),
        bytes ? formatBytes(e.value) : e.value.toLocaleString('en-US'),
        total ? `${((100 * e.value) / total).toFixed(1)} %` : '',
        h('div', { class: 'bar', style: `width:${Math.round((100 * e.value) / max)}%` }),
      ]), { class: 'data' }));
}

export function cardinalityPage(root: HTMLElement, params: URLSearchParams, setParams: (p: URLSearchParams) => void): () => void {
  const abort = new AbortController();
  const limit = params.get('limit') ?? '10';
  const limitIn = h('select', { 'aria-label': 'entries per list' }, ['10', '20', '50', '100'].map((n) => h('option', { value: n, selected: n === limit }, n)));
  limitIn.addEventListener('change', () => setParams(new URLSearchParams({ limit: limitIn.value })));
  const body = h('div', {}, h('div', { class: 'hint' }, 'Loading…'));
  root.replaceChildren(h('h1', {}, 'Cardinality'), h('label', {}, 'Entries per list ', limitIn), body);
  api<TsdbStatus>('status/tsdb', { limit, buckets: '1' }, abort.signal)
    .then((a) => {
      const s = a.data;
      const hs = s.headStats;
      const time = (ms: number) => (Math.abs(ms) >= 8.64e15 ? '—' : new Date(ms).toISOString());
      const parts: HTMLElement[] = [
        h('section', { class: 'card', id: 'head-stats' },
          h('h2', {}, 'Head'),
          table(['Series', 'Label pairs', 'Series in open buckets', 'From', 'To'], [[
            h('span', { 'data-testid': 'head-series' }, String(hs.numSeries)),
            String(hs.numLabelPairs), String(hs.chunkCount), time(hs.minTime), time(hs.maxTime),
          ]], { class: 'data' })),
        entries('Series per metric name', 'series-by-metric', s.seriesCountByMetricName, hs.numSeries),
        entries('Label values per label name', 'values-by-label', s.labelValueCountByLabelName, null),
        entries('Bytes of label values per label name', 'bytes-by-label', s.memoryInBytesByLabelName, null, true),
        entries('Series per label pair', 'series-by-pair', s.seriesCountByLabelValuePair, hs.numSeries),
      ];
      if (s.newSeriesCountByMetricName) {
        parts.push(entries('Churn: series new in the newest hour, per metric name', 'churn', s.newSeriesCountByMetricName, null));
      }
      if (s.buckets) {
        parts.push(h('section', { class: 'card', id: 'buckets' },
          h('h2', {}, 'Buckets on disk'),
          table(['Start (UTC)', 'Size', 'State', 'Series', 'Bytes'], s.buckets.map((b) => [
            new Date(b.start).toISOString(), formatDuration(b.durationSeconds * 1000), b.open ? 'open' : 'sealed', b.series.toLocaleString('en-US'), formatBytes(b.bytes),
          ]), { class: 'data' })));
      }
      if (s.compaction) {
        parts.push(h('section', { class: 'card', id: 'compaction' },
          h('h2', {}, 'Compaction'),
          table(['', ''], Object.entries(s.compaction).map(([k, v]) => [COMPACTION[k] ?? k, k === 'bytesWritten' ? formatBytes(v) : k === 'millis' ? formatDuration(v) : v.toLocaleString('en-US')]), { class: 'data kv' })));
      }
      body.replaceChildren(...parts);
    })
    .catch((e) => { if (e.name !== 'AbortError') body.replaceChildren(errorBox(e.message)); });
  return () => abort.abort();
}
