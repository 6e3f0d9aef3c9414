import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { createFirstAdmin } from '../office/users.js';
import type { AppContext } from '../context.js';
import { secretsEqual } from '../crypto/field-cipher.js';
import { AppError } from '../errors.js';
import { CONTROL_CHARACTERS_MESSAGE, publicString } from './field-rules.js';
import { definePage } from './pages.js';
import type { PageRenderer } from './pages.js';

const setupForm = definePage<{ error?: string; email?: string; name?: string }>(`
<div class="card">
  <h1>Create the first administrator</h1>
  <p class="muted">This page works only until the first user exists. You need the SETUP_TOKEN from the server's configuration.</p>
  {{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
  <form method="post" action="/setup">
    <label for="token">Setup token</label>
    <input id="token" name="token" type="password" autocomplete="off" required>
    <label for="name">Your name</label>
    <input id="name" name="name" value="{{name}}" autocomplete="name" required>
    <label for="email">Your email</label>
    <input id="email" name="email" type="email" value="{{email}}" autocomplete="email" required>
    <button type="submit">Create administrator</button>
  </form>
</div>`);

const setupDone = definePage<{ name: string }>(`
<div class="card">
  <h1>Administrator created</h1>
  <p>Welcome, {{name}}. This setup page is now switched off.</p>
</div>`);

const notFound = definePage<object>(`<div class="card"><h1>Not found</h1><p>There is nothing here.</p></div>`);

const bodySchema = z.object({
  token: publicString('fill in the setup token'),
  name: publicString('fill in your name'),
  email: publicString('fill in your email'),
});
const SETUP_LABELS: Record<string, string> = { token: 'Setup token', name: 'Your name', email: 'Your email' };

async function setupOpen(ctx: AppContext): Promise<boolean> {
  if (!ctx.config.setupToken) return false;
  const any = await ctx.db('users').first('id');
  return any === undefined;
}

/**
 * GET|POST /setup: only while SETUP_TOKEN is set and no user exists; 404
 * otherwise. The database enforces a single setup admin, so two concurrent
 * posts create exactly one. Attempts are rate limited per client IP, counted
 * in PostgreSQL so a restart does not reset them.
 */
export function registerSetupRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  const closed = (reply: FastifyReply) => page(reply.code(404), notFound, { title: 'Not found' });

  app.get('/setup', { config: { recordView: true } }, async (_request, reply) => {
    if (!(await setupOpen(ctx))) return closed(reply);
    return page(reply, setupForm, { title: 'Set up' });
  });

  app.post(
    '/setup',
    { config: { rateLimit: { max: 10, timeWindow: '15 minutes', groupId: 'setup' } } },
    async (request, reply) => {
      if (!(await setupOpen(ctx))) return closed(reply);
      const parsed = bodySchema.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const field = String(issue?.path[0] ?? '');
        const error = issue?.message === CONTROL_CHARACTERS_MESSAGE ? `${SETUP_LABELS[field] ?? field}: ${issue.message}.` : 'Fill in the token, your name and your email.';
        // What was typed comes back as in the answers below, so it need not be typed again; never the token.
        const typed = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
        const echo = (value: unknown) => (typeof value === 'string' ? value : undefined);
        return page(reply.code(400), setupForm, { title: 'Set up', error, email: echo(typed.email), name: echo(typed.name) });
      }
      const { token, email, name } = parsed.data;
      if (!secretsEqual(token, ctx.config.setupToken ?? '')) {
        request.log.warn('setup attempted with a wrong token');
        return page(reply.code(403), setupForm, { title: 'Set up', error: 'That setup token is not right.', email, name });
      }
      try {
        const admin = await createFirstAdmin(ctx, { email, name });
        return page(reply.code(201), setupDone, { title: 'Administrator created', name: admin.name });
      } catch (error) {
        if (error instanceof AppError && error.code === 'setup_closed') return closed(reply);
        if (error instanceof AppError && error.httpStatus === 400) {
          return page(reply.code(400), setupForm, { title: 'Set up', error: error.message, email, name });
        }
        throw error;
      }
    },
  );
}
