// The query page: several panels, each a PromQL editor run as an instant query (table) or a range
// query (graph) with its time range, end and step. The page's URL holds every panel's state
// (g0.expr, g0.tab, g0.range, g0.end, g0.step, g0.stacked, as Prometheus' own UI names them), so a
// link reproduces the view.

import type uPlot from 'uplot';
import type { EditorView } from '@codemirror/view';
import { api, ApiError, formatDuration, parseDuration, QueryData, seriesName } from './api';
import { errorBox, h, table } from './dom';
import { promqlEditor, showServerError } from './editor';
import { drawGraph } from './graph';

export interface PanelState {
  expr: string;
  tab: 'table' | 'graph';
  range: string;
  end: string; // RFC 3339, or empty for now
  step: string; // a duration, or empty for automatic
  stacked: boolean;
}

const DEFAULT: PanelState = { expr: '', tab: 'graph', range: '1h', end: '', step: '', stacked: false };

export function panelsFromParams(p: URLSearchParams): PanelState[] {
  const panels: PanelState[] = [];
  for (let i = 0; p.has(`g${i}.expr`) || p.has(`g${i}.tab`); i++) {
    const g = (k: string) => p.get(`g${i}.${k}`);
    panels.push({
      expr: g('expr') ?? '',
      tab: g('tab') === 'table' || g('tab') === '1' ? 'table' : 'graph',
      range: g('range') ?? g('range_input') ?? DEFAULT.range,
      end: g('end') ?? g('end_input') ?? '',
      step: g('step') ?? g('step_input') ?? '',
      stacked: g('stacked') === '1',
    });
  }
  return panels.length ? panels : [{ ...DEFAULT }];
}

export function panelsToParams(panels: PanelState[]): URLSearchParams {
  const p = new URLSearchParams();
  panels.forEach((s, i) => {
    p.set(`g${i}.expr`, s.expr);
    p.set(`g${i}.tab`, s.tab);
    p.set(`g${i}.range`, s.range);
    if (s.end) p.set(`g${i}.end`, s.end);
    if (s.step) p.set(`g${i}.step`, s.step);
    if (s.stacked) p.set(`g${i}.stacked`, '1');
  });
  return p;
}

/** Prometheus' UI's choice: about 250 points over the range, at least a second. */
function autoStepMillis(rangeMillis: number): number {
  return Math.max(1000, Math.round(rangeMillis / 250 / 1000) * 1000);
}

class Panel {
  readonly el: HTMLElement;
  private readonly result = h('div', { class: 'result' });
  private readonly info = h('div', { class: 'info' });
  private editor!: EditorView;
  private plot: uPlot | undefined;
  private abort: AbortController | undefined;

