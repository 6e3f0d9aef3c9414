/**
 * A name as the office search compares it: decomposed (NFD), without its combining accents (U+0300–U+036F),
 * in lower case. "José Muñoz" and "JOSE MUNOZ" both read "jose munoz", whether stored composed or
 * decomposed. Accents go before the case, as in SQL (foldSql), so "İ" is "i" on both sides.
 * Pure, so the check-in page's script folds its search with this very function.
 */
export function foldForSearch(text: string): string {
  // Lower case letter by letter, as PostgreSQL's lower() does: a whole-string toLowerCase() writes a word-final
  // capital sigma as "ς", which lower() writes "σ", and "ΟΔΟΣ" would not find itself.
  return Array.from(text.normalize('NFD').replace(/[\u0300-\u036f]/g, ''), (letter) => letter.toLowerCase()).join('');
}
