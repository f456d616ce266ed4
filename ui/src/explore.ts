// The explore page: every metric name with its type, unit and help from the metadata; a metric's
// labels and their values from its series; every label name and its values.

import { api, Metric } from './api';
import { errorBox, h, table } from './dom';

interface Meta { type: string; help: string; unit: string }

const SERIES_LIMIT = 10_000;

export function explorePage(root: HTMLElement, params: URLSearchParams, setParams: (p: URLSearchParams) => void): () => void {
  const abort = new AbortController();
  const filter = h('input', { type: 'search', placeholder: 'Filter metric names', class: 'filter', value: params.get('filter') ?? '', 'aria-label': 'filter metric names' });
  const metrics = h('div', { class: 'metrics' }, h('div', { class: 'hint' }, 'Loading…'));
  const detail = h('div', { class: 'detail' });
  const labels = h('div', { class: 'labels' });
  root.replaceChildren(
    h('h1', {}, 'Metrics'),
    filter,
    h('div', { class: 'explore' }, metrics, detail),
    h('h1', {}, 'Labels'),
    labels,
  );
  let names: string[] = [];
  let meta: Record<string, Meta[]> = {};
  const renderMetrics = () => {
    const f = filter.value.trim().toLowerCase();
    const shown = names.filter((n) => n.toLowerCase().includes(f));
    metrics.replaceChildren(
      h('div', { class: 'hint' }, `${shown.length} of ${names.length} metric names`),
      table(['Metric', 'Type', 'Unit', 'Help'], shown.map((n) => {
        const m = meta[n]?.[0] ?? meta[n.replace(/_(total|bucket|sum|count|created)$/, '')]?.[0];
        return [h('a', { href: `#/explore?metric=${encodeURIComponent(n)}`, class: 'metric-link' }, n), m?.type ?? '', m?.unit ?? '', m?.help ?? ''];
      }), { class: 'data', 'data-testid': 'metrics-table' }),
    );
  };
  filter.addEventListener('input', () => {
    renderMetrics();
    const p = new URLSearchParams(params);
    if (filter.value) p.set('filter', filter.value); else p.delete('filter');
    setParams(p);
  });
  Promise.all([api<string[]>('label/__name__/values', {}, abort.signal), api<Record<string, Meta[]>>('metadata', {}, abort.signal)])
    .then(([n, m]) => {
      names = n.data;
      meta = m.data;
      renderMetrics();
    })
    .catch((e) => { if (e.name !== 'AbortError') metrics.replaceChildren(errorBox(e.message)); });

  const metric = params.get('metric');
  if (metric) {
    detail.replaceChildren(h('div', { class: 'hint' }, 'Loading…'));
    api<Metric[]>('series', { 'match[]': `{__name__=${JSON.stringify(metric)}}`, limit: String(SERIES_LIMIT) }, abort.signal)
      .then((a) => {
        const values = new Map<string, Set<string>>();
        for (const s of a.data) {
          for (const [k, v] of Object.entries(s)) {
            if (k === '__name__') continue;
            if (!values.has(k)) values.set(k, new Set());
            values.get(k)!.add(v);
          }
        }
        const graph = new URLSearchParams({ 'g0.expr': metric, 'g0.tab': 'graph', 'g0.range': '1h' });
        detail.replaceChildren(
          h('h2', {}, metric),
          h('p', {}, `${a.data.length}${a.warnings?.length ? '+' : ''} series `, h('a', { href: `#/query?${graph}`, class: 'graph-link' }, 'Graph it')),
          table(['Label', 'Values'], [...values.entries()].sort().map(([k, vs]) => [k, h('span', { class: 'values' }, [...vs].sort().slice(0, 50).join(', ') + (vs.size > 50 ? ` … (${vs.size})` : ''))]), { class: 'data' }),
        );
      })
      .catch((e) => { if (e.name !== 'AbortError') detail.replaceChildren(errorBox(e.message)); });
  }

  api<string[]>('labels', {}, abort.signal)
    .then((a) => {
      labels.replaceChildren(
        h('div', { class: 'hint' }, `${a.data.length} label names; click one for its values`),
        h('div', { class: 'label-names' }, a.data.map((n) => {
          const out = h('div', { class: 'label-values' });
          const b = h('details', {}, h('summary', {}, n), out);
          b.addEventListener('toggle', () => {
            if (!b.open || out.childElementCount) return;
            api<string[]>(`label/${encodeURIComponent(n)}/values`, { limit: '1000' }, abort.signal)
              .then((v) => out.replaceChildren(h('div', { class: 'hint' }, `${v.data.length}${v.warnings?.length ? '+' : ''} values`), h('ul', {}, v.data.map((x) => h('li', {}, x)))))
              .catch((e) => out.replaceChildren(errorBox(e.message)));
          });
          return b;
        })),
      );
    })
    .catch((e) => { if (e.name !== 'AbortError') labels.replaceChildren(errorBox(e.message)); });
  return () => abort.abort();
}