  constructor(
    readonly state: PanelState,
    private readonly changed: () => void,
    private readonly remove: (p: Panel) => void,
  ) {
    const editorHost = h('div', { class: 'editor' });
    const tabBtn = (tab: PanelState['tab'], label: string) =>
      h('button', {
        type: 'button',
        class: this.state.tab === tab ? 'tab active' : 'tab',
        'data-tab': tab,
        onclick: () => {
          this.state.tab = tab;
          this.renderControls();
          this.changed();
          this.run();
        },
      }, label);
    const rangeIn = h('input', { type: 'text', class: 'range', value: state.range, title: 'Range: 1h, 30m, 2d', 'aria-label': 'range', size: 6 });
    rangeIn.addEventListener('change', () => { this.state.range = rangeIn.value.trim(); this.changed(); this.run(); });
    const endIn = h('input', { type: 'datetime-local', class: 'end', step: 1, 'aria-label': 'end time (empty: now)', title: 'End (empty: now, UTC)', value: state.end ? state.end.replace(/Z$/, '').slice(0, 19) : '' });
    endIn.addEventListener('change', () => { this.state.end = endIn.value ? new Date(endIn.value + 'Z').toISOString().replace('.000Z', 'Z') : ''; this.changed(); this.run(); });
    const nowBtn = h('button', { type: 'button', title: 'End at now', onclick: () => { endIn.value = ''; this.state.end = ''; this.changed(); this.run(); } }, 'now');
    const stepIn = h('input', { type: 'text', class: 'step', placeholder: 'auto', value: state.step, title: 'Resolution step: 15s, 1m (empty: automatic)', 'aria-label': 'step', size: 6 });
    stepIn.addEventListener('change', () => { this.state.step = stepIn.value.trim(); this.changed(); this.run(); });
    const stackIn = h('input', { type: 'checkbox', class: 'stacked', checked: state.stacked });
    stackIn.addEventListener('change', () => { this.state.stacked = stackIn.checked; this.changed(); this.run(); });
    this.controls = h('div', { class: 'controls' });
    this.tabs = () => [tabBtn('table', 'Table'), tabBtn('graph', 'Graph')];
    this.graphControls = h('span', { class: 'graph-controls' },
      h('label', {}, 'range ', rangeIn), ' ',
      h('label', {}, 'end (UTC) ', endIn), nowBtn, ' ',
      h('label', {}, 'step ', stepIn), ' ',
      h('label', {}, stackIn, ' stacked'));
    this.tableControls = h('span', { class: 'table-controls' }, h('label', {}, 'at (UTC) ', endIn.cloneNode() as HTMLInputElement));
    const atIn = this.tableControls.querySelector('input') as HTMLInputElement;
    atIn.value = endIn.value;
    atIn.addEventListener('change', () => { endIn.value = atIn.value; endIn.dispatchEvent(new Event('change')); });
    this.el = h('section', { class: 'panel' },
      h('div', { class: 'editor-row' },
        editorHost,
        h('button', { type: 'button', class: 'execute', onclick: () => this.run() }, 'Execute'),
        h('button', { type: 'button', class: 'remove', title: 'Remove this panel', onclick: () => this.remove(this) }, '✕')),
      this.controls, this.info, this.result);
    this.editor = promqlEditor(editorHost, state.expr, () => this.run(), (text) => { this.state.expr = text; this.changed(); });
    this.renderControls();
  }

  private readonly controls: HTMLElement;
  private readonly tabs: () => HTMLElement[];
  private readonly graphControls: HTMLElement;
  private readonly tableControls: HTMLElement;

  private renderControls(): void {
    this.controls.replaceChildren(...this.tabs(), this.state.tab === 'graph' ? this.graphControls : this.tableControls);
  }

  focus(): void {
    this.editor.focus();
  }

  destroy(): void {
    this.abort?.abort();
    this.plot?.destroy();
    this.editor.destroy();
  }

  async run(): Promise<void> {
    this.abort?.abort();
    this.plot?.destroy();
    this.plot = undefined;
    const expr = this.state.expr.trim();
    if (!expr) {
      this.result.replaceChildren();
      this.info.replaceChildren();
      return;
    }
    const abort = new AbortController();
    this.abort = abort;
    const endMillis = this.state.end ? Date.parse(this.state.end) : Date.now();
    if (Number.isNaN(endMillis)) {
      this.result.replaceChildren(errorBox(`bad end time: ${this.state.end}`));
      return;
    }
    this.result.replaceChildren(h('div', { class: 'hint' }, 'Loading…'));
    const t0 = performance.now();
    try {
      if (this.state.tab === 'table') {
        const a = await api<QueryData>('query', { query: expr, time: String(endMillis / 1000) }, abort.signal);
        this.showInfo(a.warnings, a.infos, performance.now() - t0, resultCount(a.data));
        this.result.replaceChildren(renderTable(a.data));
      } else {
        const rangeMillis = parseDuration(this.state.range);
        if (!(rangeMillis > 0)) throw new ApiError(`bad range: ${this.state.range} (write 1h, 30m, 2d)`);
        const stepMillis = this.state.step ? parseDuration(this.state.step) : autoStepMillis(rangeMillis);
        if (!(stepMillis > 0)) throw new ApiError(`bad step: ${this.state.step} (write 15s, 1m)`);
        const end = Math.floor(endMillis / stepMillis) * stepMillis / 1000;
        const start = end - rangeMillis / 1000;
        const step = stepMillis / 1000;
        const a = await api<QueryData>('query_range', { query: expr, start: String(start), end: String(end), step: String(step) }, abort.signal);
        if (a.data.resultType !== 'matrix') throw new ApiError(`a range query answered a ${a.data.resultType}`);
        this.showInfo(a.warnings, a.infos, performance.now() - t0, a.data.result.length, this.state.step ? '' : `step ${formatDuration(stepMillis)}`);
        const host = h('div', { class: 'graph' });
        this.result.replaceChildren(host);
        if (a.data.result.length === 0) {
          host.appendChild(h('div', { class: 'hint' }, 'No data in this range.'));
        } else {
          this.plot = drawGraph(host, a.data.result, start, end, step, this.state.stacked);
        }
      }
    } catch (e) {
      if ((e as Error).name === 'AbortError') return;
      this.info.replaceChildren();
      this.result.replaceChildren(errorBox((e as Error).message));
      this.markServerError((e as Error).message);
    }
  }

