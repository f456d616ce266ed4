// The status page: build and runtime information, every setting's effective value, and the ingest
// counters of /metrics (per protocol, refusals with their reasons).

import { api } from './api';
import { errorBox, h, table } from './dom';

const INGEST = /^tidemark_(otlp|remote_write)_[a-z_]*_total$/;

/** The counters of /metrics that describe ingestion: [name, labels, value]. */
function ingestCounters(text: string): [string, string, string][] {
  const rows: [string, string, string][] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (m && INGEST.test(m[1])) rows.push([m[1], m[2] ?? '', m[3]]);
  }
  return rows;
}

function section(title: string, id: string, content: Promise<HTMLElement>): HTMLElement {
  const body = h('div', {}, h('div', { class: 'hint' }, 'Loading…'));
  content.then((c) => body.replaceChildren(c)).catch((e) => { if (e.name !== 'AbortError') body.replaceChildren(errorBox(e.message)); });
  return h('section', { class: 'card', id }, h('h2', {}, title), body);
}

const kv = (o: Record<string, unknown>) => table(['', ''], Object.entries(o).map(([k, v]) => [k, String(v)]), { class: 'data kv' });

export function statusPage(root: HTMLElement): () => void {
  const abort = new AbortController();
  const s = abort.signal;
  root.replaceChildren(
    h('h1', {}, 'Status'),
    section('Build', 'build', api<Record<string, string>>('status/buildinfo', {}, s).then((a) => kv(a.data))),
    section('Runtime', 'runtime', api<Record<string, unknown>>('status/runtimeinfo', {}, s).then((a) => kv(a.data))),
    section('Ingestion', 'ingest', fetch('metrics', { signal: s }).then(async (r) => {
      if (!r.ok) throw new Error(`/metrics: HTTP ${r.status}`);
      const rows = ingestCounters(await r.text());
      return table(['Counter', 'Labels', 'Value'], rows.map(([n, l, v]) => [h('code', {}, n), h('code', {}, l), v]), { class: 'data' });
    })),
    section('Settings (effective values)', 'flags', api<Record<string, string>>('status/flags', {}, s).then((a) =>
      table(['Setting', 'Value'], Object.entries(a.data).map(([k, v]) => [h('code', {}, '--' + k), h('code', {}, v)]), { class: 'data' }))),
  );
  return () => abort.abort();
}
