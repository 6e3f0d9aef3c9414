/** The part of autocannon 8's programmatic API the webhook case uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';
  import type { IncomingHttpHeaders } from 'node:http';

  interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (request: RequestSpec, context: Record<string, unknown>) => RequestSpec;
  }

  interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    amount?: number;
    duration?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    requests?: RequestSpec[];
  }

  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    total: number;
  }

  interface Result {
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: Histogram;
    latency: Histogram;
    statusCodeStats?: Record<string, { count: number }>;
    headers?: IncomingHttpHeaders;
  }

  /** The run's tracker: 'response' (client, statusCode, bytes, responseTimeMs) per answer; awaitable for the result. */
  type Instance = EventEmitter & PromiseLike<Result>;

  function autocannon(options: Options): Instance;
  export default autocannon;
}
