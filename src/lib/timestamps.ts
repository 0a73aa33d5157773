const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 date-time with a time zone (`2027-01-31T12:00:00Z`, seconds optional) naming a day
 * that exists, in a year UTC writes with four digits.
 */
export function isTimestamp(value: string): boolean {
  const time = TIMESTAMP.exec(value);
  if (!time) return false;
  // Date.parse takes 24:00 (the next day's midnight); RFC 3339 has no hour 24.
  const [hour, minute, second = '0', , offsetHours = '0', offsetMinutes = '0'] = time.slice(1);
  if (+hour > 23 || +minute > 59 || +second > 59 || +offsetHours > 23 || +offsetMinutes > 59) return false;
  // Date.parse rolls 2026-02-30 over into March; a date that rolls over is not a date.
  const [year, month, day] = value.slice(0, 10).split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  const instant = Date.parse(value);
  // Stored in UTC: 9999-12-31T23:00-12:00 is in year 10000, which ISO 8601 writes as +010000.
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && !Number.isNaN(instant) && new Date(instant).getUTCFullYear() <= 9999;
}
