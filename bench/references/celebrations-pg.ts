import fs from 'node:fs';
import pg from 'pg';
import nodemailer from 'nodemailer';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { noDelayConnection } from './tuned-socket.js';

/**
 * Reference for case 5: select today's celebrants through the month/day
 * indexes (two statements), decrypt their addresses, and send the messages
 * our run rendered (captured raw at the sink, matched by recipients) through
 * one pooled nodemailer transport with the product's pool size. No claims.
 */
interface Captured {
  from: string;
  to: string[];
  raw: string;
}
interface Row {
  id: string;
  email_enc: string | null;
  spouse_id: string | null;
}

const day = JSON.parse(process.env.BENCH_DAY as string) as { month: number; days: number[]; date: string };
const messages = new Map<string, Captured>();
for (const m of JSON.parse(fs.readFileSync(process.env.BENCH_MESSAGES_FILE as string, 'utf8')) as Captured[]) {
  messages.set([...m.to].sort().join(','), m);
}
const cipher = createFieldCipher({ keys: new Map([['v1', Buffer.from(process.env.ENCRYPTION_KEY as string, 'base64')]]), currentId: 'v1' });

const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const birthdays = await client.query<Row>(
  `SELECT id, email_enc, spouse_id FROM people
   WHERE birth_date IS NOT NULL AND birth_month = $1 AND birth_day = ANY($2::smallint[]) AND birth_date < $3::date AND email_enc IS NOT NULL`,
  [day.month, day.days, day.date],
);
const married = await client.query<Row>(
  `SELECT id, email_enc, spouse_id FROM people
   WHERE wedding_date IS NOT NULL AND wedding_month = $1 AND wedding_day = ANY($2::smallint[]) AND wedding_date < $3::date`,
  [day.month, day.days, day.date],
);
await client.end();

const recipientSets: string[][] = birthdays.rows.map((row) => [cipher.decrypt(row.email_enc as string)]);
const byId = new Map(married.rows.map((row) => [row.id, row]));
for (const row of married.rows) {
  const spouse = row.spouse_id ? byId.get(row.spouse_id) : undefined;
  if (spouse && spouse.spouse_id === row.id && spouse.id < row.id) continue; // the couple goes under the smaller id
  recipientSets.push([row, spouse].flatMap((p) => (p?.email_enc ? [cipher.decrypt(p.email_enc)] : [])));
}

const transport = nodemailer.createTransport({
  pool: true,
  maxConnections: 3,
  host: process.env.SMTP_HOST,
  port: Number(process.env.SMTP_PORT),
  secure: false,
  auth: { user: process.env.SMTP_USER as string, pass: process.env.SMTP_APP_PASSWORD as string },
  getSocket: noDelayConnection,
});
await Promise.all(
  recipientSets.map((to) => {
    const message = messages.get([...to].sort().join(','));
    if (!message) throw new Error(`no rendered message for ${to.join(',')}`);
    return transport.sendMail({ envelope: { from: message.from, to: message.to }, raw: message.raw });
  }),
);
transport.close();
process.stdout.write(`${recipientSets.length}\n`);
