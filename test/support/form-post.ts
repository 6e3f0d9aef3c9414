/**
 * The registration form posted as a browser posts it (application/x-www-form-urlencoded, a field repeated once per
 * value, redirects not followed), to the server at `baseUrl`.
 */
export function postRegistrationForm(baseUrl: string, slug: string, fields: Record<string, string | string[]>): Promise<Response> {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(key, v);
  return fetch(`${baseUrl}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
}
