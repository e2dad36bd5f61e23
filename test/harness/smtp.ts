/**
 * A real SMTP server for the tests (smtp-server on loopback, a free port, AUTH optional) that
 * keeps every message it accepts. It offers no STARTTLS unless asked (`starttls`: then with
 * smtp-server's built-in certificate, self-signed and expired, which no client trusts). A
 * message is stored before the server answers 250, so once `mailer.send` resolves the message
 * is already in `messages`; `next()` awaits the next one without sleeping.
 */
import net from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope recipients (RCPT TO). */
  rcptTo: string[];
  from: string;
  to: string;
  subject: string;
  /** The decoded text body. */
  text: string;
  raw: string;
}

export interface TestSmtp {
  port: number;
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the next message received after the call (or one received but not yet taken). */
  next(): Promise<ReceivedMail>;
  /** Messages sent to one address. */
  to(address: string): ReceivedMail[];
  close(): Promise<void>;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** Minimal RFC 5322 parse: unfolded headers and a single-part text body. */
export function parseMail(raw: string, rcptTo: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  const cte = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  const text = cte === 'quoted-printable' ? decodeQuotedPrintable(body) : cte === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body;
  return { rcptTo, from: headers.get('from') ?? '', to: headers.get('to') ?? '', subject: headers.get('subject') ?? '', text: text.replace(/\r\n/g, '\n'), raw };
}

/**
 * `auth`: require AUTH with these credentials (allowed without TLS, on loopback, for the test).
 * `starttls`: offer STARTTLS (with a certificate that does not verify).
 */
export async function startSmtp(opts: { auth?: { user: string; pass: string }; starttls?: boolean } = {}): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const waiting: Array<(m: ReceivedMail) => void> = [];
  let taken = 0;
  const auth = opts.auth;
  const server = new SMTPServer({
    authOptional: auth === undefined,
    allowInsecureAuth: true,
    disabledCommands: opts.starttls ? [] : ['STARTTLS'],
    logger: false,
    onAuth(a, _session, callback) {
      if (auth && a.username === auth.user && a.password === auth.pass) callback(null, { user: a.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'), session.envelope.rcptTo.map((r) => r.address));
        messages.push(mail);
        const waiter = waiting.shift();
        if (waiter) {
          taken++;
          waiter(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as net.AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    next() {
      if (taken < messages.length) return Promise.resolve(messages[taken++]!);
      return new Promise((resolve) => waiting.push(resolve));
    },
    to: (address) => messages.filter((m) => m.rcptTo.includes(address)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A loopback port with nothing listening: connecting to it is refused at once. */
export async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
