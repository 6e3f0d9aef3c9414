/**
 * The check-in page's script (bundled by scripts/bundle-browser.mjs, served from /assets/, no inline code). The
 * page works without it through plain form posts; with it:
 * - the search filters the roll as you type, folding accents and case as the office search does;
 * - a tap on Check in, Undo or Check out changes the row at once and is queued in localStorage with an id of
 *   its own (crypto.randomUUID), then uploaded; while the phone is offline the queue waits, the page says how
 *   many are waiting, and it is uploaded when the connection returns, MOST_TAPS_PER_UPLOAD at a time (the
 *   server ignores ids this link has sent; an upload refused, 429 when the link's budget is spent, is kept and
 *   sent again);
 * - every 20 seconds the rows take the server's states, so other volunteers' check-ins show;
 * - paying at the door needs the server, so it is refused with a message while offline.
 */
import { foldForSearch } from '../../search-fold.js';
import { MOST_TAPS_PER_UPLOAD } from '../../door/link-budget.js';
import { hereText, waitingText } from '../checkin-words.js';

type Action = 'check_in' | 'undo' | 'check_out';
type State = 'away' | 'here' | 'left';

interface QueuedAction {
  id: string;
  action: Action;
  registration: string;
  attendee: number;
  at: string;
}

const list = document.querySelector<HTMLUListElement>('#attendees');
const search = document.querySelector<HTMLInputElement>('#search');
const queueStatus = document.querySelector<HTMLElement>('#queue-status');
const hereLine = document.querySelector<HTMLElement>('#here-text');

function newId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

if (list) {
  const uploadUrl = list.dataset.actions ?? '';
  const storageKey = `eventops-checkin-queue:${uploadUrl}`;
  const rows = () => Array.from(list.querySelectorAll<HTMLLIElement>('li.attendee'));
  const readQueue = (): QueuedAction[] => {
    try {
      const parsed = JSON.parse(localStorage.getItem(storageKey) ?? '[]') as unknown;
      return Array.isArray(parsed) ? (parsed as QueuedAction[]) : [];
    } catch {
      return [];
    }
  };
  const writeQueue = (queue: QueuedAction[]) => localStorage.setItem(storageKey, JSON.stringify(queue));

  const nextState = (state: State, action: Action): State => {
    if (action === 'check_in') return 'here';
    if (action === 'check_out') return state === 'here' ? 'left' : state;
    return state === 'left' ? 'here' : 'away';
  };
  const statusWords: Record<State, string> = { away: 'Not checked in', here: 'Checked in just now', left: 'Checked out just now' };

  const showState = (row: HTMLLIElement, state: State, words?: string) => {
    row.dataset.state = state;
    const button = (name: string) => row.querySelector<HTMLButtonElement>(`button.${name}`);
    const checkIn = button('check-in');
    const undo = button('undo');
    const checkOut = button('check-out');
    if (checkIn) checkIn.hidden = state === 'here';
    if (undo) undo.hidden = state === 'away';
    if (checkOut) checkOut.hidden = state !== 'here';
    const status = row.querySelector<HTMLElement>('.status');
    if (status && words) status.textContent = words;
  };
  const showCounts = () => {
    const all = rows();
    if (hereLine) hereLine.textContent = hereText(all.filter((row) => row.dataset.state === 'here').length, all.length);
  };
  const showQueue = (note?: string) => {
    const waiting = readQueue().length;
    if (!queueStatus) return;
    queueStatus.hidden = waiting === 0 && !note;
    queueStatus.textContent = note ?? (waiting > 0 ? `${waitingText(waiting)}${navigator.onLine ? '' : ' (offline)'}` : '');
  };

  let uploading = false;
  /** Sends what is queued; with `sync`, also when nothing is, to show the other volunteers' check-ins. */
  const upload = async (sync = false) => {
    const queue = readQueue();
    if (uploading || (queue.length === 0 && !sync)) return showQueue();
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
        for (const row of rows()) {
          let state = answer.states[row.dataset.key ?? ''] ?? 'away';
          for (const action of left) if (`${action.registration}:${action.attendee}` === row.dataset.key) state = nextState(state, action.action);
          if (state !== row.dataset.state) showState(row, state, statusWords[state]);
        }
        showCounts();
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
    if (form.classList.contains('pay')) {
      if (!navigator.onLine) {
        event.preventDefault();
        showQueue('Paying at the door needs a connection: try again when this phone is back online.');
      }
      return;
    }
    if (!form.classList.contains('actions') || !submitter) return;
    event.preventDefault();
    const row = form.closest<HTMLLIElement>('li.attendee');
    if (!row) return;
    const action = submitter.value as Action;
    const data = new FormData(form);
    const queued: QueuedAction = {
      id: newId(),
      action,
      registration: String(data.get('registration') ?? ''),
      attendee: Number(data.get('attendee') ?? 0),
      at: new Date().toISOString(),
    };
    writeQueue([...readQueue(), queued]);
    const state = nextState((row.dataset.state as State | undefined) ?? 'away', action);
    showState(row, state, statusWords[state]);
    showCounts();
    showQueue();
    void upload();
  });

  if (search) {
    const filter = () => {
      const folded = foldForSearch(search.value.trim());
      for (const row of rows()) row.hidden = folded !== '' && !(row.dataset.search ?? '').includes(folded);
    };
    search.addEventListener('input', filter);
    search.form?.addEventListener('submit', (event) => {
      event.preventDefault();
      filter();
    });
    filter();
  }

  // What this phone queued before a reload is shown as done, and sent.
  for (const action of readQueue()) {
    const row = list.querySelector<HTMLLIElement>(`li.attendee[data-key="${action.registration}:${action.attendee}"]`);
    if (row) {
      const state = nextState((row.dataset.state as State | undefined) ?? 'away', action.action);
      showState(row, state, statusWords[state]);
    }
  }
  showCounts();
  showQueue();
  window.addEventListener('online', () => void upload());
  window.addEventListener('offline', () => showQueue());
  window.setInterval(() => void upload(true), 20_000);
  void upload();
}
