#!/usr/bin/env bash
# The steps of the Dockerfile, run without a container engine (none runs on the CI machines),
# so that CI proves the image's recipe works: in a fresh temporary directory, the build stage
# (npm run build), the deps stage (npm ci --omit=dev --ignore-scripts), the runtime stage's
# files, then, as the image's non-root user with the image's environment and nothing writable
# but what production needs (nothing): the CLI's migrate, create-admin, the ENTRYPOINT, the
# HEALTHCHECK until it passes, /metrics on the management listener only, the console's pages and
# assets, SIGTERM, exit 0.
#
#   DATABASE_URL=postgres://user@host:5432/empty_db scripts/container-steps.sh
#
# Environment:
#   DATABASE_URL    required: a PostgreSQL database (production requires PostgreSQL); an empty
#                   one shows the migrations running.
#   PREBUILT_DIST   optional: a directory holding an already built dist/src and dist/console (e.g. ./dist); the
#                   build stage is then skipped.
#   KEEP_WORK=1     optional: keep the temporary directory (its path is printed).
#
# What it reads from the Dockerfile, so the two cannot drift: each stage's COPY lines (files
# from the repository and from other stages), the runtime stage's ENV, USER, HEALTHCHECK and
# ENTRYPOINT; and it checks that the npm commands it runs are the ones the RUN lines hold.
# Where it differs from a container build, on purpose: the build stage links the repository's
# node_modules instead of a second `npm ci` (same lockfile, saves a minute); npm uses its warm
# cache (--prefer-offline); the machine's node runs instead of the image's Node.js 24; the
# listeners bind to 127.0.0.1 on free ports; the runtime stage's RUN (removing npm, /data) has
# no counterpart, and DATA_DIR points to a directory the service's user cannot create.
# Exit 0 when every step passed; 1 with the reason otherwise.
set -Eeuo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DOCKERFILE="$REPO/Dockerfile"
: "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL database (production mode requires PostgreSQL)}"
STARTED_AT=$(date +%s%N)

