import net from 'node:net';

interface SocketRequest {
  host?: string;
  port?: number;
}

type SocketCallback = (error: Error | null, socketOptions?: { connection: net.Socket }) => void;

/**
 * Opens the pooled transport's TCP connections with Nagle's algorithm off.
 * nodemailer writes each command and the message in small pieces; with Nagle on,
 * the last piece waits for the server's delayed ACK (about 40 ms on Linux) on every
 * message, so a connection managed about 20 messages a second instead of hundreds.
 * A connected socket is handed over as nodemailer's `connection`; it still upgrades
 * it to TLS itself (implicit TLS on 465, STARTTLS otherwise).
 */
export function noDelaySocket(timeoutMs: number) {
  return (request: SocketRequest, callback: SocketCallback): void => {
    const socket = net.connect({ host: request.host, port: request.port ?? 25, noDelay: true });
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      socket.setTimeout(0);
      socket.removeListener('error', settle);
      if (error) {
        socket.destroy();
        callback(error);
      } else {
        socket.setKeepAlive(true);
        callback(null, { connection: socket });
      }
    };
    socket.setTimeout(timeoutMs, () => settle(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT' })));
    socket.once('error', settle);
    socket.once('connect', () => settle(null));
  };
}
