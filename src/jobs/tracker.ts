import type { AppConfig } from '../config/types.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';

export type TrackerConfig = NonNullable<AppConfig['tracker']>;

/** The issue tracker as error-issues needs it: which fingerprints have an open issue, and filing one. */
export interface Tracker {
  /** Fingerprint → number of an open issue whose body carries its marker. Reads every page. */
  openIssueFingerprints(): Promise<Map<string, number>>;
  createIssue(issue: { title: string; body: string }): Promise<{ number: number; url: string }>;
}

/** Per request; a tracker that stops answering fails the run instead of holding the lease. */
const REQUEST_TIMEOUT_MS = 20_000;
/** A secondary rate limit asking for a wait this short is waited out once; anything else fails the run. */
const MAX_RATE_LIMIT_WAIT_S = 5;

const PER_PAGE = 100;
/** Pages of open issues read at once after the first. */
const LIST_CONCURRENCY = 6;

const MARKER = /<!--\s*eventops:fingerprint=([0-9a-f]+)\s*-->/g;

export function fingerprintMarker(fingerprint: string): string {
  return `<!-- eventops:fingerprint=${fingerprint} -->`;
}

export function fingerprintsInBody(body: string | null | undefined): string[] {
  return body ? [...body.matchAll(MARKER)].map((match) => match[1] as string) : [];
}

export class TrackerError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('tracker_failed', message, {
      cause,
      suggestion: 'check TRACKER_TOKEN (issues: write on TRACKER_REPO) and the tracker status; the next run files what this one could not',
    });
    this.name = 'TrackerError';
  }
}

/**
 * GitHub's REST API through octokit, loaded only here and only when the job
 * runs. The bundled retry plugin retries a server error once when reading (never
 * a filing, which may have been carried out before the error); the throttling
 * plugin keeps GitHub's pacing for writes but never waits for a rate limit to
 * reset: a rate-limited tracker fails the run, and the next run files the rest.
 */
export async function createTracker(config: TrackerConfig, logger: Logger, options: { timeoutMs?: number } = {}): Promise<Tracker> {
  const { Octokit } = await import('octokit');
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const giveUpUnlessShort = (retryAfter: number, request: { method: string; url: string; request: { retryCount: number } }) => {
    logger.warn({ method: request.method, url: request.url, retryAfter }, 'issue tracker rate limit');
    return request.request.retryCount === 0 && retryAfter <= MAX_RATE_LIMIT_WAIT_S;
  };
  const octokit = new Octokit({
    auth: config.token,
    baseUrl: config.apiUrl,
    userAgent: 'eventops',
    request: {
      fetch: (url: string | URL, init?: RequestInit) =>
        fetch(url, {
          ...init,
          signal: init?.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        }),
    },
    retry: { retries: 1 },
    throttle: {
      // A primary limit resets within the hour at best: never wait for it inside a run.
      onRateLimit: (retryAfter: number, request: { method: string; url: string }) => {
        logger.warn({ method: request.method, url: request.url, retryAfter }, 'issue tracker rate limit exhausted');
        return false;
      },
      onSecondaryRateLimit: giveUpUnlessShort,
    },
    // octokit logs to the console by default; our logs go through pino.
    log: {
      debug: () => undefined,
      info: (message: string) => logger.debug({ tracker: true }, message),
      warn: (message: string) => logger.warn({ tracker: true }, message),
      error: (message: string) => logger.error({ tracker: true }, message),
    },
  });

  const failure = (what: string, error: unknown): TrackerError => {
    const status = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
    const reason = typeof status === 'number' ? `answered ${status}` : `did not answer (${error instanceof Error ? error.message : String(error)})`;
    return new TrackerError(`issue tracker ${reason} when ${what} of ${config.repo}`, error);
  };

  return {
    async openIssueFingerprints() {
      const open = new Map<string, number>();
      const list = (page: number) =>
        octokit.rest.issues.listForRepo({ owner: config.owner, repo: config.name, state: 'open', per_page: PER_PAGE, page });
      const pages: Array<Array<{ number: number; body?: string | null }>> = [];
      try {
        const first = await list(1);
        pages[0] = first.data;
        // The first page's Link header names the last page: fetch the rest a few at a time (GitHub allows
        // concurrent reads; octokit's throttling still paces them), not one after another.
        const last = lastPage(first.headers.link);
        if (last === undefined) {
          // A next page but no last one named: read on until a short page.
          for (let page = 2; (pages[page - 2]?.length ?? 0) === PER_PAGE; page++) pages[page - 1] = (await list(page)).data;
        } else {
          let next = 2;
          let failed = false;
          const worker = async () => {
            try {
              for (let page = next++; page <= last && !failed; page = next++) pages[page - 1] = (await list(page)).data;
            } catch (error) {
              failed = true; // the other readers stop at their next page
              throw error;
            }
          };
          await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, last - 1) }, worker));
        }
      } catch (error) {
        throw failure('listing the open issues', error);
      }
      // In page order (newest first): a fingerprint carried by two open issues maps to the newest.
      for (const page of pages) {
        for (const issue of page ?? []) {
          for (const fingerprint of fingerprintsInBody(issue.body)) if (!open.has(fingerprint)) open.set(fingerprint, issue.number);
        }
      }
      return open;
    },
    async createIssue(issue) {
      try {
        // Never repeated within the run: a server error or a timeout may come after the tracker filed the issue, and a
        // second POST would file the same fault twice. The run fails instead; the next one lists the open issues and
        // files only what is still missing.
        const { data } = await octokit.rest.issues.create({
          owner: config.owner,
          repo: config.name,
          title: issue.title,
          body: issue.body,
          request: { retries: 0 },
        });
        return { number: data.number, url: data.html_url };
      } catch (error) {
        throw failure('filing an issue', error);
      }
    },
  };
}

/** The page number of rel="last" in a Link header: 1 without a next page, undefined when only rel="next" is given. */
export function lastPage(link: string | undefined): number | undefined {
  const target = (rel: string) => link?.split(',').find((part) => part.includes(`rel="${rel}"`))?.match(/<([^>]+)>/)?.[1];
  const last = target('last');
  if (last === undefined) return target('next') === undefined ? 1 : undefined;
  const page = Number(new URL(last).searchParams.get('page'));
  return Number.isInteger(page) && page > 1 ? page : 1;
}
