import type { FastifyReply } from 'fastify';
import Handlebars from 'handlebars';
import type { Theme } from '../config/types.js';
import type { ChurchIdentity } from '../mail/identity.js';

const handlebars = Handlebars.create();

/**
 * The Content-Security-Policy allows no inline script or style without the
 * response's nonce: every inline `<style>` and `<script>` block of a template
 * is given it here, so templates are written plainly and cannot forget it.
 */
function withNonces(template: string): string {
  return template.replaceAll('<style>', '<style nonce="{{cspNonce.style}}">').replaceAll('<script>', '<script nonce="{{cspNonce.script}}">');
}

const LAYOUT = handlebars.compile(withNonces(`<!doctype html>
<html lang="{{lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{#if refreshSeconds}}<meta http-equiv="refresh" content="{{refreshSeconds}}">{{/if}}
<title>{{title}} · {{churchName}}</title>
<style>
  :root { --primary: {{theme.primary}}; --primary-dark: {{theme.primaryDark}}; --accent: {{theme.accent}}; }
  * { box-sizing: border-box; }
  [hidden] { display: none !important; }
  body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #18181b; background: #f4f4f5; line-height: 1.5; }
  header { background: var(--primary); color: #fff; padding: 14px 20px; font-weight: 600; }
  main { max-width: 640px; margin: 0 auto; padding: 20px; overflow-wrap: anywhere; }
  .card { background: #fff; border-radius: 8px; padding: 20px; box-shadow: 0 1px 2px rgba(0,0,0,.06); margin-bottom: 16px; }
  h1 { font-size: 1.4rem; margin: 0 0 12px; }
  label { display: block; font-weight: 600; margin: 12px 0 4px; }
  /* Every control a finger taps is at least 44 by 44 px (docs/decisions.md): text fields and selects by their height,
     buttons and links styled as buttons by their minimum, a radio or checkbox by its whole label row (.choice). */
  input, select, textarea { width: 100%; min-height: 44px; padding: 10px; font-size: 1rem; font-family: inherit; border: 1px solid #d4d4d8; border-radius: 6px; }
  button, .button { display: inline-flex; align-items: center; justify-content: center; min-height: 44px; min-width: 44px; margin-top: 16px; padding: 10px 18px; font-size: 1rem; line-height: 1.25; border: 0; border-radius: 6px; background: var(--primary); color: #fff; text-decoration: none; cursor: pointer; }
  button:hover, .button:hover { background: var(--primary-dark); }
  button.outline, .button.outline { background: #fff; color: var(--primary); border: 1px solid var(--primary); }
  button.outline:hover, .button.outline:hover { background: #f4f4f5; }
  .choice { display: flex; align-items: center; gap: 10px; min-height: 44px; margin: 0; padding: 6px 0; font-weight: 400; cursor: pointer; }
  .choice input[type="radio"], .choice input[type="checkbox"] { flex: none; width: 24px; height: 24px; min-height: 0; margin: 0; padding: 0; }
  /* A link standing alone on its line ("Back to the event"): its box is as tall as a button's. */
  .back-link { display: inline-flex; align-items: center; min-height: 44px; min-width: 44px; }
  .error { color: #b91c1c; }
  .muted { color: #71717a; font-size: .9rem; }
  /* A phone's narrow screen keeps its width for the text, not for margins. */
  @media (max-width: 480px) { main { padding: 12px; } .card { padding: 16px; } }
</style>
</head>
<body>
<header>{{churchName}}</header>
<main>
{{{body}}}
</main>
</body>
</html>`));

export interface PageShell {
  churchName: string;
  theme: Theme;
  lang: string;
  /** This response's CSP nonces (from @fastify/helmet). */
  cspNonce?: { script: string; style: string };
}

/** A server-rendered page: the body template is compiled with escaping on, the layout adds theme and identity. */
export function definePage<D extends object>(bodyTemplate: string): (data: D & { title: string; refreshSeconds?: number }, shell: PageShell) => string {
  const body = handlebars.compile(withNonces(bodyTemplate));
  return (data, shell) =>
    LAYOUT({ ...shell, title: data.title, refreshSeconds: data.refreshSeconds, body: body({ ...data, cspNonce: shell.cspNonce }) });
}

/** Renders a page inside the layout, with the church's identity and the response's CSP nonce (see buildServer). */
export type PageRenderer = <D extends object>(
  reply: FastifyReply,
  render: (data: D & { title: string; refreshSeconds?: number }, shell: PageShell) => string,
  data: D & { title: string; refreshSeconds?: number },
  /** The church's identity when the route has read it already (the event page reads it with the event): no second read. */
  identity?: ChurchIdentity,
) => Promise<FastifyReply>;
