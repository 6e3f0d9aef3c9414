import type { Command } from 'commander';

type Register = (program: Command) => void;

interface CommandModule {
  /** The top-level commands the module registers. */
  names: readonly string[];
  load: () => Promise<Register>;
}

/** Every subcommand, one file each, in the order help lists them. Heavy modules are imported inside actions, never here. */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { names: ['init'], load: async () => (await import('./init.js')).registerInitCommand },
  { names: ['config'], load: async () => (await import('./config.js')).registerConfigCommands },
  { names: ['migrate'], load: async () => (await import('./migrate.js')).registerMigrateCommand },
  {
    names: ['send-reminders', 'sweep-checkouts', 'send-celebrations', 'send-clearance-digest', 'error-issues', 'purge-answers'],
    load: async () => (await import('./jobs.js')).registerJobCommands,
  },
  { names: ['status'], load: async () => (await import('./status.js')).registerStatusCommand },
  { names: ['demo'], load: async () => (await import('./demo.js')).registerDemoCommand },
  { names: ['serve'], load: async () => (await import('./serve.js')).registerServeCommand },
  { names: ['events'], load: async () => (await import('./events.js')).registerEventsCommands },
  { names: ['sync-website'], load: async () => (await import('./sync-website.js')).registerSyncWebsiteCommand },
  { names: ['setup'], load: async () => (await import('./setup.js')).registerSetupCommand },
  { names: ['users'], load: async () => (await import('./users.js')).registerUsersCommands },
  { names: ['people'], load: async () => (await import('./people/index.js')).registerPeopleCommands },
  { names: ['settings'], load: async () => (await import('./settings.js')).registerSettingsCommands },
  { names: ['rotate-keys'], load: async () => (await import('./rotate-keys.js')).registerRotateKeysCommand },
  { names: ['alerts'], load: async () => (await import('./alerts.js')).registerAlertsCommands },
  { names: ['errors'], load: async () => (await import('./errors.js')).registerErrorsCommand },
  { names: ['reconcile'], load: async () => (await import('./reconcile.js')).registerReconcileCommand },
  { names: ['registrations'], load: async () => (await import('./registrations/index.js')).registerRegistrationsCommands },
  { names: ['funds'], load: async () => (await import('./funds.js')).registerFundsCommands },
  { names: ['waitlist'], load: async () => (await import('./waitlist.js')).registerWaitlistCommands },
  { names: ['codes'], load: async () => (await import('./codes/index.js')).registerCodesCommands },
  { names: ['checkin'], load: async () => (await import('./checkin/index.js')).registerCheckinCommands },
  { names: ['outbox'], load: async () => (await import('./outbox/index.js')).registerOutboxCommands },
];

/**
 * Registers the command `argv` names, and only its module: a cron job's start does not load and
 * build the options of twenty other commands. Help, version, an unknown name or none at all
 * register every command, so help lists them and commander can suggest the nearest.
 */
export async function registerCommands(program: Command, argv?: readonly string[]): Promise<void> {
  const named = argv?.[2];
  const only = named === undefined ? undefined : COMMAND_MODULES.find((module) => module.names.includes(named));
  const modules = only ? [only] : COMMAND_MODULES;
  const registers = await Promise.all(modules.map((module) => module.load()));
  for (const register of registers) register(program);
}
