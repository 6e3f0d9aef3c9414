import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import { enqueueMail, type QueuedMailInput } from '../../mail/queue.js';
import { defineEmailTemplate, emailBrandingFrom, loadEmailBranding } from '../../mail/render.js';
import type { ChurchIdentity } from '../../mail/identity.js';
import type { WaitlistContact } from './entries.js';
import { claimUrl, confirmUrl, eventUrl, leaveUrl } from './links.js';

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

export const offerEmail = defineEmailTemplate<OfferData>({
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

interface ConfirmData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  places: number;
  severalPlaces: boolean;
  confirmUrl?: string;
}

/** The public form's join: the mailbox confirms it, or nothing more happens. */
export const confirmEmail = defineEmailTemplate<ConfirmData>({
  subject: 'Confirm your place on the waiting list: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>We were asked to put this email address on the waiting list for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}), for {{places}} {{#if severalPlaces}}places{{else}}place{{/if}}.</p>
<p>You are not on the list until you confirm, within 24 hours.</p>
{{#if confirmUrl}}<p><a href="{{confirmUrl}}" style="display:inline-block;padding:10px 16px;border-radius:6px;background:#0f172a;color:#ffffff;text-decoration:none;">Confirm my place on the waiting list</a></p>{{/if}}
<p>If you did not ask for this, ignore this email: nothing more happens.</p>`,
  text: `Hi {{name}},

We were asked to put this email address on the waiting list for {{eventTitle}} ({{dateTime eventStartsAt}}), for {{places}} {{#if severalPlaces}}places{{else}}place{{/if}}.

You are not on the list until you confirm, within 24 hours.
{{#if confirmUrl}}

Confirm my place on the waiting list: {{confirmUrl}}
{{/if}}

If you did not ask for this, ignore this email: nothing more happens.`,
});

interface AlreadyData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  places: number;
  severalPlaces: boolean;
  /** WAITING: its place in the queue. */
  position?: number;
  /** OFFERED: until when its places are held, and the link to take them. */
  offerExpiresAt?: Date;
  claimUrl?: string;
  leaveUrl?: string;
}

/** A join asked for a mailbox already on the list: told to the mailbox only, never on the form's answer. */
const alreadyEmail = defineEmailTemplate<AlreadyData>({
  subject: 'You are already on the waiting list: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>We were asked again to put this email address on the waiting list for <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}). It is already on the list, for {{places}} {{#if severalPlaces}}places{{else}}place{{/if}}, so nothing has changed.</p>
{{#if offerExpiresAt}}<p>Places are held for you until <strong>{{dateTime offerExpiresAt}}</strong>.{{#if claimUrl}} <a href="{{claimUrl}}">Register now</a>.{{/if}}</p>{{else}}<p>You are number <strong>{{position}}</strong> on the waiting list.</p>{{/if}}
{{#if leaveUrl}}<p>No longer need the places? <a href="{{leaveUrl}}">Leave the waiting list</a>.</p>{{/if}}`,
  text: `Hi {{name}},

We were asked again to put this email address on the waiting list for {{eventTitle}} ({{dateTime eventStartsAt}}). It is already on the list, for {{places}} {{#if severalPlaces}}places{{else}}place{{/if}}, so nothing has changed.

{{#if offerExpiresAt}}Places are held for you until {{dateTime offerExpiresAt}}.{{#if claimUrl}} Register now: {{claimUrl}}{{/if}}{{else}}You are number {{position}} on the waiting list.{{/if}}
{{#if leaveUrl}}

No longer need the places? Leave the waiting list: {{leaveUrl}}
{{/if}}`,
});

interface OfferExpiredData {
  name: string;
  eventTitle: string;
  eventStartsAt: Date;
  places: number;
  severalPlaces: boolean;
  expiredAt: Date;
  eventUrl?: string;
}

const offerExpiredEmail = defineEmailTemplate<OfferExpiredData>({
  subject: 'Your waiting-list offer has expired: {{eventTitle}}',
  html: `<p>Hi {{name}},</p>
<p>The {{places}} {{#if severalPlaces}}places{{else}}place{{/if}} we held for you at <strong>{{eventTitle}}</strong> ({{dateTime eventStartsAt}}) until {{dateTime expiredAt}} {{#if severalPlaces}}were{{else}}was{{/if}} not taken, so {{#if severalPlaces}}they have{{else}}it has{{/if}} gone to the next family on the waiting list, and you are no longer on it.</p>
<p>If you still need places, you can join the waiting list again{{#if eventUrl}} on <a href="{{eventUrl}}">the event's page</a>{{/if}}.</p>`,
  text: `Hi {{name}},

The {{places}} {{#if severalPlaces}}places{{else}}place{{/if}} we held for you at {{eventTitle}} ({{dateTime eventStartsAt}}) until {{dateTime expiredAt}} {{#if severalPlaces}}were{{else}}was{{/if}} not taken, so {{#if severalPlaces}}they have{{else}}it has{{/if}} gone to the next family on the waiting list, and you are no longer on it.

If you still need places, you can join the waiting list again{{#if eventUrl}}: {{eventUrl}}{{/if}}.`,
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

export async function confirmEmailMessage(
  db: Knex,
  ctx: MailContext,
  input: { entryId: string; contact: WaitlistContact; event: EventNamed; places: number },
  identity?: ChurchIdentity,
): Promise<QueuedMailInput> {
  const rendered = confirmEmail(
    {
      name: input.contact.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      places: input.places,
      severalPlaces: input.places > 1,
      confirmUrl: confirmUrl(ctx.config, input.entryId),
    },
    identity ? emailBrandingFrom(identity, ctx.config) : await loadEmailBranding(db, ctx.config),
  );
  return { kind: 'waitlist-confirm', message: { to: [input.contact.email], ...rendered, idempotencyKey: `waitlist-confirm-${input.entryId}` } };
}

/** To the address the join typed (the mailbox the live entry shares), with the live entry's own name and state. */
export async function queueAlreadyOnListEmail(
  trx: Knex.Transaction,
  ctx: MailContext,
  input: {
    to: string;
    entry: { id: string; name: string; places: number; offerSeq: number; position?: number; offerExpiresAt?: Date };
    event: EventNamed;
    /** Each ask gets its own email (within the hourly caps): the mail API must not drop the second as a repeat. */
    askId: string;
  },
  now: Date,
): Promise<number> {
  const { entry } = input;
  const rendered = alreadyEmail(
    {
      name: entry.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      places: entry.places,
      severalPlaces: entry.places > 1,
      position: entry.position,
      offerExpiresAt: entry.offerExpiresAt,
      claimUrl: entry.offerExpiresAt ? claimUrl(ctx.config, input.event.slug, { entryId: entry.id, offerSeq: entry.offerSeq }) : undefined,
      leaveUrl: leaveUrl(ctx.config, entry.id),
    },
    await loadEmailBranding(trx, ctx.config),
  );
  return enqueueMail(trx, ctx.cipher, { kind: 'waitlist-already', message: { to: [input.to], ...rendered, idempotencyKey: `waitlist-already-${input.askId}` } }, now);
}

export async function queueOfferExpiredEmail(
  trx: Knex.Transaction,
  ctx: MailContext,
  input: { entryId: string; offerSeq: number; contact: WaitlistContact; event: EventNamed; places: number; expiredAt: Date },
  now: Date,
): Promise<number> {
  const rendered = offerExpiredEmail(
    {
      name: input.contact.name,
      eventTitle: input.event.title,
      eventStartsAt: input.event.startsAt,
      places: input.places,
      severalPlaces: input.places > 1,
      expiredAt: input.expiredAt,
      eventUrl: eventUrl(ctx.config, input.event.slug),
    },
    await loadEmailBranding(trx, ctx.config),
  );
  return enqueueMail(
    trx,
    ctx.cipher,
    { kind: 'waitlist-offer-expired', message: { to: [input.contact.email], ...rendered, idempotencyKey: `waitlist-offer-expired-${input.entryId}-${input.offerSeq}` } },
    now,
  );
}
