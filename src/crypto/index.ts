export * from './field-cipher.js';
export * from './signed-tokens.js';
