import { formatInTimeZone } from 'date-fns-tz';
import type { AppConfig } from '../config/types.js';
import type { CheckinLink } from '../door/links.js';
import { groupByFamily } from '../door/family-order.js';
import type { Roll, RollAttendee } from '../door/roll.js';
import { counted } from '../plural.js';
import { foldForSearch } from '../search-fold.js';
import { browserAssetPath, CHECKIN_SCRIPT } from './browser-assets.js';
import { checkinWorkerPath } from './checkin-worker-route.js';
import { hereText } from './checkin-words.js';
import { pageFormat } from './templates/format.js';
import type { CheckinAttendeeView, CheckinPageData } from './templates/checkin-page.js';

function statusText(attendee: RollAttendee, timeZone: string): string {
  const time = (date: Date) => formatInTimeZone(date, timeZone, 'HH:mm');
  if (attendee.state === 'left' && attendee.checkedOutAt) return `Checked out ${time(attendee.checkedOutAt)} · ${attendee.checkedOutBy ?? ''}`;
  if (attendee.state === 'here' && attendee.checkedInAt) return `Checked in ${time(attendee.checkedInAt)} · ${attendee.checkedInBy ?? ''}`;
  return 'Not checked in';
}

export const CHECKIN_NOTICES: Record<string, string> = {
  paid: 'Payment recorded; the receipt is on its way to the family.',
  recorded: 'Saved.',
  unchanged: 'Nothing to change: someone else got there first.',
};

export function checkinPageData(
  config: Pick<AppConfig, 'regional'>,
  link: CheckinLink,
  token: string,
  roll: Roll,
  view: { query?: string; notice?: string; error?: string } = {},
): CheckinPageData & { title: string } {
  const format = pageFormat(config.regional);
  const query = view.query?.trim() ?? '';
  const folded = foldForSearch(query);
  const pageHref = `/checkin/${token}`;
  const attendees = roll.attendees.map(
    (attendee): CheckinAttendeeView => ({
      key: attendee.key,
      registrationId: attendee.registrationId,
      contactName: attendee.contactName,
      attendeeIndex: attendee.attendeeIndex,
      name: attendee.name,
      tierLabel: attendee.tierLabel,
      search: attendee.search,
      state: attendee.state,
      statusText: statusText(attendee, config.regional.timeZone),
      guardian: attendee.guardian,
      owes: attendee.owesMinor > 0 ? format.money(attendee.owesMinor) : null,
      flags: attendee.flags,
      hidden: folded !== '' && !attendee.search.includes(folded),
      checkInHidden: attendee.state === 'here',
      undoHidden: attendee.state === 'away',
      checkOutHidden: attendee.state !== 'here',
      payable: link.canTakePayment && attendee.owesMinor > 0,
    }),
  );
  const families = groupByFamily(attendees).map((members) => ({
    contactName: members[0]?.contactName ?? '',
    together: members.length > 1,
    sizeText: counted(members.length, 'person', 'people'),
    hidden: members.every((member) => member.hidden),
    attendees: members,
  }));
  const scriptSrc = browserAssetPath(CHECKIN_SCRIPT);
  return {
    title: `Check-in: ${roll.event.title}`,
    eventTitle: roll.event.title,
    label: link.label,
    openUntil: format.dateTime(link.expiresAt),
    here: roll.here,
    total: roll.total,
    hereText: hereText(roll.here, roll.total),
    leftText: roll.left > 0 ? `(${roll.left} checked out)` : null,
    query,
    notice: view.notice,
    error: view.error,
    pageHref,
    actionsHref: `${pageHref}/actions`,
    payHref: `${pageHref}/pay`,
    scriptSrc,
    // The worker keeps the page for a reload offline; it needs the script, which reads the page it keeps.
    workerSrc: scriptSrc ? checkinWorkerPath() : undefined,
    families,
  };
}
