import type { Command } from 'commander';
import { z } from 'zod';
import { proxyWarnings } from '../../config/proxy.js';
import type { AppConfig } from '../../config/types.js';
import type { Db } from '../../db/connect.js';
import { AppError, UsageError } from '../../errors.js';
import { eventsPageUrl, publicAddress } from '../../http/events-list-links.js';
import type { BuiltServer } from '../../http/server.js';
import type { DeliveryLoop } from '../../scheduler/delivery-loop.js';
import type { Scheduler } from '../../scheduler/index.js';
import type { WaitlistLoop } from '../../scheduler/waitlist-loop.js';
import type { Telemetry } from '../../telemetry.js';
import { publicUrlPortMismatch } from '../public-url-port.js';
import { packageVersion } from '../version.js';

const optionsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
});

const SERVE_HELP = `
Example:
  $ IN_APP_CRON=true eventops serve --port 3000

The public pages live under the app's public address, written PUBLIC_URL below: it is AUTH_URL (else
APP_URL), which every link in emails starts with. Behind a proxy it is the proxy's https:// address.
  PUBLIC_URL/                          the events page: every published event still to come, with places left
  PUBLIC_URL/events                    the same events page
  PUBLIC_URL/events/SLUG               an event's page and registration form (\`eventops events create\` prints it)
  PUBLIC_URL/events/SLUG/success       the success page a card payment returns to: paid, processing or not completed
  PUBLIC_URL/registrations/ID?token=…  a registration's own page (bank details, what is paid), from its email
  PUBLIC_URL/registrations/ID/pay?…    the pay-now page: pay an unpaid registration by card, from its email
  PUBLIC_URL/manage/TOKEN              the manage page: a family changes details or cancels, from its email
  PUBLIC_URL/checkin/TOKEN             the check-in page for volunteers at the door (\`eventops checkin link\`)
When it starts, serve prints the address it listens on, the public address and the events page's address.

Stops gracefully on SIGTERM or SIGINT: in-flight requests and a running job finish first.`;

