/**
 * The check-in page's script (bundled by scripts/bundle-browser.mjs, served from /assets/, no inline code). The
 * page works without it through plain form posts; with it:
 * - the search filters the roll as you type, folding accents and case as the office search does;
 * - a tap on Check in, Undo or Check out changes the row at once and is queued in localStorage with an id of
 *   its own (crypto.randomUUID), then uploaded; while the phone is offline the queue waits, the page says how
 *   many are waiting, and it is uploaded when the connection returns, MOST_TAPS_PER_UPLOAD at a time (the
 *   server ignores ids this link has sent; an upload refused, 429 when the link's budget is spent, is kept and
 *   sent again); the queue outlives a reload, and what it holds is shown over the roll;
 * - every 20 seconds the rows take the server's states, so other volunteers' check-ins show;
 * - a service worker (checkin-sw.ts) keeps this page, so a reload offline shows the roll as last kept; the page
 *   is kept again at most once a minute while uploads succeed, so the copy follows the roll;
 * - when the server refuses the link (revoked or expired), the page says so and how many taps were not saved,
 *   drops the queue and its kept copy, and takes no more taps;
 * - paying at the door needs the server, so it is refused with a message while offline.
 */
import { foldForSearch } from '../../search-fold.js';
import { MOST_TAPS_PER_UPLOAD } from '../../door/link-budget.js';
import { ASSET_CACHE, CHECKIN_WORKER_SCOPE, pageCacheName } from '../checkin-offline-names.js';
import { hereText, LINK_REFUSALS, refusedText, waitingText, type LinkRefusal } from '../checkin-words.js';

type Action = 'check_in' | 'undo' | 'check_out';
type State = 'away' | 'here' | 'left';

interface QueuedAction {
  id: string;
  action: Action;
  registration: string;
  attendee: number;
  at: string;
}

/** How often, at most, the kept copy of the page is renewed while the phone is online. */
const KEEP_PAGE_EVERY_MS = 60_000;

const list = document.querySelector<HTMLUListElement>('#attendees');
const search = document.querySelector<HTMLInputElement>('#search');
const queueStatus = document.querySelector<HTMLElement>('#queue-status');
const hereLine = document.querySelector<HTMLElement>('#here-text');
const refusedBox = document.querySelector<HTMLElement>('#refused');

function newId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const nextState = (state: State, action: Action): State => {
  if (action === 'check_in') return 'here';
  if (action === 'check_out') return state === 'here' ? 'left' : state;
  return state === 'left' ? 'here' : 'away';
};
const statusWords: Record<State, string> = { away: 'Not checked in', here: 'Checked in just now', left: 'Checked out just now' };
const actionWords: Record<Action, string> = { check_in: 'check-in', undo: 'undo', check_out: 'check-out' };

