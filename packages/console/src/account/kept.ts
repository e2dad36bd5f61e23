/** The account screens' small helper: the last answer kept on screen while a route is read again (a file offered for download is in lib/download.ts). */
import { useState } from 'react';

/** `data`, or while it is read again (undefined), the last answer: forms below keep their state. */
export function useKept<T>(data: T | undefined): T | undefined {
  const [kept, setKept] = useState<T | undefined>(data);
  if (data !== undefined && data !== kept) setKept(data);
  return data ?? kept;
}
