/**
 * A QR code drawn as SVG from its text (the authenticator's otpauth:// URI), in the page itself:
 * no image URL, so the pages' Content-Security-Policy admits images from this origin only. Black
 * on white with the four-module quiet zone scanners need, whatever the page's colours.
 */
import QRCode from 'qrcode';
import { useMemo } from 'react';

const QUIET = 4;

/** The dark modules as one SVG path, and the side of the square (modules plus quiet zone). */
export function qrPath(text: string): { d: string; side: number } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  let d = '';
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (modules.get(row, col)) d += `M${col + QUIET} ${row + QUIET}h1v1h-1z`;
    }
  }
  return { d, side: modules.size + 2 * QUIET };
}

export function QrCode({ text, label, size = 200 }: { text: string; label: string; size?: number }) {
  const { d, side } = useMemo(() => qrPath(text), [text]);
  return (
    <svg className="qr" role="img" aria-label={label} viewBox={`0 0 ${side} ${side}`} width={size} height={size} shapeRendering="crispEdges">
      <rect width={side} height={side} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
