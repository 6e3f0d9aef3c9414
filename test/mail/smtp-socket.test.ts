import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.js';
import { noDelaySocket } from '../../src/mail/smtp-socket.js';
import { startSmtpSink } from '../support/smtp-sink.js';

const open = (host: string, port: number) =>
  new Promise<net.Socket>((resolve, reject) => noDelaySocket(2_000)({ host, port }, (error, options) => (error ? reject(error) : resolve(options!.connection))));

describe('SMTP connections', () => {
  it('are handed to the transport connected, so it can greet (and upgrade to TLS) itself', async () => {
    const sink = await startSmtpSink();
    try {
      const socket = await open(sink.host, sink.port);
      const greeting = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
      expect(greeting).toMatch(/^220 /);
      socket.destroy();
    } finally {
      await sink.close();
    }
  });

  it('a refused connection fails with the socket error, for the mailer to classify', async () => {
    await expect(open('127.0.0.1', await freePort())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
