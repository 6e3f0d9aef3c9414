import { definePage } from '../pages.js';

/** open: places left (or no limit); few: "Only N places left"; full: none left. */
export type PlacesState = 'open' | 'few' | 'full';

export interface EventsListPageData {
  events: Array<{
    title: string;
    /** The event's own page. */
    href: string;
    /** Start (to end) in APP_TIMEZONE, as the event page writes it. */
    when: string;
    /** The start as an ISO instant, for <time datetime>. */
    startsAt: string;
    location?: string;
    /** "Places left", "Only 3 places left", "Full — join the waiting list", "Full". */
    places: string;
    placesState: PlacesState;
  }>;
  empty: boolean;
  /** The church's website, offered when there is nothing to list. */
  website?: string;
}

/** The church's events page: every upcoming event, each linking to its page; a kind word when there are none. */
export const eventsListPage = definePage<EventsListPageData>(`
<style>
  .events { list-style: none; margin: 0; padding: 0; }
  .event h2 { font-size: 1.15rem; margin: 0; }
  /* The whole width of the card and at least 44 px tall: a thumb finds it. */
  .event-link { display: flex; align-items: center; min-height: 44px; color: var(--primary); text-decoration: underline; text-underline-offset: 3px; }
  .event p { margin: 4px 0; }
  .places { font-weight: 600; }
  .places-few { color: #92400e; }
  .places-full { color: #b91c1c; }
  .empty h2 { font-size: 1.15rem; margin: 0 0 8px; }
  .empty .button { min-height: 44px; }
</style>
<h1>Upcoming events</h1>
{{#if empty}}
<div class="card empty">
  <h2>No upcoming events</h2>
  <p>Nothing is open for registration just now. Please check back soon.</p>
  {{#if website}}<a class="button" href="{{website}}">Visit our website</a>{{/if}}
</div>
{{else}}
<ul class="events">
  {{#each events}}
  <li class="card event">
    <h2><a class="event-link" href="{{href}}"><bdi>{{title}}</bdi></a></h2>
    <p><time datetime="{{startsAt}}">{{when}}</time></p>
    {{#if location}}<p>{{location}}</p>{{/if}}
    <p class="places places-{{placesState}}">{{places}}</p>
  </li>
  {{/each}}
</ul>
{{/if}}`);
