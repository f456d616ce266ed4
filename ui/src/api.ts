// The Prometheus HTTP API of the server that serves this page: every request goes to its own origin.

export interface ApiAnswer<T> {
  status: 'success' | 'error';
  data: T;
  errorType?: string;
  error?: string;
  warnings?: string[];
  infos?: string[];
}

export class ApiError extends Error {}

/** GETs {@code /api/v1/<path>} with the given parameters; throws ApiError with the server's text. */
export async function api<T>(path: string, params: Record<string, string | string[]> = {}, signal?: AbortSignal): Promise<ApiAnswer<T>> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
  }
  const qs = q.toString();
  let res: Response;
  try {
    res = await fetch(`api/v1/${path}${qs ? '?' + qs : ''}`, { signal, headers: { Accept: 'application/json' } });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(`the server cannot be reached: ${(e as Error).message}`);
  }
  let body: ApiAnswer<T>;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`HTTP ${res.status}: the answer is not JSON`);
  }
  if (body.status !== 'success') {
    throw new ApiError(`${body.errorType ?? 'error'}: ${body.error ?? 'HTTP ' + res.status}`);
  }
  return body;
}

export type Metric = Record<string, string>;
export interface InstantSample { metric: Metric; value?: [number, string]; histogram?: [number, unknown] }
export interface RangeSeries { metric: Metric; values?: [number, string][]; histograms?: [number, unknown][] }
export type QueryData =
  | { resultType: 'vector'; result: InstantSample[] }
  | { resultType: 'matrix'; result: RangeSeries[] }
  | { resultType: 'scalar'; result: [number, string] }
  | { resultType: 'string'; result: [number, string] };

/** A series' labels as PromQL writes them: {@code name{a="b", c="d"}}. */
export function seriesName(m: Metric): string {
  const name = m.__name__ ?? '';
  const rest = Object.keys(m)
    .filter((k) => k !== '__name__')
    .sort()
    .map((k) => `${k}=${JSON.stringify(m[k])}`);
  return rest.length || !name ? `${name}{${rest.join(', ')}}` : name;
}

/** Parses a sample value as the API writes it ("+Inf", "NaN", "1e-07"). */
export function parseValue(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  return Number(s);
}

/** Durations as Prometheus writes them: 1h30m, 5m, 15s, 500ms; returns milliseconds or NaN. */
export function parseDuration(s: string): number {
  const t = s.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  const re = /(\d+)(ms|y|w|d|h|m|s)/g;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000, w: 604800000, y: 31536000000 };
  let total = 0;
  let used = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(t)) !== null) {
    if (m.index !== used) return NaN;
    total += Number(m[1]) * unit[m[2]];
    used = re.lastIndex;
  }
  return used === t.length && used > 0 ? total : NaN;
}

export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  const parts: [number, string][] = [[604800000, 'w'], [86400000, 'd'], [3600000, 'h'], [60000, 'm'], [1000, 's'], [1, 'ms']];
  let out = '';
  for (const [n, u] of parts) {
    if (ms >= n) {
      out += Math.floor(ms / n) + u;
      ms %= n;
    }
  }
  return out;
}

/** A number of bytes as people read it: 1.5 MiB. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}
