/** @strongroom/client: the Strongroom SDK (Node 20+ and browsers, WebCrypto only). */
export { StrongroomClient, PATHS } from './client.js';
export type { FetchLike, HttpMethod, RequestOptions, StrongroomClientOptions } from './client.js';
export { StrongroomError, isErrorBody } from './errors.js';
export type { ClientErrorCode, ErrorBody } from './errors.js';
export { DEFAULT_BINARY_FRAGMENTS, DEFAULT_EXEMPT_PATHS, DEFAULT_EXEMPT_PREFIXES, DEFAULT_PREAUTH_ROUTES, encryptionModeOf, normalisePath } from './routes.js';
export type { EncryptionMode, RouteRules } from './routes.js';
export type { Channel, CodeSent, Location, SignInChannel, LogoutResponse, PasswordChangedResponse, PublicKeyInfo, SignInResponse, StoredSession, ValidateResponse } from './types.js';
export * as transportCrypto from './crypto.js';
export type { ClientKeyPair, PreAuthEnvelope, SessionEnvelope } from './crypto.js';
export { fromBase64, toBase64 } from './base64.js';
export { createPasskeyInBrowser, getPasskeyInBrowser, PASSKEY_PATHS } from './passkeys.js';
export type {
  Passkey, PasskeyAssertionJSON, PasskeyChallenge, PasskeyCreate, PasskeyCreationOptionsJSON, PasskeyDescriptorJSON, PasskeyGet, PasskeyRegistrationJSON, PasskeyRequestOptionsJSON,
  PasskeyRoutes, RegisteredPasskey, StepUpResponse,
} from './passkeys.js';
export { PUSH_APPROVAL_PATHS, PUSH_APPROVAL_WAIT_SECONDS } from './push-approval.js';
export type { PushApprovalRoutes, PushApprovalSent } from './push-approval.js';
export { RealtimeSubscription, REALTIME_PATH } from './realtime.js';
export type { RealtimeHost } from './realtime.js';
export { PUSH_APPROVAL_DENY_REASONS, PUSH_APPROVAL_PURPOSES, REALTIME_EVENT_TYPES } from './realtime-types.js';
export type {
  PushApprovalDenyReason, PushApprovalPurpose, RealtimeClose, RealtimeEvent, RealtimeEventData, RealtimeEventType, RealtimeHandlers, RealtimeOptions, RealtimeReady, RealtimeResumed, WebSocketConstructor, WebSocketLike,
} from './realtime-types.js';
