import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TrackerIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  html_url: string;
}

export interface TrackerRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
}

export interface TrackerServer {
  /** Base URL for TRACKER_API_URL. */
  url: string;
  token: string;
  /** owner/name for TRACKER_REPO. */
  repo: string;
  /** Every issue the server knows, seeded or created, in number order. */
  issues: TrackerIssue[];
  /** Issues created through POST. */
  created: TrackerIssue[];
  requests: TrackerRequest[];
  seed(issues: Array<{ title: string; body?: string | null; state?: 'open' | 'closed' }>): void;
  /** Runs `during` once, before the next listing request is answered (something happening while a run lists). */
  beforeNextList(during: () => Promise<void>): void;
  /** The next `count` requests answer 500, or 403 with an exhausted rate limit. */
  failNext(count: number, kind: 'error' | 'rate-limit'): void;
  /** The next `count` issue filings are carried out but answered 502, as a tracker whose gateway timed out after the write. */
  fileButFailNext(count: number): void;
  /** TRACKER_* variables that point the application at this server. */
  configEnv(): Record<string, string>;
  close(): Promise<void>;
}

const MAX_PER_PAGE = 100;

/**
 * A local stand-in for GitHub's issues REST API: list (state, per_page, page,
 * Link rel="next") and create, behind `authorization: token|Bearer <TOKEN>`.
 */
export async function startTrackerServer(options: { token?: string; repo?: string } = {}): Promise<TrackerServer> {
  const token = options.token ?? 'ghp_testtrackertoken';
  const repo = options.repo ?? 'grace-church/eventops-issues';
  const issues: TrackerIssue[] = [];
  const created: TrackerIssue[] = [];
  const requests: TrackerRequest[] = [];
  let failures: { remaining: number; kind: 'error' | 'rate-limit' } = { remaining: 0, kind: 'error' };
  let filedButFailing = 0;
  let baseUrl = '';
  let beforeList: (() => Promise<void>) | undefined;

  const issueUrl = (n: number) => `https://github.example/${repo}/issues/${n}`;
  const add = (input: { title: string; body?: string | null; state?: 'open' | 'closed' }): TrackerIssue => {
    const issue: TrackerIssue = {
      number: issues.length + 1,
      title: input.title,
      body: input.body ?? null,
      state: input.state ?? 'open',
      html_url: issueUrl(issues.length + 1),
    };
    issues.push(issue);
    return issue;
  };

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const during = req.method === 'GET' ? beforeList : undefined;
      if (during) {
        beforeList = undefined;
        await during();
      }
      const url = new URL(req.url ?? '/', 'http://tracker.test');
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization,
      });
      if (req.headers.authorization !== `token ${token}` && req.headers.authorization !== `Bearer ${token}`) {
        send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
        return;
      }
      if (failures.remaining > 0) {
        failures.remaining--;
        if (failures.kind === 'rate-limit') {
          send(
            res,
            403,
            { message: 'API rate limit exceeded for user.', documentation_url: 'https://docs.github.com/rest/rate-limit' },
            {
              'x-ratelimit-limit': '5000',
              'x-ratelimit-remaining': '0',
              'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
            },
          );
        } else {
          send(res, 500, { message: 'Server Error' });
        }
        return;
      }
      if (url.pathname !== `/repos/${repo}/issues`) {
        send(res, 404, { message: 'Not Found' });
        return;
      }
      if (req.method === 'GET') {
        const state = url.searchParams.get('state') ?? 'open';
        const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30), MAX_PER_PAGE);
        const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
        const matching = issues.filter((issue) => state === 'all' || issue.state === state).sort((a, b) => b.number - a.number);
        const lastPage = Math.max(1, Math.ceil(matching.length / perPage));
        const link = (p: number) => {
          const next = new URL(`${baseUrl}${url.pathname}`);
          next.searchParams.set('state', state);
          next.searchParams.set('per_page', String(perPage));
          next.searchParams.set('page', String(p));
          return next.toString();
        };
        const headers: Record<string, string> = {};
        if (page < lastPage) headers.link = `<${link(page + 1)}>; rel="next", <${link(lastPage)}>; rel="last"`;
        send(res, 200, matching.slice((page - 1) * perPage, page * perPage), headers);
        return;
      }
      if (req.method === 'POST') {
        let input: { title?: unknown; body?: unknown };
        try {
          input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { title?: unknown; body?: unknown };
        } catch {
          send(res, 400, { message: 'Problems parsing JSON' });
          return;
        }
        if (typeof input.title !== 'string' || input.title.length === 0) {
          send(res, 422, { message: 'Validation Failed', errors: [{ resource: 'Issue', field: 'title', code: 'missing_field' }] });
          return;
        }
        const issue = add({ title: input.title, body: typeof input.body === 'string' ? input.body : null });
        created.push(issue);
        if (filedButFailing > 0) {
          filedButFailing--;
          send(res, 502, { message: 'Server Error' });
          return;
        }
        send(res, 201, issue);
        return;
      }
      send(res, 404, { message: 'Not Found' });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    token,
    repo,
    issues,
    created,
    requests,
    seed(list) {
      for (const issue of list) add(issue);
    },
    failNext(count, kind) {
      failures = { remaining: count, kind };
    },
    fileButFailNext(count) {
      filedButFailing = count;
    },
    beforeNextList(during) {
      beforeList = during;
    },
    configEnv() {
      return { TRACKER_TOKEN: token, TRACKER_REPO: repo, TRACKER_API_URL: baseUrl };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
