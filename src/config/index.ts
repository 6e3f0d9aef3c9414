export * from './types.js';
export { loadConfig, ConfigError, isSecretVariable, DEFAULTS, type EnvSource } from './load.js';
export { envFilePermissionWarning, loadEnvFile, packageRoot, quotedValuesWithHash } from './env-file.js';
export { describeConfig } from './describe.js';
export { proxyWarnings, trustProxyWarning, TRUST_PROXY_WARNING } from './proxy.js';
