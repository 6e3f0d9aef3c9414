/** RFC 5545 3.1: a content line is at most 75 octets, excluding its line break. */
const MAX_LINE_OCTETS = 75;

/**
 * Refolds an iCalendar text at 75 octets. The ics package folds at 75
 * characters, so a title or place in Cyrillic, Vietnamese or CJK made lines of
 * up to three times the limit, which strict calendar importers refuse or cut.
 * Folds fall between characters, never inside one's UTF-8 bytes.
 */
export function foldCalendarLines(ics: string): string {
  const unfolded = ics.replace(/\r\n[ \t]/g, '');
  return unfolded
    .split('\r\n')
    .map((line) => foldLine(line))
    .join('\r\n');
}

function foldLine(line: string): string {
  const parts: string[] = [];
  let part = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char, 'utf8');
    // Continuation lines start with a space, which counts towards their 75.
    if (octets + size > MAX_LINE_OCTETS) {
      parts.push(part);
      part = ' ';
      octets = 1;
    }
    part += char;
    octets += size;
  }
  parts.push(part);
  return parts.join('\r\n');
}
