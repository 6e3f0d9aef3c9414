import net from 'node:net';

/**
 * The references' SMTP transport as production would tune it: TCP connections with
 * Nagle's algorithm off. Without it every message waits for the server's delayed ACK
 * (about 40 ms on Linux), which bounded both sides at about 20 messages a second per
 * connection: such a reference is slow for the same reason we were, not a floor.
 */
export function noDelayConnection(request: { host?: string; port?: number }, callback: (error: Error | null, options?: { connection: net.Socket }) => void): void {
  const socket = net.connect({ host: request.host, port: request.port ?? 25, noDelay: true });
  socket.once('error', (error) => callback(error));
  socket.once('connect', () => callback(null, { connection: socket }));
}
