import type { Logger } from './logger.js';

export interface TelemetrySpan {
  setAttribute(key: string, value: string | number | boolean): void;
  setError(error: unknown): void;
  end(): void;
}

export interface Telemetry {
  startSpan(name: string, attributes?: Record<string, string | number | boolean>): TelemetrySpan;
  shutdown(): Promise<void>;
}

/**
 * With TELEMETRY_CONNECTION_STRING set, traces go to Azure Monitor through its
 * OpenTelemetry distribution, imported only then (it is large); otherwise
 * nothing is loaded and spans are no-ops.
 */
export async function startTelemetry(connectionString: string | undefined, logger: Logger): Promise<Telemetry | undefined> {
  if (!connectionString) return undefined;
  const { useAzureMonitor, shutdownAzureMonitor } = await import('@azure/monitor-opentelemetry');
  const api = await import('@opentelemetry/api');
  useAzureMonitor({
    azureMonitorExporterOptions: { connectionString },
    instrumentationOptions: { http: { enabled: false } },
  });
  const tracer = api.trace.getTracer('eventops');
  logger.info('telemetry: exporting traces to Azure Monitor');
  return {
    startSpan(name, attributes = {}) {
      const span = tracer.startSpan(name, { attributes });
      return {
        setAttribute: (key, value) => void span.setAttribute(key, value),
        setError: (error) => {
          span.recordException(error instanceof Error ? error : new Error(String(error)));
          span.setStatus({ code: api.SpanStatusCode.ERROR });
        },
        end: () => span.end(),
      };
    },
    shutdown: () => shutdownAzureMonitor(),
  };
}
