import { Counter, Histogram, type Registry } from 'prom-client';

/** One answered HTTP request, as the web layer knows it. */
export interface AnsweredRequest {
  method: string;
  /** The matched route's pattern (`/api/v1/messages/:id`), or null when no route matched. */
  route: string | null;
  statusCode: number;
  /** From the request's arrival to its answer. */
  seconds: number;
}

/** The label of every request no route matched: raw paths would make a series per URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Methods kept as they are; any other (Node accepts dozens) is counted as `other`. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

type Labels = 'method' | 'route' | 'status_class';

/**
 * Requests per route and status class, counted and timed. Labels come from the route's pattern,
 * never the URL, so the number of series is bounded by the routes the app has.
 */
export class HttpMetrics {
  readonly #requests: Counter<Labels>;
  readonly #duration: Histogram<Labels>;

  constructor(registry: Registry) {
    this.#requests = new Counter({
      name: 'tms_http_requests_total',
      help: 'HTTP requests answered by this process, by method, route pattern (unmatched: no route) and status class (2xx, 3xx, 4xx, 5xx)',
      labelNames: ['method', 'route', 'status_class'],
      registers: [registry],
    });
    this.#duration = new Histogram({
      name: 'tms_http_request_duration_seconds',
      help: 'From the arrival of an HTTP request to its answer, by method, route pattern and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  observe(request: AnsweredRequest): void {
    const labels = {
      method: KNOWN_METHODS.has(request.method) ? request.method : 'other',
      route: request.route ?? UNMATCHED_ROUTE,
      status_class: `${Math.floor(request.statusCode / 100)}xx`,
    };
    this.#requests.inc(labels);
    this.#duration.observe(labels, request.seconds);
  }
}
