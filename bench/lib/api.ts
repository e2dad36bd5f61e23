/** The few Strongroom calls the bench needs to set itself up: sign in, create a user, finish its forced change. */

export interface Tokens {
  access_token: string;
  refresh_token: string;
}

export async function postJson(url: string, body: unknown, token?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

export async function login(base: string, username: string, password: string): Promise<Tokens> {
  const { status, json } = await postJson(`${base}/api/v1/auth/login`, { username, password });
  if (status !== 200) throw new Error(`login as ${username}: ${status} ${JSON.stringify(json)}`);
  return json as unknown as Tokens;
}

/** Creates a staff user through the admin API and sets its password (temporary password, then the forced change); its UUID. */
export async function createUser(base: string, adminToken: string, username: string, password: string): Promise<string> {
  const created = await postJson(`${base}/api/v1/admin/users`, { username, roles: ['staff'] }, adminToken);
  if (created.status !== 201) throw new Error(`create ${username}: ${created.status} ${JSON.stringify(created.json)}`);
  const first = await postJson(`${base}/api/v1/auth/login`, { username, password: created.json.temporary_password });
  const resetToken = (first.json.details as { reset_token?: string } | undefined)?.reset_token;
  if (first.status !== 403 || !resetToken) throw new Error(`first sign-in of ${username}: ${first.status} ${JSON.stringify(first.json)}`);
  const changed = await postJson(`${base}/api/v1/auth/reset/password`, { reset_token: resetToken, new_password: password });
  if (changed.status !== 200) throw new Error(`password change of ${username}: ${changed.status} ${JSON.stringify(changed.json)}`);
  return (created.json.user as { uuid: string }).uuid;
}
