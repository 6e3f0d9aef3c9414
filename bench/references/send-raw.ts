import fs from 'node:fs';
import nodemailer from 'nodemailer';
import { noDelayConnection } from './tuned-socket.js';

/**
 * Reference for case 4: the messages our run produced, already rendered
 * (captured raw at the SMTP sink), sent through one pooled nodemailer
 * transport with the product's pool size. No database, no rendering: only the
 * sending a reminder run cannot avoid.
 */
interface Captured {
  from: string;
  to: string[];
  raw: string;
}

const messages = JSON.parse(fs.readFileSync(process.env.BENCH_MESSAGES_FILE as string, 'utf8')) as Captured[];
const transport = nodemailer.createTransport({
  pool: true,
  maxConnections: Number(process.env.BENCH_POOL_SIZE ?? 3),
  host: process.env.SMTP_HOST,
  port: Number(process.env.SMTP_PORT),
  secure: false,
  auth: { user: process.env.SMTP_USER as string, pass: process.env.SMTP_APP_PASSWORD as string },
  getSocket: noDelayConnection,
});
await Promise.all(messages.map((m) => transport.sendMail({ envelope: { from: m.from, to: m.to }, raw: m.raw })));
transport.close();
process.stdout.write(`${messages.length}\n`);
