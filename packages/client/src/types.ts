/** The answers of the auth routes, as the server documents them (OpenAPI at /api/docs). */

export interface PublicKeyInfo {
  /** SPKI PEM. */
  public_key: string;
  algorithm: 'RSA-2048';
  key_id: string;
  /** ISO 8601; the key is accepted until then, a newer one may be published before. */
  expires_at: string;
}

export interface SignInResponse {
  access_token: string;
  token_type: 'bearer';
  /** Access token lifetime, seconds. */
  expires_in: number;
  refresh_token: string;
  user: { id: number; uuid: string; active: boolean };
  permissions: string[];
  /** Steps to prompt for, e.g. CHANGE_PASSWORD_SOON. */
  actions: string[];
  session_id: string;
  user_profile: {
    username: string;
    email: string | null;
    phone: string | null;
    full_name: string | null;
    roles: string[];
    channel: string;
    mfa_completed: boolean;
    last_login_at: string | null;
    password_expires_at: string | null;
  };
}

export interface ValidateResponse {
  valid: true;
  user_id: string;
  session_id: string;
  roles: string[];
  permissions: string[];
  /** When the access token expires. */
  expires_at: string;
}

export interface LogoutResponse {
  status: 'success';
  sessions_ended: number;
}

export interface PasswordChangedResponse {
  status: 'success';
  password_expires_at: string | null;
  message: string;
}

/** A one-time code was sent (`requestCode`). */
export interface CodeSent {
  method: 'email' | 'sms' | 'push';
  /** Masked: `j***@bank.example`, `+2547****12`. */
  destination: string;
  /** Seconds the code stays valid. */
  expires_in: number;
  /** Seconds before another code may be requested. */
  resend_after: number;
}

export type Channel = 'web' | 'mobile' | 'ussd' | 'agent';

/** The channels a client signs in on itself (USSD sign-in is the bank's gateway's). */
export type SignInChannel = 'web' | 'mobile' | 'agent';

/** Where the device is (agents: checked against the branch geofence). */
export interface Location {
  latitude: number;
  longitude: number;
  /** Uncertainty radius, metres. */
  accuracy_m: number;
}

/** What the client keeps of a sign-in; `getSession()`/`setSession()` to persist and resume it. */
export interface StoredSession {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  /** The session's AES-256 key, standard base64; null when the client does not encrypt. */
  sessionKey: string | null;
  /** When the access token expires (epoch ms, by the client's clock). */
  accessTokenExpiresAt: number;
}
