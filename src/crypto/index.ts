export * from './field-cipher.js';
