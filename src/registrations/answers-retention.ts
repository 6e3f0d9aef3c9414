/**
 * When an event's sensitive answers are purged: `sensitive_retention_days` calendar days (in the church's time
 * zone, `:tz`) after the event ends, or starts when it has no end. An SQL expression over `e` (events): the
 * purge job claims by it and `registrations show` announces it, so what the office is told is what happens.
 */
export const SENSITIVE_PURGE_AT = `((COALESCE(e.ends_at, e.starts_at) AT TIME ZONE :tz) + make_interval(days => e.sensitive_retention_days)) AT TIME ZONE :tz`;