say() { printf 'container-steps: %s\n' "$*"; }
fail() {
  say "FAILED: $*" >&2
  if [[ -n "${SERVER_LOG:-}" && -f "$SERVER_LOG" ]]; then
    echo '--- server log (last 40 lines) ---' >&2
    tail -n 40 "$SERVER_LOG" >&2 || true
  fi
  exit 1
}
elapsed() { echo "$(( ($(date +%s%N) - STARTED_AT) / 1000000 )) ms"; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/strongroom-image.XXXXXX")"
SERVER_PID=""
BUILD_PID=""
DEPS_PID=""
cleanup() {
  for pid in "$SERVER_PID" "$BUILD_PID" "$DEPS_PID"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  chmod -R u+w "$WORK" 2>/dev/null || true
  if [[ "${KEEP_WORK:-0}" == 1 ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT
chmod 0755 "$WORK"
LOGS="$WORK/logs"
mkdir -p "$LOGS"
say "working in $WORK"

# --- the Dockerfile, read once --------------------------------------------------------------
PLAN="$WORK/plan"
mkdir -p "$PLAN"
node --input-type=module - "$DOCKERFILE" "$PLAN" <<'JS' || fail "cannot read the Dockerfile"
import { readFileSync, writeFileSync } from 'node:fs';
const [file, out] = process.argv.slice(2);
// Instructions: continuation lines joined, comments and the parser directive dropped.
const lines = readFileSync(file, 'utf8').replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
const stages = [];
for (const line of lines) {
  const [, word, rest] = /^(\S+)\s*(.*)$/.exec(line);
  const op = word.toUpperCase();
  if (op === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(rest)?.[1] ?? String(stages.length), copies: [], runs: [], env: [], user: '', healthcheck: null, entrypoint: null });
  const stage = stages.at(-1);
  if (!stage) continue;
  if (op === 'COPY') {
    const args = rest.split(/\s+/);
    const from = args.find((a) => a.startsWith('--from='))?.slice('--from='.length) ?? '';
    const paths = args.filter((a) => !a.startsWith('--'));
    stage.copies.push([from || '-', paths.at(-1), ...paths.slice(0, -1)].join('\t'));
  } else if (op === 'RUN') stage.runs.push(rest.replace(/--mount=\S+\s*/g, ''));
  else if (op === 'ENV') for (const m of rest.matchAll(/(\w+)=(\S*)/g)) stage.env.push(`${m[1]}=${m[2]}`);
  else if (op === 'USER') stage.user = rest;
  else if (op === 'HEALTHCHECK') stage.healthcheck = JSON.parse(/\bCMD\s+(\[.*\])\s*$/.exec(rest)[1]);
  else if (op === 'ENTRYPOINT') stage.entrypoint = JSON.parse(rest);
}
const runtime = stages.at(-1);
writeFileSync(`${out}/stages`, stages.map((s) => s.name).join('\n') + '\n');
for (const s of stages) {
  writeFileSync(`${out}/${s.name}.copies`, s.copies.map((c) => c + '\n').join(''));
  writeFileSync(`${out}/${s.name}.runs`, s.runs.map((r) => r + '\n').join(''));
}
writeFileSync(`${out}/runtime.name`, runtime.name + '\n');
writeFileSync(`${out}/runtime.env`, runtime.env.map((e) => e + '\n').join(''));
writeFileSync(`${out}/runtime.user`, runtime.user + '\n');
// One argument per line (none holds a newline).
writeFileSync(`${out}/runtime.healthcheck`, runtime.healthcheck.map((a) => a + '\n').join(''));
writeFileSync(`${out}/runtime.entrypoint`, runtime.entrypoint.map((a) => a + '\n').join(''));
JS
mapfile -t STAGES < "$PLAN/stages"
RUNTIME="$(cat "$PLAN/runtime.name")"
APP_USER="$(cat "$PLAN/runtime.user")"
[[ "$APP_USER" =~ ^([0-9]+):([0-9]+)$ ]] || fail "the Dockerfile's USER must be a numeric uid:gid (got \"$APP_USER\")"
APP_UID="${BASH_REMATCH[1]}"
APP_GID="${BASH_REMATCH[2]}"
[[ "$APP_UID" != 0 ]] || fail "the Dockerfile's USER is root"
mapfile -t HEALTHCHECK < "$PLAN/runtime.healthcheck"
mapfile -t ENTRYPOINT < "$PLAN/runtime.entrypoint"
[[ "${ENTRYPOINT[0]}" == node ]] || fail "the ENTRYPOINT must run node directly, so that SIGTERM reaches it (got ${ENTRYPOINT[0]})"
[[ "${HEALTHCHECK[0]}" == node ]] || fail "the HEALTHCHECK must run node (got ${HEALTHCHECK[0]}): the slim image has no curl"

# The RUN line of a stage must hold the command this script runs in its place.
expect_run() {
  grep -qF -- "$2" "$PLAN/$1.runs" || fail "the Dockerfile's $1 stage no longer runs \"$2\": update this script with it"
}

# COPY <src>... <dest> of one stage into $WORK/stage/<name> (WORKDIR /app is that directory).
# Sources come from the repository as the build context admits them (.dockerignore: the
# tests under src/ are left out), or from an earlier stage (--from=<stage>).
copy_stage() {
  local stage="$1" dir="$WORK/stage/$1" from dest src target
  mkdir -p "$dir"
  while IFS=$'\t' read -r from dest rest; do
    local -a sources
    read -r -a sources <<< "${rest//$'\t'/ }"
    target="$dir/${dest#./}"
    for src in "${sources[@]}"; do
      if [[ "$from" == - ]]; then src="$REPO/$src"; else src="$WORK/stage/$from/${src#/app/}"; fi
      [[ -e "$src" ]] || fail "COPY source missing: $src"
      if [[ -d "$src" ]]; then
        mkdir -p "$target"
        # From another stage: hard links (the same file system), a 150 MB node_modules in no time.
        if [[ "$from" == - ]]; then cp -a "$src/." "$target/"; else cp -al "$src/." "$target/"; fi
      elif [[ "$dest" == */ || -d "$target" ]]; then
        mkdir -p "$target"
        cp -a "$src" "$target/"
      else
        mkdir -p "$(dirname "$target")"
        cp -a "$src" "$target"
      fi
    done
  done < "$PLAN/$stage.copies"
  if [[ "$stage" != "$RUNTIME" && -d "$dir/src" ]]; then find "$dir/src" -name '*.test.ts' -delete; fi
}

# --- build and deps stages, in parallel as BuildKit runs them ---------------------------------
build_stage() {
  if [[ -n "${PREBUILT_DIST:-}" ]]; then
    [[ -f "$PREBUILT_DIST/src/server.js" ]] || fail "PREBUILT_DIST=$PREBUILT_DIST holds no src/server.js"
    [[ -f "$PREBUILT_DIST/console/index.html" ]] || fail "PREBUILT_DIST=$PREBUILT_DIST holds no console/index.html (npm run build:console)"
    mkdir -p "$WORK/stage/build/dist"
    cp -a "$PREBUILT_DIST/src" "$WORK/stage/build/dist/src"
    cp -a "$PREBUILT_DIST/console" "$WORK/stage/build/dist/console"
    return
  fi
  expect_run build 'npm run build'
  copy_stage build
  # In place of the stage's `npm ci`: the repository's own install of the same lockfile.
  [[ -x "$REPO/node_modules/.bin/tsc" ]] || fail "the repository has no node_modules (run npm ci there first)"
  ln -s "$REPO/node_modules" "$WORK/stage/build/node_modules"
  (cd "$WORK/stage/build" && npm run --silent build) > "$LOGS/build.log" 2>&1 || { cat "$LOGS/build.log" >&2; fail "npm run build"; }
}
deps_stage() {
  expect_run deps 'npm ci --omit=dev --ignore-scripts'
  copy_stage deps
  (cd "$WORK/stage/deps" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline) > "$LOGS/deps.log" 2>&1 || { cat "$LOGS/deps.log" >&2; fail "npm ci --omit=dev"; }
}
for s in "${STAGES[@]}"; do
  case "$s" in build | deps | "$RUNTIME") ;; *) fail "unknown Dockerfile stage \"$s\": update this script" ;; esac
done
build_stage & BUILD_PID=$!
deps_stage & DEPS_PID=$!
wait "$BUILD_PID" || fail "build stage"
wait "$DEPS_PID" || fail "deps stage"
BUILD_PID=""
DEPS_PID=""
say "build stage ($([[ -n "${PREBUILT_DIST:-}" ]] && echo "prebuilt $PREBUILT_DIST" || echo 'npm run build')) and deps stage (npm ci --omit=dev --ignore-scripts: $(grep -Eo 'added [0-9]+ packages' "$LOGS/deps.log" || echo 'installed')) done at $(elapsed)"

# --- runtime stage ----------------------------------------------------------------------------
copy_stage "$RUNTIME"
APP="$WORK/stage/$RUNTIME"
[[ ! -e "$APP/node_modules/.bin/tsc" ]] || fail "a development dependency (typescript) reached the runtime stage"
[[ -f "$APP/${ENTRYPOINT[-1]}" ]] || fail "the ENTRYPOINT's ${ENTRYPOINT[-1]} is not in the runtime stage"
# A read-only root file system: the runtime files are not writable by the service's user (root
# owns them when this runs as root; write permission is removed either way), and DATA_DIR points
# into a directory it cannot create anything in.
chmod -R a-w "$APP"
mkdir -p "$WORK/secrets"
node -e "
  const { generateKeyPairSync } = require('node:crypto');
  require('node:fs').writeFileSync(process.argv[1], generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o400 });
