export * from './types.js';
export { loadConfig, ConfigError, isSecretVariable, DEFAULTS, type EnvSource } from './load.js';
export { loadEnvFile, packageRoot, quotedValuesWithHash } from './env-file.js';
export { describeConfig } from './describe.js';
