import { definePage } from '../pages.js';

export interface CheckinAttendeeView {
  key: string;
  registrationId: string;
  contactName: string;
  attendeeIndex: number;
  name: string;
  tierLabel: string;
  search: string;
  state: 'away' | 'here' | 'left';
  statusText: string;
  guardian: string | null;
  owes: string | null;
  flags: Array<{ label: string; value: string }>;
  /** Filtered out by the address's ?q= (the page without script). */
  hidden: boolean;
  checkInHidden: boolean;
  undoHidden: boolean;
  checkOutHidden: boolean;
  payable: boolean;
}

/** One registration's attendees, together on the roll (door/family-order.ts). */
export interface CheckinFamilyView {
  contactName: string;
  /** More than one attendee: the family is framed and named. */
  together: boolean;
  sizeText: string;
  /** Every attendee filtered out. */
  hidden: boolean;
  attendees: CheckinAttendeeView[];
}

export interface CheckinPageData {
  eventTitle: string;
  label: string;
  openUntil: string;
  here: number;
  total: number;
  hereText: string;
  leftText: string | null;
  query: string;
  notice?: string;
  error?: string;
  pageHref: string;
  actionsHref: string;
  payHref: string;
  scriptSrc?: string;
  /** The service worker that keeps the page for a reload offline (checkin-worker-route.ts). */
  workerSrc?: string;
  families: CheckinFamilyView[];
}

/**
 * The volunteers' page at the door: big buttons, a search that filters as you type (the script), or on submit
 * (without it), and counts. Every button is a form post, so it works without script; with it, taps are queued in
 * the phone and uploaded, so a lost signal loses nothing, and a service worker keeps the page for a reload
 * offline. The header that stays on screen holds only the title, the counts, the search and the queue's line, so
 * that a phone's screen is left to the roll.
 */