" "$WORK/secrets/transport-private.pem"
if [[ "$(id -u)" == 0 ]]; then
  chown -R "$APP_UID:$APP_GID" "$WORK/secrets"
  # setpriv execs: the process started is node itself, as in the container.
  RUN_AS=(setpriv "--reuid=$APP_UID" "--regid=$APP_GID" --clear-groups --no-new-privs --)
  say "running the service as uid $APP_UID gid $APP_GID (the Dockerfile's USER)"
else
  RUN_AS=()
  say "running the service as uid $(id -u) (this script was not started as root; the image uses $APP_UID)"
fi
chmod 0500 "$WORK/secrets"
chmod a-w "$WORK"

read -r PORT MANAGEMENT_PORT < <(node -e "
  const net = require('node:net');
  const one = () => new Promise((ok) => { const s = net.createServer().listen(0, '127.0.0.1', () => ok(s)); });
  Promise.all([one(), one()]).then((servers) => { console.log(servers.map((s) => s.address().port).join(' ')); servers.forEach((s) => s.close()); });
")
mapfile -t IMAGE_ENV < "$PLAN/runtime.env"
# What the container's process sees: the image's ENV, then what the operator sets (compose's
# .env or the Kubernetes ConfigMap and Secret), and nothing inherited from this shell.
SERVICE_ENV=(
  "PATH=/usr/local/bin:/usr/bin:/bin" "HOME=/"
  "${IMAGE_ENV[@]}"
  "HOST=127.0.0.1" "PORT=$PORT" "MANAGEMENT_HOST=127.0.0.1" "MANAGEMENT_PORT=$MANAGEMENT_PORT"
  "DATA_DIR=$WORK/data"
  "DATABASE_URL=$DATABASE_URL"
  "FIELD_ENCRYPTION_KEY=$(node -p "require('node:crypto').randomBytes(32).toString('base64')")"
  "IP_HASH_KEY=$(node -p "require('node:crypto').randomBytes(32).toString('base64')")"
  "TRANSPORT_PRIVATE_KEY_PATH=$WORK/secrets/transport-private.pem"
  "TRUST_PROXY=loopback"
  "WEBAUTHN_RP_ID=localhost" "WEBAUTHN_RP_NAME=Strongroom" "WEBAUTHN_ORIGINS=http://localhost:$PORT"
  "PUSH_APPROVAL_ANDROID_PACKAGES=com.bank.example"
  "LOG_LEVEL=info"
)
NODE_BIN="$(command -v node)"
in_container() { (cd "$APP" && "${RUN_AS[@]}" env -i "${SERVICE_ENV[@]}" "$@"); }

# --- the operator's steps: migrate, the first administrator -------------------------------------
in_container "$NODE_BIN" dist/src/cli.js migrate > "$LOGS/migrate.log" 2>&1 || { cat "$LOGS/migrate.log" >&2; fail "strongroom migrate"; }
sed 's/^/  migrate | /' "$LOGS/migrate.log"
# Random consonants (no vowels and no digits, so no dictionary word a password check would
# refuse, l33t spellings included), then a symbol, a digit and both cases the policy asks for.
ADMIN_PASSWORD="$(node -p "const a = 'bcdfghjkmnpqrstvwxzBCDFGHJKMNPQRSTVWXZ'; Array.from(require('node:crypto').randomBytes(20), (b) => a[b % a.length]).join('')")#Q2x"
in_container env "STRONGROOM_ADMIN_PASSWORD=$ADMIN_PASSWORD" "$NODE_BIN" dist/src/cli.js create-admin --username ops.admin > "$LOGS/admin.log" 2>&1 || { cat "$LOGS/admin.log" >&2; fail "strongroom create-admin"; }
sed 's/^/  create-admin | /' "$LOGS/admin.log"
say "migrate and create-admin done at $(elapsed)"

# --- the ENTRYPOINT, the HEALTHCHECK, SIGTERM ---------------------------------------------------
SERVER_LOG="$LOGS/server.log"
(cd "$APP" && exec "${RUN_AS[@]}" env -i "${SERVICE_ENV[@]}" "$NODE_BIN" "${ENTRYPOINT[@]:1}") > "$SERVER_LOG" 2>&1 &
SERVER_PID=$!
HEALTH_AT=""
for _ in $(seq 1 150); do
  kill -0 "$SERVER_PID" 2>/dev/null || { wait "$SERVER_PID" || true; fail "the server exited before /health answered"; }
  if in_container "$NODE_BIN" "${HEALTHCHECK[@]:1}" 2>/dev/null; then HEALTH_AT="$(elapsed)"; break; fi
  sleep 0.2
done
[[ -n "$HEALTH_AT" ]] || fail "the HEALTHCHECK did not pass within 30 s"
say "health: HEALTHCHECK passed (GET /health on the management port $MANAGEMENT_PORT answered 200) at $HEALTH_AT"
SERVER_UID="$(awk '/^Uid:/ { print $2 }' "/proc/$SERVER_PID/status")"
[[ "$SERVER_UID" != 0 ]] || fail "the server runs as root"
say "server process $SERVER_PID runs as uid $SERVER_UID"
node -e "
  const [port, mgmt] = process.argv.slice(1);
  Promise.all([fetch('http://127.0.0.1:' + port + '/metrics'), fetch('http://127.0.0.1:' + mgmt + '/metrics'), fetch('http://127.0.0.1:' + port + '/health')]).then(([pub, man, health]) => {
    console.log('container-steps: metrics: ' + pub.status + ' on the API port, ' + man.status + ' on the management port; /health on the API port: ' + health.status);
    process.exit(pub.status === 404 && man.status === 200 && health.status === 200 ? 0 : 1);
  }, (err) => { console.error(err); process.exit(1); });
" "$PORT" "$MANAGEMENT_PORT" || fail "/metrics must answer 404 on the API port and 200 on the management port"
node -e "
  const [port] = process.argv.slice(1);
  Promise.all([fetch('http://127.0.0.1:' + port + '/console'), fetch('http://127.0.0.1:' + port + '/account/sessions')]).then(async ([c, a]) => {
    const page = await c.text();
    const asset = /src=\"(\/console\/assets\/[^\"]+\.js)\"/.exec(page);
    const js = asset ? await fetch('http://127.0.0.1:' + port + asset[1]) : { status: 0 };
    console.log('container-steps: console: /console ' + c.status + ', /account/sessions ' + a.status + ', its script ' + js.status);
    process.exit(c.status === 200 && a.status === 200 && js.status === 200 ? 0 : 1);
  }, (err) => { console.error(err); process.exit(1); });
" "$PORT" || fail "/console, /account and the console's assets must answer 200 (dist/console in the image)"
[[ ! -e "$WORK/data" ]] || fail "the service wrote to DATA_DIR in production"

GRACE_MS=10000 # SHUTDOWN_GRACE_MS's default; the server exits 1 if the drain takes longer
STOP_AT=$(date +%s%N)
kill -TERM "$SERVER_PID"
for _ in $(seq 1 $(( GRACE_MS / 100 + 20 ))); do
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$SERVER_PID" 2>/dev/null && fail "the server still runs $(( GRACE_MS / 1000 + 2 )) s after SIGTERM"
STOP_MS=$(( ($(date +%s%N) - STOP_AT) / 1000000 ))
set +e
wait "$SERVER_PID"
CODE=$?
set -e
SERVER_PID=""
[[ "$CODE" == 0 ]] || fail "the server exited with $CODE after SIGTERM"
grep -q 'Stopped cleanly' "$SERVER_LOG" || fail "the server did not log \"Stopped cleanly\""
[[ ! -e "$WORK/data" ]] || fail "the service wrote to DATA_DIR in production"
say "exit: 0 after SIGTERM in $STOP_MS ms (\"Stopped cleanly\")"
say "OK in $(elapsed)"
