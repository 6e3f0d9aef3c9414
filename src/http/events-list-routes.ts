import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { eventsListPageData } from './events-list-view.js';
import type { PageRenderer } from './pages.js';
import { eventsListPage } from './templates/events-list-page.js';

/** The addresses of the church's events page: the site's front page, and /events beside each /events/<slug>. */
export const EVENTS_LIST_PATHS = ['/', '/events'] as const;

/**
 * The events page. Counted as a page view like the event page; like a plain view of the event page it has no
 * rate limit (it only reads).
 */
export function registerEventsListPage(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  for (const path of EVENTS_LIST_PATHS) {
    app.get(path, { config: { recordView: true } }, async (_request, reply) => page(reply, eventsListPage, await eventsListPageData(ctx)));
  }
}