  /**
   * Underlines where the server's parse error points ("1:22: parse error: ..."), beside what the
   * editor's own linter finds; the next edit clears it.
   */
  private markServerError(message: string): void {
    const m = /(\d+):(\d+): parse error: (.*)$/.exec(message);
    if (!m) return;
    const doc = this.editor.state.doc;
    const line = Number(m[1]);
    if (line < 1 || line > doc.lines) return;
    const l = doc.line(line);
    // the server counts the column in UTF-8 bytes from 1; count the line's characters to match
    const bytes = new TextEncoder();
    let col = 0;
    let used = 0;
    while (col < l.length && used + bytes.encode(l.text[col]).length < Number(m[2])) {
      used += bytes.encode(l.text[col]).length;
      col++;
    }
    // past the end (an unclosed parenthesis): the last character
    const from = col >= l.length && l.length > 0 ? l.to - 1 : l.from + col;
    const to = Math.min(l.to, from + 1);
    showServerError(this.editor, { from, to, severity: 'error', message: m[3], source: 'server' });
  }

  private showInfo(warnings: string[] | undefined, infos: string[] | undefined, millis: number, count: number, extra = ''): void {
    this.info.replaceChildren(
      h('div', { class: 'stats' }, `${count} ${count === 1 ? 'result' : 'results'} in ${Math.round(millis)} ms${extra ? ', ' + extra : ''}`),
      ...(warnings ?? []).map((w) => h('div', { class: 'warning' }, w)),
      ...(infos ?? []).map((w) => h('div', { class: 'notice' }, w)),
    );
  }
}

function resultCount(d: QueryData): number {
  return d.resultType === 'vector' || d.resultType === 'matrix' ? d.result.length : 1;
}

function renderTable(d: QueryData): HTMLElement {
  switch (d.resultType) {
    case 'vector':
      if (d.result.length === 0) return h('div', { class: 'hint' }, 'Empty query result.');
      return table(['Series', 'Value'], d.result.map((s) => [h('code', {}, seriesName(s.metric)), s.value ? s.value[1] : JSON.stringify(s.histogram?.[1])]), { class: 'data', 'data-testid': 'result-table' });
    case 'matrix':
      if (d.result.length === 0) return h('div', { class: 'hint' }, 'Empty query result.');
      return table(['Series', 'Values'], d.result.map((s) => [
        h('code', {}, seriesName(s.metric)),
        h('div', { class: 'values' }, (s.values ?? []).map(([t, v]) => h('div', {}, `${v} @${t}`))),
      ]), { class: 'data', 'data-testid': 'result-table' });
    case 'scalar':
    case 'string':
      return table(['Result', 'Value'], [[d.resultType, d.result[1]]], { class: 'data', 'data-testid': 'result-table' });
  }
}

/** Renders the query page into {@code root} from the URL's parameters. */
export function queryPage(root: HTMLElement, params: URLSearchParams, setParams: (p: URLSearchParams) => void): () => void {
  const states = panelsFromParams(params);
  const panels: Panel[] = [];
  const list = h('div', { class: 'panels' });
  const save = () => setParams(panelsToParams(panels.map((p) => p.state)));
  const removePanel = (p: Panel) => {
    const i = panels.indexOf(p);
    if (i < 0) return;
    panels.splice(i, 1);
    p.destroy();
    p.el.remove();
    if (panels.length === 0) addPanel({ ...DEFAULT });
    save();
  };
  const addPanel = (s: PanelState) => {
    const p = new Panel(s, save, removePanel);
    panels.push(p);
    list.appendChild(p.el);
    return p;
  };
  root.replaceChildren(list, h('button', { type: 'button', class: 'add-panel', onclick: () => { addPanel({ ...DEFAULT }).focus(); save(); } }, 'Add panel'));
  for (const s of states) addPanel(s);
  for (const p of panels) p.run();
  if (panels.length === 1 && !states[0].expr) panels[0].focus();
  return () => panels.forEach((p) => p.destroy());
}
