/**
 * A fixed-offset zone where it is about midday now, so a job due from 07:00 local
 * (celebrations, the digest) is due whatever the hour of the test run
 * (Etc/GMT-N is N hours east of UTC).
 */
export function zoneWhereItIsMidday(now = new Date()): string {
  const offset = 12 - now.getUTCHours();
  if (offset === 0) return 'Etc/UTC';
  return offset > 0 ? `Etc/GMT-${offset}` : `Etc/GMT+${-offset}`;
}
