import type { Command } from 'commander';
import { registerConfigCommands } from './config.js';
import { registerInitCommand } from './init.js';
import { registerMigrateCommand } from './migrate.js';
import { registerJobCommands } from './jobs.js';
import { registerStatusCommand } from './status.js';
import { registerDemoCommand } from './demo.js';
import { registerServeCommand } from './serve.js';
import { registerEventsCommands } from './events.js';
import { registerSyncWebsiteCommand } from './sync-website.js';
import { registerSetupCommand } from './setup.js';
import { registerUsersCommands } from './users.js';
import { registerPeopleCommands } from './people.js';
import { registerSettingsCommands } from './settings.js';
import { registerRotateKeysCommand } from './rotate-keys.js';
import { registerAlertsCommands } from './alerts.js';
import { registerReconcileCommand } from './reconcile.js';
import { registerRegistrationsCommands } from './registrations/index.js';

/** Every subcommand, one file each. Heavy modules are imported inside actions, never here. */
export function registerCommands(program: Command): void {
  registerInitCommand(program);
  registerConfigCommands(program);
  registerMigrateCommand(program);
  registerJobCommands(program);
  registerStatusCommand(program);
  registerDemoCommand(program);
  registerServeCommand(program);
  registerEventsCommands(program);
  registerSyncWebsiteCommand(program);
  registerSetupCommand(program);
  registerUsersCommands(program);
  registerPeopleCommands(program);
  registerSettingsCommands(program);
  registerRotateKeysCommand(program);
  registerAlertsCommands(program);
  registerReconcileCommand(program);
  registerRegistrationsCommands(program);
}