/** How long serve waits, after SIGTERM, for in-flight requests and a running job (docs/deploy/eventops.service waits longer). */
export const SHUTDOWN_GRACE_MS = 25_000;

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description(
      'run the HTTP server: the public pages (events, registration, payment, manage, check-in), cron endpoints, first-admin setup, health; the in-app scheduler when IN_APP_CRON is on',
    )
    .option('--port <port>', 'port to listen on (default PORT or 3000)')
    .option('--host <host>', 'address to bind (default HOST or 127.0.0.1)')
    .addHelpText('after', SERVE_HELP)
    .action(async (raw: unknown) => {
      const parsed = optionsSchema.safeParse(raw);
      if (!parsed.success) throw new UsageError('--port must be a number from 0 to 65535', 'for example --port 3000');
      const { loadRuntimeConfig, openContext } = await import('../runtime.js');
      const loaded = loadRuntimeConfig();
      for (const warning of proxyWarnings(loaded.config, parsed.data.host)) loaded.logger.warn(warning);
      const ctx = await openContext(loaded, { poolMax: 10 });
      const { logger, config } = ctx;
      try {
        // A restored database with a new .env would otherwise serve pages that cannot read what members gave.
        await (await import('../../crypto/key-check.js')).assertKeysFitForServing(ctx.db, ctx.cipher, ctx.logger);
      } catch (error) {
        await ctx.close();
        throw error;
      }
      let telemetry: Telemetry | undefined;
      let server: BuiltServer | undefined;
      let listenOn: Db | undefined;
      let delivery: DeliveryLoop | undefined;
      let scheduler: Scheduler | undefined;
      let waitlist: WaitlistLoop | undefined;
      // A keep-alive connection whose request was in flight at shutdown would otherwise stay open, idle, until the
      // client or the 72 s keep-alive timeout closes it, and the server's close would wait for it.
      let closing = false;

      /** Stops taking requests, the scheduler, the running cron requests and the delivery loop, side by side; then what was started before them. */
      const stopAll = async (): Promise<void> => {
        closing = true;
        // Side by side: a slow request or a long job must not hold up the others, nor the delivery loop's last SENT marks.
        await Promise.all([server?.app.close(), scheduler?.stop(), server?.idle(), delivery?.stop(), waitlist?.stop()]);
        await listenOn?.destroy();
        await telemetry?.shutdown();
      };

      const port = parsed.data.port ?? config.http.port;
      const host = parsed.data.host ?? config.http.host;
      try {
        const { buildServer } = await import('../../http/server.js');
        const { startDeliveryLoop } = await import('../../scheduler/delivery-loop.js');
        const { startTelemetry } = await import('../../telemetry.js');
        telemetry = await startTelemetry(config.telemetryConnectionString, logger);
        server = await buildServer(ctx, { packageVersion: packageVersion(), telemetry });
        // The card provider's package takes about a tenth of a second to load, every request waiting meanwhile: loaded
        // before the server listens, not by the first card payer (or webhook) after a restart. Commands never load it.
        if (config.payments) await (await import('../../payments/provider.js')).createProviderClient(config);
        // LISTEN needs a session of its own: behind a pooler in transaction mode DATABASE_URL cannot keep one, DIRECT_URL can.
        listenOn =
          config.directUrl && config.databaseUrl && config.directUrl !== config.databaseUrl
            ? (await import('../../db/connect.js')).connectDb({ url: config.directUrl, poolMax: 1, applicationName: 'eventops-listener' })
            : undefined;
        const loop = startDeliveryLoop(ctx, { listenOn });
        delivery = loop;
        // A webhook or form post may have queued a receipt or confirmation. Its commit's NOTIFY wakes the loop (every
        // server's); while the loop is not listening (its connection lost), the post wakes it here instead. Waking it
        // on every post besides would run a pass, with its statements, for each post that queued nothing.
        server.app.addHook('onResponse', async (request) => {
          if (request.method === 'POST' && !loop.listening()) loop.wake();
        });
        server.app.addHook('onSend', async (_request, reply) => {
          if (closing) void reply.header('connection', 'close');
        });
        // Freed places go to the waiting lists within a minute, whatever runs the other jobs.
        waitlist = (await import('../../scheduler/waitlist-loop.js')).startWaitlistLoop(ctx);
        scheduler = config.jobs.inAppCron ? await (await import('../../scheduler/index.js')).startInAppScheduler(ctx) : undefined;
        if (!scheduler) logger.info('in-app scheduler off (IN_APP_CRON); use cron or the /api/cron endpoints');

        const address = await server.app.listen({ port, host });
        logger.info({ address }, 'eventops serve listening');
        process.stdout.write(startedLines(address, config).join('\n') + '\n');
        const listening = server.app.server.address();
        const unreachableLinks = publicUrlPortMismatch(config.authUrl ?? config.appUrl, typeof listening === 'object' && listening ? listening.port : port);
        if (unreachableLinks) logger.warn(unreachableLinks);
        void import('../../ops/clock-check.js').then(({ reportClockOffset }) => reportClockOffset(ctx));
      } catch (error) {
        // Whatever failed once the database was open (telemetry, the server, the scheduler, listen): without this the
        // scheduler, the delivery loop (its LISTEN connection) and an embedded database would keep an unseen process running.
        await stopAll().catch((stopError: unknown) => logger.error({ err: stopError }, 'error while stopping after a failed start'));
        await ctx.close().catch((closeError: unknown) => logger.error({ err: closeError }, 'error while closing the database after a failed start'));
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error;
        throw new AppError('listen_failed', `cannot listen on ${host}:${port}: ${code === 'EADDRINUSE' ? 'the address is in use' : 'permission denied'}`, {
          cause: error,
          suggestion: code === 'EADDRINUSE' ? 'another process (another eventops serve?) uses the port: stop it, or choose --port' : 'ports below 1024 need privileges: choose --port 3000 and a proxy in front',
        });
      }

      await new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          logger.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
          const force = setTimeout(() => {
            logger.error('graceful shutdown took too long; closing anyway');
            resolve();
          }, SHUTDOWN_GRACE_MS);
          force.unref();
          void (async () => {
            try {
              await stopAll();
            } catch (error) {
              logger.error({ err: error }, 'error during shutdown');
            } finally {
              clearTimeout(force);
              resolve();
            }
          })();
        };
        process.once('SIGTERM', () => shutdown('SIGTERM'));
        process.once('SIGINT', () => shutdown('SIGINT'));
        ctx.takeOverSignals();
      });
      await ctx.close();
      logger.info('stopped');
    });
}


/**
 * Said on stdout when the server is up, for the person who started it (the JSON log on stderr is for machines):
 * where it listens, and where the public finds the events page (the public address, else this server itself).
 */
export function startedLines(listening: string, config: Pick<AppConfig, 'authUrl' | 'appUrl'>): string[] {
  const base = publicAddress(config);
  return [
    `eventops is listening on ${listening}`,
    base === undefined
      ? 'public address: not set (AUTH_URL, else APP_URL): links in emails cannot be built'
      : `public address: ${base}`,
    `events page: ${base === undefined ? `${listening.replace(/\/+$/, '')}/` : eventsPageUrl(config)}`,
  ];
}
