// Tidemark's web UI: one page, routed by the URL's fragment (#/query?..., #/explore, #/cardinality,
// #/status), so the server serves only / and its two files, and a link reproduces a view.

import 'uplot/dist/uPlot.min.css';
import './style.css';
import { cardinalityPage } from './cardinality';
import { explorePage } from './explore';
import { queryPage } from './query';
import { statusPage } from './status';

type Page = (root: HTMLElement, params: URLSearchParams, setParams: (p: URLSearchParams) => void) => () => void;

const PAGES: Record<string, Page> = {
  query: queryPage,
  explore: explorePage,
  cardinality: cardinalityPage,
  status: statusPage,
};

let teardown: (() => void) | undefined;
/** The fragment this UI wrote last, so its own changes do not re-render the page. */
let written: string | null = null;

function route(): { page: string; params: URLSearchParams } {
  const m = /^#\/([a-z]*)\??(.*)$/.exec(window.location.hash);
  const page = m && PAGES[m[1]] ? m[1] : 'query';
  return { page, params: new URLSearchParams(m ? m[2] : '') };
}

function render(): void {
  if (window.location.hash === written) return;
  const { page, params } = route();
  teardown?.();
  const root = document.getElementById('page')!;
  root.replaceChildren();
  root.className = `page-${page}`;
  document.querySelectorAll<HTMLAnchorElement>('header nav a').forEach((a) => a.classList.toggle('active', a.dataset.page === page));
  document.title = `Tidemark · ${page[0].toUpperCase()}${page.slice(1)}`;
  const setParams = (p: URLSearchParams) => {
    const qs = p.toString();
    written = `#/${page}${qs ? '?' + qs : ''}`;
    history.replaceState(null, '', written);
  };
  written = window.location.hash;
  teardown = PAGES[page](root, params, (p) => {
    setParams(p);
    if (page !== 'query' && page !== 'explore') {
      written = null;
      render();
    }
  });
}

window.addEventListener('hashchange', () => {
  written = null;
  render();
});
render();
