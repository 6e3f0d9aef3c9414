import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import { enqueueMail } from '../../mail/queue.js';
import { defineEmailTemplate, loadEmailBranding } from '../../mail/render.js';
import type { WaitlistContact } from './entries.js';
import { claimUrl, leaveUrl } from './links.js';

type MailContext = Pick<AppContext, 'config' | 'cipher'>;

interface EventNamed {
  slug: string;
  title: string;
  startsAt: Date;
}

interface JoinedData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  position: number;
  places: number;
  severalPlaces: boolean;
  leaveUrl?: string;
}

const joinedEmail = defineEmailTemplate<JoinedData>({
  subject: 'You are on the waiting list: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>You are number <strong>{{position}}</strong> on the waiting list for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), for {{places}} {{#if severalPlaces}}places{{else}}place{{/if}}.</p>
<p>When places free up we offer them in the order people joined, by email. An offer holds the places for you for a limited time.</p>
{{#if leaveUrl}}<p>No longer need the places? <a href="{{leaveUrl}}">Leave the waiting list</a>.</p>{{/if}}`,
  text: `Hi {{name}},

You are number {{position}} on the waiting list for {{eventTitle}} ({{dateTime eventStartsAt}}), for {{places}} {{#if severalPlaces}}places{{else}}place{{/if}}.

When places free up we offer them in the order people joined, by email. An offer holds the places for you for a limited time.
{{#if leaveUrl}}

No longer need the places? Leave the waiting list: {{leaveUrl}}
{{/if}}`,
});

interface OfferData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  places: number;
  severalPlaces: boolean;
  expiresAt: Date;
  claimUrl?: string;
  leaveUrl?: string;
}

const offerEmail = defineEmailTemplate<OfferData>({
  subject: 'Places are free for you: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>{{places}} {{#if severalPlaces}}places have{{else}}place has{{/if}} come free at <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), and we are holding {{#if severalPlaces}}them{{else}}it{{/if}} for you until <strong>{{dateTime expiresAt}}</strong>.</p>
{{#if claimUrl}}<p><a href="{{claimUrl}}" style="display:inline-block;padding:10px 16px;border-radius:6px;background:#0f172a;color:#ffffff;text-decoration:none;">Register now</a></p>{{/if}}
<p>If you do not register by then, the places go to the next family on the list.</p>
{{#if leaveUrl}}<p>No longer need them? <a href="{{leaveUrl}}">Leave the waiting list</a>.</p>{{/if}}`,
  text: `Hi {{name}},

{{places}} {{#if severalPlaces}}places have{{else}}place has{{/if}} come free at {{eventTitle}} ({{dateTime eventStartsAt}}), and we are holding {{#if severalPlaces}}them{{else}}it{{/if}} for you until {{dateTime expiresAt}}.
{{#if claimUrl}}

Register now: {{claimUrl}}
{{/if}}

If you do not register by then, the places go to the next family on the list.
{{#if leaveUrl}}

No longer need them? Leave the waiting list: {{leaveUrl}}
{{/if}}`,
});

interface RemovedData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
}

const removedEmail = defineEmailTemplate<RemovedData>({
  subject: 'Waiting list: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>You are no longer on the waiting list for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}).</p>
<p>If this is not what you expected, please contact us.</p>`,
  text: `Hi {{name}},

You are no longer on the waiting list for {{eventTitle}} ({{dateTime eventStartsAt}}).

If this is not what you expected, please contact us.`,
});

export async function queueJoinedEmail(
  trx: Knex.Transaction,
  ctx: MailContext,
  input: { entryId: string; contact: WaitlistContact; event: EventNamed; position: number; places: number },
  now: Date,
): Promise<number> {
  const rendered = joinedEmail(
    {
      name: input.contact.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      position: input.position,
      places: input.places,
      severalPlaces: input.places > 1,
      leaveUrl: leaveUrl(ctx.config, input.entryId),
    },
    await loadEmailBranding(trx, ctx.config),
  );
  return enqueueMail(trx, ctx.cipher, { kind: 'waitlist-joined', message: { to: [input.contact.email], ...rendered, idempotencyKey: `waitlist-joined-${input.entryId}` } }, now);
}

export async function queueOfferEmail(
  trx: Knex.Transaction,
  ctx: MailContext,
  input: { entryId: string; offerSeq: number; contact: WaitlistContact; event: EventNamed; places: number; expiresAt: Date },
  now: Date,
): Promise<number> {
  const rendered = offerEmail(
    {
      name: input.contact.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      places: input.places,
      severalPlaces: input.places > 1,
      expiresAt: input.expiresAt,
      claimUrl: claimUrl(ctx.config, input.event.slug, { entryId: input.entryId, offerSeq: input.offerSeq }),
      leaveUrl: leaveUrl(ctx.config, input.entryId),
    },
    await loadEmailBranding(trx, ctx.config),
  );
  return enqueueMail(
    trx,
    ctx.cipher,
    { kind: 'waitlist-offer', message: { to: [input.contact.email], ...rendered, idempotencyKey: `waitlist-offer-${input.entryId}-${input.offerSeq}` } },
    now,
  );
}

export async function queueRemovedEmail(
  trx: Knex.Transaction,
  ctx: MailContext,
  input: { entryId: string; contact: WaitlistContact; event: EventNamed },
  now: Date,
): Promise<number> {
  const rendered = removedEmail(
    { name: input.contact.name, eventTitle: input.event.title, eventStartsAt: input.event.startsAt },
    await loadEmailBranding(trx, ctx.config),
  );
  return enqueueMail(trx, ctx.cipher, { kind: 'waitlist-removed', message: { to: [input.contact.email], ...rendered, idempotencyKey: `waitlist-removed-${input.entryId}` } }, now);
}
