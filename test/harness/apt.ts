/**
 * Installs Debian packages for a harness (PostgreSQL, slapd, Chromium) when the tests run as
 * root on a fresh machine. Several test files may ask at once, and apt allows one at a time: all
 * of them hold one flock while apt runs, and whoever waited re-checks `present` (a shell test)
 * and finds the package there.
 */
import { execFileSync } from 'node:child_process';

const APT_LOCK = '/tmp/strongroom-apt.lock';

export function aptInstall(packages: string[], present: string): void {
  const install = `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages.join(' ')} >/dev/null`;
  execFileSync('flock', [APT_LOCK, 'sh', '-c', `${present} || (${install})`], { stdio: 'inherit' });
}