export const checkinPage = definePage<CheckinPageData>(`
<style>
  .roll-head { position: sticky; top: 0; z-index: 1; background: #fff; margin: 0 0 8px; padding: 4px 10px 6px; border-radius: 0 0 8px 8px; box-shadow: 0 2px 4px rgba(0,0,0,.12); }
  .head-line { display: flex; align-items: baseline; gap: 8px; }
  .roll-head h1 { flex: 1 1 auto; min-width: 0; margin: 0; font-size: 1.1rem; line-height: 1.5; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  #counts { flex: 0 0 auto; margin: 0; font-size: 1rem; font-weight: 600; white-space: nowrap; }
  #left-text { font-weight: 400; color: #52525b; font-size: .85rem; }
  #search-form { margin: 4px 0 0; }
  #search { min-height: 44px; padding: 8px 10px; }
  #queue-status { margin: 4px 0 0; background: #fef3c7; padding: 1px 8px; border-radius: 6px; font-size: .9rem; line-height: 1.4; }
  #refused { margin: 6px 0 0; background: #fee2e2; color: #7f1d1d; padding: 6px 10px; border-radius: 6px; }
  #refused p, #refused ul { margin: 0; }
  #refused ul { padding-left: 20px; font-size: .9rem; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
  .link-info { margin: 0 0 12px; color: #52525b; }
  #attendees, .members { list-style: none; padding: 0; margin: 0; }
  .family.together { background: #e4e4e7; border-radius: 10px; padding: 4px 6px 1px; margin-bottom: 16px; }
  .family.together .card { margin-bottom: 6px; }
  .family-name { margin: 0 4px 4px; font-size: .9rem; color: #3f3f46; }
  .attendee { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; justify-content: space-between; }
  .attendee .who { flex: 1 1 60%; }
  .attendee .name { font-size: 1.15rem; }
  .attendee form { margin: 0; display: flex; gap: 8px; flex-wrap: wrap; }
  .attendee button { margin-top: 0; min-height: 48px; min-width: 110px; font-size: 1.1rem; }
  .attendee button.secondary { background: #e4e4e7; color: #18181b; }
  .attendee button:disabled { opacity: .5; cursor: not-allowed; }
  .attendee[data-state="here"] { border-left: 6px solid #16a34a; }
  .attendee[data-state="left"] { border-left: 6px solid #a1a1aa; }
  .flag { margin: 2px 0; padding: 2px 8px; border-radius: 4px; display: inline-block; }
  .flag.owes { background: #fef3c7; }
  .flag.answer { background: #fee2e2; }
  .flag.guardian { background: #e0f2fe; }
  .status { margin: 2px 0; }
  .notice { background: #dcfce7; }
</style>
<div class="roll-head" id="roll-head">
  <div class="head-line">
    <h1><bdi>{{eventTitle}}</bdi></h1>
    <p id="counts" aria-live="polite"><span id="here-text">{{hereText}}</span>{{#if leftText}} <span id="left-text">{{leftText}}</span>{{/if}}</p>
  </div>
  <form method="get" action="{{pageHref}}" role="search" id="search-form">
    <label for="search" class="visually-hidden">Find by name</label>
    <input id="search" name="q" type="search" value="{{query}}" placeholder="Find by name" autocomplete="off" autocapitalize="off" spellcheck="false">
  </form>
  <p id="queue-status" role="status" hidden></p>
  <div id="refused" role="alert" hidden><p id="refused-text"></p><ul id="refused-list"></ul></div>
</div>
<p class="muted link-info" id="link-info">Check-in: <bdi>{{label}}</bdi> · this link works until {{openUntil}}</p>
{{#if notice}}<p class="card notice" role="status" id="notice">{{notice}}</p>{{/if}}
{{#if error}}<p class="card error" role="alert" id="error">{{error}}</p>{{/if}}
<ul id="attendees" data-actions="{{actionsHref}}" data-page="{{pageHref}}" data-total="{{total}}"{{#if workerSrc}} data-worker="{{workerSrc}}"{{/if}}{{#if scriptSrc}} data-script="{{scriptSrc}}"{{/if}}>
{{#each families}}
  <li class="family{{#if together}} together{{/if}}"{{#if hidden}} hidden{{/if}}>
    {{#if together}}<p class="family-name">Registered together by <bdi>{{contactName}}</bdi> · {{sizeText}}</p>{{/if}}
    <ul class="members">
    {{#each attendees}}
      <li class="card attendee" data-key="{{key}}" data-search="{{search}}" data-state="{{state}}"{{#if hidden}} hidden{{/if}}>
        <div class="who">
          <strong class="name"><bdi>{{name}}</bdi></strong> <span class="muted">{{tierLabel}}</span>
          <p class="status muted">{{statusText}}</p>
          {{#if guardian}}<p class="flag guardian">Guardian: <bdi>{{guardian}}</bdi></p>{{/if}}
          {{#if owes}}<p class="flag owes">Owes {{owes}}</p>{{/if}}
          {{#each flags}}<p class="flag answer"><strong>{{label}}:</strong> {{value}}</p>{{/each}}
        </div>
        <form method="post" action="{{@root.actionsHref}}" class="actions">
          <input type="hidden" name="registration" value="{{registrationId}}">
          <input type="hidden" name="attendee" value="{{attendeeIndex}}">
          <input type="hidden" name="q" value="{{@root.query}}">
          <button type="submit" name="action" value="check_in" class="check-in"{{#if checkInHidden}} hidden{{/if}}>Check in</button>
          <button type="submit" name="action" value="undo" class="undo secondary"{{#if undoHidden}} hidden{{/if}}>Undo</button>
          <button type="submit" name="action" value="check_out" class="check-out secondary"{{#if checkOutHidden}} hidden{{/if}}>Check out</button>
        </form>
        {{#if payable}}
        <form method="post" action="{{@root.payHref}}" class="pay">
          <input type="hidden" name="registration" value="{{registrationId}}">
          <input type="hidden" name="q" value="{{@root.query}}">
          <button type="submit" name="method" value="cash" class="pay-cash">Paid {{owes}} in cash</button>
          <button type="submit" name="method" value="bank" class="pay-bank secondary">Paid by bank</button>
        </form>
        {{/if}}
      </li>
    {{/each}}
    </ul>
  </li>
{{/each}}
</ul>
{{#if scriptSrc}}<script src="{{scriptSrc}}" defer></script>{{/if}}
`);