if (list) {
  const uploadUrl = list.dataset.actions ?? '';
  const pagePath = list.dataset.page ?? '';
  const storageKey = `eventops-checkin-queue:${uploadUrl}`;
  const rows = () => Array.from(list.querySelectorAll<HTMLLIElement>('li.attendee'));
  const keyOf = (action: QueuedAction) => `${action.registration}:${action.attendee}`;
  const readQueue = (): QueuedAction[] => {
    try {
      const parsed = JSON.parse(localStorage.getItem(storageKey) ?? '[]') as unknown;
      return Array.isArray(parsed) ? (parsed as QueuedAction[]) : [];
    } catch {
      return [];
    }
  };
  const writeQueue = (queue: QueuedAction[]) => localStorage.setItem(storageKey, JSON.stringify(queue));
  /** Set once the server refuses this link: no more taps, uploads or kept copies. */
  let refused: LinkRefusal | undefined;
  let syncing: number | undefined;

  // Each row remembers the server's state (what the page was sent, then each upload's answer) and the words the
  // page was sent for it; what it shows is that state with this phone's queued taps applied over it.
  for (const row of rows()) {
    row.dataset.serverState = row.dataset.state;
    row.dataset.sentState = row.dataset.state;
    row.dataset.sentStatus = row.querySelector('.status')?.textContent ?? '';
  }

  const showState = (row: HTMLLIElement, state: State) => {
    row.dataset.state = state;
    const button = (name: string) => row.querySelector<HTMLButtonElement>(`button.${name}`);
    const checkIn = button('check-in');
    const undo = button('undo');
    const checkOut = button('check-out');
    if (checkIn) checkIn.hidden = state === 'here';
    if (undo) undo.hidden = state === 'away';
    if (checkOut) checkOut.hidden = state !== 'here';
    const status = row.querySelector<HTMLElement>('.status');
    if (status) status.textContent = state === row.dataset.sentState ? (row.dataset.sentStatus ?? '') : statusWords[state];
  };
  const render = () => {
    const queue = readQueue();
    for (const row of rows()) {
      let state = (row.dataset.serverState as State | undefined) ?? 'away';
      for (const action of queue) if (keyOf(action) === row.dataset.key) state = nextState(state, action.action);
      if (state !== row.dataset.state) showState(row, state);
    }
    const all = rows();
    if (hereLine) hereLine.textContent = hereText(all.filter((row) => row.dataset.state === 'here').length, all.length);
  };
  const showQueue = (note?: string) => {
    if (!queueStatus) return;
    const waiting = refused ? 0 : readQueue().length;
    const offline = !navigator.onLine;
    const text = note ?? (waiting > 0 ? `${waitingText(waiting)}${offline ? ' (offline)' : ''}` : !refused && offline ? 'Offline: check-ins are kept on this phone until the signal returns' : '');
    queueStatus.hidden = text === '';
    queueStatus.textContent = text;
  };

  // The kept copy: the worker keeps the page as it is loaded; the first visit (before the worker controlled it)
  // and a page opened with a search or notice in its address are kept from here, by their plain address.
  let keptAt = 0;
  const keepPage = async () => {
    if (refused || !pagePath || !('caches' in window) || !('serviceWorker' in navigator)) return;
    keptAt = Date.now();
    try {
      await (await caches.open(pageCacheName(pagePath))).add(pagePath);
      const script = list.dataset.script;
      if (script) await (await caches.open(ASSET_CACHE)).add(script);
      // The refusal may have come while the page was being fetched: nothing is kept after it.
      if (refused) await caches.delete(pageCacheName(pagePath));
      else list.dataset.offline = 'ready';
    } catch {
      // Offline, or the link refused: the copy already kept (if any) stays until the worker or a refusal drops it.
    }
  };
  const worker = list.dataset.worker;
  if (worker && 'serviceWorker' in navigator) {
    // A page the worker served was kept by it as it passed; one loaded before the worker was there was not.
    const servedByWorker = navigator.serviceWorker.controller !== null;
    navigator.serviceWorker
      .register(worker, { scope: CHECKIN_WORKER_SCOPE })
      .then(() => navigator.serviceWorker.ready)
      .then(() => {
        if (!servedByWorker || location.search !== '') return keepPage();
        keptAt = Date.now();
        list.dataset.offline = 'ready';
        return undefined;
      })
      .catch(() => {
        // No worker (a private window, an old browser): the page works online, and its queue still survives.
      });
  }

  const refuse = (reason: LinkRefusal) => {
    refused = reason;
    const lost = readQueue();
    writeQueue([]);
    window.clearInterval(syncing);
    if ('caches' in window && pagePath) void caches.delete(pageCacheName(pagePath));
    for (const button of Array.from(list.querySelectorAll<HTMLButtonElement>('button'))) button.disabled = true;
    // "Works until …" is no longer true.
    const linkInfo = document.querySelector<HTMLElement>('#link-info');
    if (linkInfo) linkInfo.hidden = true;
    if (refusedBox) {
      const text = refusedBox.querySelector<HTMLElement>('#refused-text');
      const names = refusedBox.querySelector<HTMLElement>('#refused-list');
      if (text) text.textContent = refusedText(lost.length, reason);
      if (names) {
        names.replaceChildren(
          ...lost.map((action) => {
            const item = document.createElement('li');
            const row = list.querySelector<HTMLLIElement>(`li.attendee[data-key="${CSS.escape(keyOf(action))}"]`);
            item.textContent = `${row?.querySelector('.name')?.textContent ?? 'Someone no longer on the roll'}: ${actionWords[action.action]}`;
            return item;
          }),
        );
      }
      refusedBox.hidden = false;
    }
    render();
    showQueue();
  };

  let uploading = false;
  /** Sends what is queued; with `sync`, also when nothing is, to show the other volunteers' check-ins. */
  const upload = async (sync = false) => {
    const queue = readQueue();
    if (refused || uploading || (queue.length === 0 && !sync)) return showQueue();
    if (!navigator.onLine) return showQueue();
    uploading = true;
    let more = false;
    try {
      const response = await fetch(uploadUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ actions: queue.slice(0, MOST_TAPS_PER_UPLOAD) }),
        credentials: 'same-origin',
      });
      if (response.ok) {
        const answer = (await response.json()) as { results: Array<{ id: string }>; states: Record<string, State> };
        const sent = new Set(answer.results.map((result) => result.id));
        const left = readQueue().filter((action) => !sent.has(action.id));
        writeQueue(left);
        // A long queue goes in several uploads, one after the other.
        more = sent.size > 0 && left.length > 0;
        // Other volunteers' taps too: the server's states, with what is still queued here applied over them.
        for (const row of rows()) row.dataset.serverState = answer.states[row.dataset.key ?? ''] ?? 'away';
        render();
        if (Date.now() - keptAt >= KEEP_PAGE_EVERY_MS) void keepPage();
      } else if (response.status === 404 || response.status === 410) {
        const code = ((await response.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code;
        const reason = LINK_REFUSALS.find((known) => known === code);
        if (reason) refuse(reason);
      }
    } catch {
      // Offline or the server unreachable: the queue stays and is tried again.
    } finally {
      uploading = false;
      showQueue();
    }
    if (more) void upload();
  };

  list.addEventListener('submit', (event) => {
    const form = event.target as HTMLFormElement;
    const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
    if (refused) {
      event.preventDefault();
      return;
    }
    if (form.classList.contains('pay')) {
      if (!navigator.onLine) {
        event.preventDefault();
        showQueue('Paying at the door needs a connection: try again when this phone is back online.');
      }
      return;
    }
    if (!form.classList.contains('actions') || !submitter) return;
    event.preventDefault();
    const data = new FormData(form);
    writeQueue([
      ...readQueue(),
      {
        id: newId(),
        action: submitter.value as Action,
        registration: String(data.get('registration') ?? ''),
        attendee: Number(data.get('attendee') ?? 0),
        at: new Date().toISOString(),
      },
    ]);
    render();
    showQueue();
    void upload();
  });

  if (search) {
    const filter = () => {
      const folded = foldForSearch(search.value.trim());
      for (const row of rows()) row.hidden = folded !== '' && !(row.dataset.search ?? '').includes(folded);
      for (const family of Array.from(list.querySelectorAll<HTMLLIElement>('li.family'))) {
        family.hidden = family.querySelector('li.attendee:not([hidden])') === null;
      }
    };
    search.addEventListener('input', filter);
    search.form?.addEventListener('submit', (event) => {
      event.preventDefault();
      filter();
    });
    filter();
  }

  // What this phone queued before a reload (online or not) is shown as done, and sent.
  render();
  showQueue();
  window.addEventListener('online', () => void upload());
  window.addEventListener('offline', () => showQueue());
  syncing = window.setInterval(() => void upload(true), 20_000);
  void upload();
}
