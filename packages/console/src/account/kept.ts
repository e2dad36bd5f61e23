/** The account screens' small helpers: the last answer kept on screen while a route is read again, and a file offered for download. */
import { useState } from 'react';

/** `data`, or while it is read again (undefined), the last answer: forms below keep their state. */
export function useKept<T>(data: T | undefined): T | undefined {
  const [kept, setKept] = useState<T | undefined>(data);
  if (data !== undefined && data !== kept) setKept(data);
  return data ?? kept;
}

/** Offers bytes or text as a file through a Blob URL (made in the page: no CSP directive governs it). */
export function download(content: BlobPart, filename: string, type: string): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
