import { definePage } from '../pages.js';

export interface CheckinAttendeeView {
  key: string;
  registrationId: string;
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
  attendees: CheckinAttendeeView[];
}

/**
 * The volunteers' page at the door: big buttons, a search that filters as you type (the script), or on submit
 * (without it), and counts. Every button is a form post, so it works without script; with it, taps are queued in
 * the phone and uploaded, so a lost signal loses nothing.
 */
export const checkinPage = definePage<CheckinPageData>(`
<style>
  .roll-head { position: sticky; top: 0; z-index: 1; }
  #counts { font-size: 1.3rem; margin: 4px 0; }
  #attendees { list-style: none; padding: 0; margin: 0; }
  .attendee { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; justify-content: space-between; }
  .attendee .who { flex: 1 1 60%; }
  .attendee .name { font-size: 1.15rem; }
  .attendee form { margin: 0; display: flex; gap: 8px; flex-wrap: wrap; }
  .attendee button { margin-top: 0; min-height: 48px; min-width: 110px; font-size: 1.1rem; }
  .attendee button.secondary { background: #e4e4e7; color: #18181b; }
  .attendee[data-state="here"] { border-left: 6px solid #16a34a; }
  .attendee[data-state="left"] { border-left: 6px solid #a1a1aa; }
  .flag { margin: 2px 0; padding: 2px 8px; border-radius: 4px; display: inline-block; }
  .flag.owes { background: #fef3c7; }
  .flag.answer { background: #fee2e2; }
  .flag.guardian { background: #e0f2fe; }
  .status { margin: 2px 0; }
  #queue-status { background: #fef3c7; padding: 6px 10px; border-radius: 6px; }
  .notice { background: #dcfce7; }
</style>
<div class="card roll-head">
  <h1><bdi>{{eventTitle}}</bdi></h1>
  <p class="muted">Check-in: <bdi>{{label}}</bdi> · this link works until {{openUntil}}</p>
  <p id="counts" aria-live="polite"><span id="here-text">{{hereText}}</span>{{#if leftText}} <span class="muted" id="left-text">{{leftText}}</span>{{/if}}</p>
  <p id="queue-status" role="status" hidden></p>
  <form method="get" action="{{pageHref}}" role="search" id="search-form">
    <label for="search">Find by name</label>
    <input id="search" name="q" type="search" value="{{query}}" autocomplete="off" autocapitalize="off" spellcheck="false">
  </form>
</div>
{{#if notice}}<p class="card notice" role="status" id="notice">{{notice}}</p>{{/if}}
{{#if error}}<p class="card error" role="alert" id="error">{{error}}</p>{{/if}}
<ul id="attendees" data-actions="{{actionsHref}}" data-total="{{total}}">
{{#each attendees}}
  <li class="card attendee" data-key="{{key}}" data-search="{{search}}" data-state="{{state}}"{{#if hidden}} hidden{{/if}}>
    <div class="who">
      <strong class="name"><bdi>{{name}}</bdi></strong> <span class="muted">{{tierLabel}}</span>
      <p class="status muted">{{statusText}}</p>
      {{#if guardian}}<p class="flag guardian">Guardian: <bdi>{{guardian}}</bdi></p>{{/if}}
      {{#if owes}}<p class="flag owes">Owes {{owes}}</p>{{/if}}
      {{#each flags}}<p class="flag answer"><strong>{{label}}:</strong> {{value}}</p>{{/each}}
    </div>
    <form method="post" action="{{../actionsHref}}" class="actions">
      <input type="hidden" name="registration" value="{{registrationId}}">
      <input type="hidden" name="attendee" value="{{attendeeIndex}}">
      <input type="hidden" name="q" value="{{../query}}">
      <button type="submit" name="action" value="check_in" class="check-in"{{#if checkInHidden}} hidden{{/if}}>Check in</button>
      <button type="submit" name="action" value="undo" class="undo secondary"{{#if undoHidden}} hidden{{/if}}>Undo</button>
      <button type="submit" name="action" value="check_out" class="check-out secondary"{{#if checkOutHidden}} hidden{{/if}}>Check out</button>
    </form>
    {{#if payable}}
    <form method="post" action="{{../payHref}}" class="pay">
      <input type="hidden" name="registration" value="{{registrationId}}">
      <input type="hidden" name="q" value="{{../query}}">
      <button type="submit" name="method" value="cash" class="pay-cash">Paid {{owes}} in cash</button>
      <button type="submit" name="method" value="bank" class="pay-bank secondary">Paid by bank</button>
    </form>
    {{/if}}
  </li>
{{/each}}
</ul>
{{#if scriptSrc}}<script src="{{scriptSrc}}" defer></script>{{/if}}
`);
