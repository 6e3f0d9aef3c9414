import type { AppConfig } from '../config/types.js';
import { eventPath } from './event-view.js';

type AddressConfig = Pick<AppConfig, 'authUrl' | 'appUrl'>;

/** The app's public address (AUTH_URL, else APP_URL), as every link in emails and pages starts; undefined when neither is set. */
export function publicAddress(config: AddressConfig): string | undefined {
  return (config.authUrl ?? config.appUrl)?.replace(/\/+$/, '');
}

/** The church's events page, the site's front page: the public address itself. */
export function eventsPageUrl(config: AddressConfig): string | undefined {
  const base = publicAddress(config);
  return base === undefined ? undefined : `${base}/`;
}

/** An event's public page, at the path the server answers it on (eventPath). */
export function eventPageUrl(config: AddressConfig, slug: string): string | undefined {
  const base = publicAddress(config);
  return base === undefined ? undefined : `${base}${eventPath(slug)}`;
}
