import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { startTelemetry } from '../../src/telemetry.js';

describe('telemetry', () => {
  it('is nothing at all without TELEMETRY_CONNECTION_STRING', async () => {
    expect(await startTelemetry(undefined, silentLogger())).toBeUndefined();
  });

  it('exports spans to the Azure Monitor ingestion endpoint of the connection string', async () => {
    // The exporter always speaks TLS: a throwaway self-signed certificate for the local endpoint.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-otel-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // this test file's own process only (forks pool)
    const bodies: string[] = [];
    const server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        bodies.push(request.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw).toString() : raw.toString());
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ itemsReceived: 1, itemsAccepted: 1, errors: [] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const telemetry = await startTelemetry(
      `InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://127.0.0.1:${port}/`,
      silentLogger(),
    );
    const span = telemetry?.startSpan('job send-reminders', { 'eventops.trigger': 'scheduler' });
    span?.setAttribute('eventops.outcome', 'ok');
    span?.end();
    await telemetry?.shutdown();
    server.close();
    expect(bodies.join('\n')).toContain('job send-reminders');
  });
});
