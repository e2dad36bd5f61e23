/**
 * The live preview: a moment after the operator stops typing, the draft goes to
 * POST .../{id}/preview with a sample value for each placeholder it uses, and the page shows what a
 * send would give once it is saved, or the refusal (a placeholder the callers do not send, a stray
 * brace), which the editor shows next to its field. Nothing is saved.
 */
import { useEffect, useState } from 'react';
import { useSession } from '../../../lib/session.js';
import { placeholdersOf, TEMPLATES_PATH } from './types.js';

const DEBOUNCE_MS = 300;

export interface Preview {
  title: string;
  body: string;
}

export interface PreviewState {
  /** The last rendering the server answered (of this draft, unless `pending`). */
  preview?: Preview;
  error: unknown;
  pending: boolean;
}

export function usePreview(id: string, subject: string, message: string, samples: Readonly<Record<string, string>>): PreviewState {
  const { call } = useSession();
  const blank = subject.trim() === '' || message.trim() === '';
  const key = JSON.stringify([id, subject, message, samples]);
  const [state, setState] = useState<{ key: string; preview?: Preview; error: unknown }>({ key: '', error: null });
  useEffect(() => {
    if (blank) return undefined;
    let live = true;
    const values = Object.fromEntries(placeholdersOf(subject, message).map((p) => [p, samples[p] ?? p]));
    const timer = setTimeout(() => {
      call<Preview>('POST', `${TEMPLATES_PATH}/${encodeURIComponent(id)}/preview`, { subject, message, values }).then(
        (preview) => { if (live) setState({ key, preview, error: null }); },
        (error: unknown) => { if (live) setState({ key, error }); },
      );
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [call, id, subject, message, samples, key, blank]);
  if (blank) return { error: null, pending: false };
  // The last rendering stays in view while the next is on its way.
  return { preview: state.preview, error: state.key === key ? state.error : null, pending: state.key !== key };
}
