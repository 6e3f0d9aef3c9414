/**
 * The one link a family's email carries: "Manage your registration" (manage-link.ts), with the sentence that
 * keeps it private. Every registration email shares these lines, so the wording cannot drift between them.
 * Written inside an email template whose data has an optional `manageUrl`.
 */

export const KEEP_LINK_PRIVATE = 'This link is your own: keep it private — anyone with it can change your registration.';

export const MANAGE_LINK_HTML = `{{#if manageUrl}}<p><a href="{{manageUrl}}">Manage your registration</a><br>
<span style="color:#52525b;">${KEEP_LINK_PRIVATE}</span></p>{{/if}}`;

/** Starts with a blank line of its own, so it follows any paragraph. */
export const MANAGE_LINK_TEXT = `{{#if manageUrl}}

Manage your registration: {{manageUrl}}
${KEEP_LINK_PRIVATE}
{{/if}}`;
