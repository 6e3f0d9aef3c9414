import type MimeNode from 'nodemailer/lib/mime-node/index.js';
import * as base64 from 'nodemailer/lib/base64/index.js';
import * as qp from 'nodemailer/lib/qp/index.js';

/**
 * The bytes of a message nodemailer has composed (MailComposer.compile()),
 * written out in one pass with nodemailer's own header builder and encoders:
 * the same bytes as its `build()`, which streams each part through several
 * stream objects and event-loop turns and costs about twice the CPU (it was
 * most of a reminder run's own work). A message with a part this does not
 * cover (streamed or fetched content, raw parts) is left to `build()`;
 * test/mail/mime-bytes.test.ts compares the two.
 */
export async function messageBytes(root: MimeNode): Promise<Buffer> {
  return messageInOnePass(root) ?? root.build();
}

/** The message's bytes, or undefined when it has a part only build() can write. */
export function messageInOnePass(root: MimeNode): Buffer | undefined {
  const pieces: Array<string | Buffer> = [];
  if (!writeNode(root, pieces)) return undefined;
  const last = pieces.at(-1);
  const lastByte = typeof last === 'string' ? last.charCodeAt(last.length - 1) : last?.[last.length - 1];
  // As nodemailer's LastNewline: the message ends with a line break.
  if (lastByte !== 0x0a) pieces.push(lastByte === 0x0d ? '\n' : '\r\n');
  return Buffer.concat(pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece)));
}

/** Appends the node as MimeNode.stream() writes it; false for a node it leaves to build(). */
function writeNode(node: MimeNode, pieces: Array<string | Buffer>): boolean {
  if ((node as MimeNode & { _raw?: unknown })._raw) return false;
  const transferEncoding = node.getTransferEncoding();
  // Building the headers also settles whether the node is multipart, and its boundary.
  pieces.push(`${node.buildHeaders()}\r\n\r\n`);
  const content = node.content;
  if (node.multipart) {
    if (content) return false;
    for (const [index, child] of node.childNodes.entries()) {
      pieces.push(`${index > 0 ? '\r\n' : ''}--${String(node.boundary)}\r\n`);
      if (!writeNode(child, pieces)) return false;
    }
    pieces.push(`\r\n--${String(node.boundary)}--\r\n`);
    return true;
  }
  if (!content) return true;
  if (typeof content !== 'string' && !Buffer.isBuffer(content)) return false;
  if (transferEncoding === 'quoted-printable') pieces.push(qp.wrap(qp.encode(content), 76));
  else if (transferEncoding === 'base64') pieces.push(base64Lines(Buffer.from(content)));
  else pieces.push(content);
  return true;
}

/** As nodemailer's base64 Encoder given the content in one chunk: whole groups of 3 bytes wrapped, the rest on the last line. */
function base64Lines(content: Buffer): string {
  const whole = content.length - (content.length % 3);
  return base64.wrap(base64.encode(content.subarray(0, whole)), 76) + (whole < content.length ? base64.encode(content.subarray(whole)) : '');
}
