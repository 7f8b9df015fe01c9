#!/usr/bin/env bash
# trilha on a fresh Debian 12 or Ubuntu 24.04 server, with HTTPS through Caddy, without Docker.
#
#   sudo deploy/install.sh --public-url https://track.example.com --email you@example.com
#
# Run it from a copy of trilha's source (git clone). It installs Python's venv and Caddy from
# the distribution, trilha into /opt/trilha (its own virtualenv), a system user `trilha`, its
# settings in /etc/trilha/trilha.env (kept if present), its data in /var/lib/trilha, the
# systemd units trilha.service and trilha-worker.service, Caddy's configuration
# (/etc/caddy/Caddyfile, the one there before kept as Caddyfile.before-trilha), and the command
# /usr/local/bin/trilha, which runs trilha as its user with its settings (backup, apikey, ...).
# Then it brings the database up to date and starts everything. Running it again upgrades
# trilha to the source it is run from and keeps the settings and the data.
#
# Options:
#   --public-url URL     the https:// address people and platforms reach trilha on (required)
#   --email ADDRESS      where the certificate authority writes about certificates (required)
#   --database-url URL   PostgreSQL, e.g. postgresql+psycopg://trilha:secret@127.0.0.1/trilha
#                        (default: SQLite in /var/lib/trilha/trilha.db)
#   --port N             the loopback port trilha listens on behind Caddy (default 8000)
#
# The paths and the user can be changed through the environment: TRILHA_PREFIX,
# TRILHA_CONFIG_DIR, TRILHA_DATA_DIR, TRILHA_UNIT_DIR, TRILHA_CADDYFILE, TRILHA_BIN_DIR,
# TRILHA_USER, and the Python it uses with TRILHA_PYTHON (default /usr/bin/python3).
set -euo pipefail

fail() { echo "install.sh: $*" >&2; exit 2; }

public_url="" email="" database_url="" port=8000
while [ "$#" -gt 0 ]; do
  case "$1" in
    --public-url) public_url="${2-}"; shift 2 ;;
    --email) email="${2-}"; shift 2 ;;
    --database-url) database_url="${2-}"; shift 2 ;;
    --port) port="${2-}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done
