import Handlebars from 'handlebars';
import type { AppConfig, Theme } from '../config/types.js';
import type { Db } from '../db/connect.js';
import { moneyFormatter } from '../money-format.js';
import { memberDateTime, memberDateTimeSpan } from '../time-format.js';
import { loadChurchIdentity, type ChurchIdentity } from './identity.js';

/**
 * An email's own content as Handlebars sources. `html` is escaped by
 * Handlebars ({{value}}); `text` and `subject` are plain text and not escaped.
 * Both bodies see the caller's data plus `church` (the identity), and the
 * helpers `money` (integer minor units), `date`, `dateTime` and `dateTimeSpan` (start and
 * optional end; in APP_TIMEZONE, naming the zone).
 */
export interface EmailTemplate {
  subject: string;
  /** Heading at the top of the HTML body; the subject when absent. */
  heading?: string;
  html: string;
  text: string;
}

export interface EmailBranding {
  identity: ChurchIdentity;
  theme: Pick<Theme, 'primary'>;
  regional: AppConfig['regional'];
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
  /** The church's name, as the header and footer show it: the From's display name. */
  fromName: string;
  /** Where the recipient stops emails of this kind: in the footer, and the List-Unsubscribe header. */
  unsubscribeUrl?: string;
}

export interface RenderOptions {
  /** A link in both footers ("Don't want these emails? Unsubscribe"), passed on as the message's unsubscribeUrl. */
  unsubscribeUrl?: string;
}

export type EmailRenderer<D extends object> = (data: D, branding: EmailBranding, options?: RenderOptions) => RenderedEmail;

// An environment of our own: nothing registered on the shared Handlebars instance.
const handlebars = Handlebars.create();

const HTML_LAYOUT = handlebars.compile(`<!doctype html>
<html lang="{{lang}}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{subject}}</title></head>
<body style="margin:0;padding:0;background:#f4f4f5;font-family:Arial,Helvetica,sans-serif;color:#18181b;">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0" style="background:#f4f4f5;">
<tr><td align="center" style="padding:24px 12px;">
<table role="presentation" width="600" cellspacing="0" cellpadding="0" style="max-width:600px;width:100%;background:#ffffff;border-radius:6px;overflow:hidden;">
<tr><td style="background:{{primary}};color:#ffffff;padding:16px 24px;font-size:18px;font-weight:bold;">{{church.name}}</td></tr>
<tr><td style="padding:24px;font-size:15px;line-height:1.5;">
<h1 style="margin:0 0 16px;font-size:20px;">{{heading}}</h1>
{{{body}}}
</td></tr>
<tr><td style="padding:16px 24px;border-top:1px solid #e4e4e7;font-size:12px;color:#71717a;">
<div>{{church.name}}</div>
{{#if church.address}}<div>{{church.address}}</div>{{/if}}
{{#if church.abn}}<div>ABN {{church.abn}}</div>{{/if}}
{{#if church.website}}<div><a href="{{church.website}}" style="color:{{primary}};">{{church.website}}</a></div>{{/if}}
{{#if unsubscribeUrl}}<div style="margin-top:8px;">Don't want these emails? <a href="{{unsubscribeUrl}}" style="color:{{primary}};">Unsubscribe</a></div>{{/if}}
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`);

const TEXT_LAYOUT = handlebars.compile(
  `{{church.name}}

{{{body}}}

--
{{church.name}}
{{#if church.address}}{{church.address}}
{{/if}}{{#if church.abn}}ABN {{church.abn}}
{{/if}}{{#if church.website}}{{church.website}}
{{/if}}{{#if unsubscribeUrl}}
Don't want these emails? Unsubscribe: {{unsubscribeUrl}}
{{/if}}`,
  { noEscape: true },
);

