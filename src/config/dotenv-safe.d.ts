// dotenv-safe ships no types: the part of its API that env-file.ts uses.
declare module 'dotenv-safe' {
  interface MissingEnvVarsError extends Error {
    missing: string[];
  }
  const dotenvSafe: {
    config(options: { path: string; example: string; allowEmptyValues?: boolean; quiet?: boolean }): unknown;
    MissingEnvVarsError: new (...args: never[]) => MissingEnvVarsError;
  };
  export default dotenvSafe;
}
