import { describe, expect, it } from 'vitest';
import { eventCalendarFile } from '../../src/mail/calendar.js';

const event = {
  id: '6f1c9a52-3b7e-4d55-9a43-1c2b3d4e5f60',
  title: 'Family Camp',
  location: 'Camp Grounds',
  starts_at: new Date('2027-03-12T07:00:00Z'),
  calendar_sequence: 3,
};
const field = (ics: string, name: string) => new RegExp(`^${name}[:;](.*)$`, 'm').exec(ics)?.[1];

describe('the calendar entry of an event', () => {
  it('ends when the event ends: a weekend camp fills the weekend in the calendar', () => {
    const ics = String(eventCalendarFile({ ...event, ends_at: new Date('2027-03-14T04:00:00Z') }, new Date('2027-03-01T00:00:00Z')).content);
    expect(field(ics, 'DTSTART')).toBe('20270312T070000Z');
    expect(field(ics, 'DTEND')).toBe('20270314T040000Z');
    expect(field(ics, 'DURATION')).toBeUndefined();
  });

  it('lasts two hours when the office gave no end', () => {
    const ics = String(eventCalendarFile({ ...event, ends_at: null }, new Date('2027-03-01T00:00:00Z')).content);
    expect(field(ics, 'DTSTART')).toBe('20270312T070000Z');
    expect(field(ics, 'DTEND')).toBeUndefined();
    expect(field(ics, 'DURATION')).toBe('PT2H');
  });
});
