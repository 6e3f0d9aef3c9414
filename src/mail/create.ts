import type { AppConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { Mailer } from './types.js';

export async function createMailer(_config: AppConfig, _logger: Logger): Promise<Mailer> {
  throw new Error('mailer not built yet');
}
