/**
 * What any stored name or public text must not be, whoever typed it (the public form, /setup, the
 * office's commands). Control characters (C0, DEL, C1) and the bidirectional overrides that make text
 * display other than it is stored are refused outright: no name, address or token needs them, and
 * some (NUL) cannot be stored at all.
 */
const CONTROL_CHARACTERS = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

export function hasControlCharacters(value: string): boolean {
  return CONTROL_CHARACTERS.test(value);
}

/**
 * Characters that show as nothing: format characters (zero-width space and joiners, bidi marks) and
 * the blank fillers that Unicode files as letters (Hangul U+115F, U+1160, U+3164, U+FFA0; the empty
 * braille pattern U+2800).
 */
const INVISIBLE = /[\p{Cf}\u115f\u1160\u3164\uffa0\u2800]/gu;

/** Whether a name shows at least one letter or digit, in any script: one of only invisible characters reads as blank. */
export function hasVisibleLetterOrDigit(value: string): boolean {
  return /[\p{L}\p{N}]/u.test(value.replace(INVISIBLE, ''));
}