/** Compiles a template once; the returned function renders it with any data and branding. */
export function defineEmailTemplate<D extends object>(template: EmailTemplate): EmailRenderer<D> {
  const subject = handlebars.compile(template.subject, { noEscape: true });
  const heading = template.heading === undefined ? undefined : handlebars.compile(template.heading, { noEscape: true });
  const html = handlebars.compile(template.html);
  const text = handlebars.compile(template.text, { noEscape: true });
  return (data, branding, options = {}) => {
    const context = { ...data, church: branding.identity };
    const runtime = { helpers: formatHelpers(branding.regional) };
    // Header values are one line.
    const renderedSubject = subject(context, runtime).replace(/\s+/g, ' ').trim();
    const layoutContext = {
      church: branding.identity,
      primary: branding.theme.primary,
      lang: branding.regional.locale,
      subject: renderedSubject,
      heading: heading ? heading(context, runtime).trim() : renderedSubject,
      unsubscribeUrl: options.unsubscribeUrl,
    };
    return {
      subject: renderedSubject,
      html: HTML_LAYOUT({ ...layoutContext, body: html(context, runtime) }),
      text: TEXT_LAYOUT({ ...layoutContext, body: text(context, runtime).trim() }).trimEnd() + '\n',
      fromName: branding.identity.name,
      ...(options.unsubscribeUrl === undefined ? {} : { unsubscribeUrl: options.unsubscribeUrl }),
    };
  };
}

/** One-off rendering; prefer defineEmailTemplate for templates used repeatedly. */
export function renderEmail<D extends object>(template: EmailTemplate, data: D, branding: EmailBranding): RenderedEmail {
  return defineEmailTemplate<D>(template)(data, branding);
}

/** Identity (Settings, then CHURCH_*), theme colour and regional formats for rendering. */
export async function loadEmailBranding(db: Db, config: AppConfig): Promise<EmailBranding> {
  return emailBrandingFrom(await loadChurchIdentity(db, config), config);
}

export function emailBrandingFrom(identity: ChurchIdentity, config: AppConfig): EmailBranding {
  return { identity, theme: config.theme, regional: config.regional };
}

const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Intl formatters are costly to build (a receipt used to spend more time
 * constructing them than rendering), and the regional settings of a process
 * never change: one set of helpers per distinct regional configuration.
 */
const helpersByRegion = new Map<string, Record<string, Handlebars.HelperDelegate>>();

function formatHelpers(regional: AppConfig['regional']): Record<string, Handlebars.HelperDelegate> {
  const key = `${regional.locale}|${regional.currency}|${regional.timeZone}`;
  let helpers = helpersByRegion.get(key);
  if (!helpers) {
    helpers = buildFormatHelpers(regional);
    helpersByRegion.set(key, helpers);
  }
  return helpers;
}

function buildFormatHelpers(regional: AppConfig['regional']): Record<string, Handlebars.HelperDelegate> {
  const money = moneyFormatter(regional);
  const calendarDate = new Intl.DateTimeFormat(regional.locale, { dateStyle: 'long', timeZone: 'UTC' });
  const localDate = new Intl.DateTimeFormat(regional.locale, { dateStyle: 'long', timeZone: regional.timeZone });
  // Named zone and all: the pages write an event's time with this same formatter.
  const dateTime = memberDateTime(regional);
  const dateTimeSpan = memberDateTimeSpan(regional);
  return {
    money: (minor: unknown) => (typeof minor === 'number' ? money(minor) : ''),
    // A calendar date (YYYY-MM-DD) has no time zone; an instant is shown in the church's zone.
    date: (value: unknown) => {
      if (typeof value === 'string' && CALENDAR_DATE.test(value)) return calendarDate.format(new Date(`${value}T00:00:00Z`));
      const instant = toDate(value);
      return instant ? localDate.format(instant) : '';
    },
    dateTime: (value: unknown) => {
      const instant = toDate(value);
      return instant ? dateTime(instant) : '';
    },
    dateTimeSpan: (start: unknown, end: unknown) => {
      const from = toDate(start);
      return from ? dateTimeSpan(from, toDate(end)) : '';
    },
  };
}

function toDate(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value === 'string' || typeof value === 'number') {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}
