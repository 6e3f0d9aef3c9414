import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

/** GET /healthz: 200 with version, commit and database status; 503 while the database is unreachable. */
export function registerHealthRoute(app: FastifyInstance, ctx: AppContext, packageVersion = 'unknown'): void {
  app.get('/healthz', { logLevel: 'warn' }, async (_request, reply) => {
    const version = ctx.config.version.app ?? packageVersion;
    const gitSha = ctx.config.version.gitSha ?? null;
    try {
      await Promise.race([
        ctx.db.raw('select 1'),
        new Promise((_resolve, reject) => setTimeout(() => reject(new Error('database check timed out')), 3000).unref()),
      ]);
      return reply.code(200).send({ status: 'ok', version, gitSha, database: 'ok' });
    } catch {
      return reply.code(503).send({ status: 'degraded', version, gitSha, database: 'unreachable' });
    }
  });
}
