// Counts in words for the office's messages: "1 seat freed", "116 places left", never "seat(s)".

const english = new Intl.PluralRules('en');

/** "1 seat", "2 seats", "0 seats": the count and the word the messages' language (English) takes for it. */
export function counted(count: number, one: string, other: string): string {
  return `${count} ${english.select(count) === 'one' ? one : other}`;
}