[[ "$public_url" =~ ^https://[A-Za-z0-9.-]+(:[0-9]+)?/?$ ]] \
  || fail "--public-url must be https://host, the address trilha is reached on (got '$public_url')"
[[ "$email" =~ ^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+$ ]] || fail "--email must be an e-mail address (got '$email')"
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] \
  || fail "--port must be a port number (got '$port')"
[[ "$database_url" != *"'"* ]] || fail "--database-url must not contain a single quote"
[ "$(id -u)" = 0 ] || fail "run it as root (sudo)"

source_dir="$(cd "$(dirname "$0")/.." && pwd)"
[ -f "$source_dir/pyproject.toml" ] || fail "run it from trilha's source (deploy/install.sh)"
prefix="${TRILHA_PREFIX:-/opt/trilha}"
config_dir="${TRILHA_CONFIG_DIR:-/etc/trilha}"
data_dir="${TRILHA_DATA_DIR:-/var/lib/trilha}"
unit_dir="${TRILHA_UNIT_DIR:-/etc/systemd/system}"
caddyfile="${TRILHA_CADDYFILE:-/etc/caddy/Caddyfile}"
bin_dir="${TRILHA_BIN_DIR:-/usr/local/bin}"
user="${TRILHA_USER:-trilha}"
# The distribution's Python: one the service user may run (not one in root's home).
python="${TRILHA_PYTHON:-/usr/bin/python3}"
env_file="$config_dir/trilha.env"
# The services start only where systemd runs and finds the units.
systemd_runs=false
[ -d /run/systemd/system ] && [ "$unit_dir" = /etc/systemd/system ] && systemd_runs=true

step() { echo "== $*"; }

step "packages"
missing=()
"$python" -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
command -v caddy >/dev/null || missing+=(caddy)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "trilha needs Python 3.11 or newer"

step "user $user"
id -u "$user" >/dev/null 2>&1 \
  || useradd --system --user-group --home-dir "$data_dir" --no-create-home --shell /usr/sbin/nologin "$user"
install -d -o "$user" -g "$user" -m 0750 "$data_dir"
install -d -o root -g root -m 0755 "$config_dir"

step "trilha into $prefix"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
# A copy, so that the build leaves nothing in the source tree.
cp -R "$source_dir/pyproject.toml" "$source_dir/README.md" "$source_dir/src" "$build/"
[ -x "$prefix/bin/python" ] || "$python" -m venv "$prefix"
"$prefix/bin/pip" install --quiet --disable-pip-version-check --upgrade "$build"
"$prefix/bin/trilha" --help >/dev/null

step "settings in $env_file"
if [ -f "$env_file" ]; then
  echo "kept (edit it, then: systemctl restart trilha trilha-worker)"
else
  (
    umask 0027
    {
      echo "# trilha's settings (docs/settings.md). Restart trilha and trilha-worker after a change."
      echo "TRILHA_PUBLIC_URL='${public_url%/}'"
      echo "TRILHA_DATABASE_URL='${database_url:-sqlite+aiosqlite:///$data_dir/trilha.db}'"
      echo "TRILHA_HOST='127.0.0.1'"
      echo "TRILHA_PORT='$port'"
    } > "$env_file"
  )
  chown "root:$user" "$env_file"
  chmod 0640 "$env_file"
fi

step "systemd units in $unit_dir"
install -d -m 0755 "$unit_dir"
for unit in trilha.service trilha-worker.service; do
  sed -e "s#/opt/trilha#$prefix#g" -e "s#/etc/trilha#$config_dir#g" \
      -e "s#/var/lib/trilha#$data_dir#g" -e "s#^User=trilha#User=$user#" \
      -e "s#^Group=trilha#Group=$user#" "$source_dir/deploy/$unit" > "$unit_dir/$unit"
  chmod 0644 "$unit_dir/$unit"
done

step "the trilha command in $bin_dir"
install -d -m 0755 "$bin_dir"
cat > "$bin_dir/trilha" <<WRAPPER
#!/bin/sh
# trilha as its service runs it: as $user, with $env_file, in $data_dir.
cd "$data_dir" || exit 1
run='set -a; . "\$0"; set +a; exec "$prefix/bin/trilha" "\$@"'
if [ "\$(id -u)" = 0 ]; then
  exec runuser -u "$user" -- sh -c "\$run" "$env_file" "\$@"
fi
exec sh -c "\$run" "$env_file" "\$@"
WRAPPER
chmod 0755 "$bin_dir/trilha"

step "Caddy's configuration in $caddyfile"
install -d -m 0755 "$(dirname "$caddyfile")"
if [ -f "$caddyfile" ] && ! grep -q "trilha" "$caddyfile"; then
  cp -p "$caddyfile" "$caddyfile.before-trilha"
  echo "the previous one is kept as $caddyfile.before-trilha"
fi
# The shipped file's two placeholders ({$NAME:default}, for compose.yaml) made plain values.
sed -e "s#{\$ACME_EMAIL:you@example.com}#$email#" \
    -e "s#{\$TRILHA_UPSTREAM:127.0.0.1:8000}#127.0.0.1:$port#g" \
  "$source_dir/deploy/Caddyfile" > "$caddyfile"
grep -q "email $email\$" "$caddyfile" && ! grep -v '^[[:space:]]*#' "$caddyfile" | grep -q '{\$' \
  || fail "deploy/Caddyfile has changed; the installer no longer knows its placeholders"
chmod 0644 "$caddyfile"
caddy validate --config "$caddyfile" --adapter caddyfile >/dev/null 2>&1 \
  || fail "Caddy refuses $caddyfile: caddy validate --config $caddyfile"

step "database"
"$bin_dir/trilha" migrate

if $systemd_runs; then
  step "starting"
  systemctl daemon-reload
  systemctl enable trilha.service trilha-worker.service caddy.service
  systemctl restart trilha.service trilha-worker.service
  systemctl reload-or-restart caddy.service
  echo "trilha runs at ${public_url%/} (status: systemctl status trilha trilha-worker caddy)."
  echo "On its first start it writes a one-time link to create the owner account:"
  echo "  journalctl -u trilha | grep /setup/"
else
  echo "systemd is not running on this machine: nothing was started. Start, as root:"
  echo "  $bin_dir/trilha serve & $bin_dir/trilha worker & caddy run --config $caddyfile"
fi
