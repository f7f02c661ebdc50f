#!/usr/bin/env bash
# harness history on a real PostgreSQL server: a private cluster in a temporary folder (Debian's
# postgresql: initdb, then postgres as this script's child on a Unix socket only, no TCP port),
# the same history as on
# SQLite (add, check's regression at its commit, a commit twice refused with the database
# unchanged, --replace), a wrong password hidden in the error, and the server stopped and removed
# after. Runs as the postgres user where the test is root (initdb refuses root).
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/history_common.sh"
bin=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1)
[[ -x $bin/initdb ]] || fail "no PostgreSQL server (Debian's postgresql; scripts/install-deps.sh installs it)"
as_owner=()
if [[ $(id -u) == 0 ]]; then as_owner=(runuser -u postgres --); fi
cluster=$SCRATCH/pg
mkdir -p "$cluster"
if [[ $(id -u) == 0 ]]; then chown postgres "$cluster"; chmod 755 "$SCRATCH"; fi
server_pid=''
# The server is this script's child (not pg_ctl's daemon), stopped and waited for at the end.
stop_server() {
  if [[ -n $server_pid ]]; then
    "${as_owner[@]}" "$bin/pg_ctl" -D "$cluster/data" -m fast -w stop > /dev/null 2>&1 ||
      kill "$server_pid" 2> /dev/null || true
    wait "$server_pid" 2> /dev/null || true
  fi
}
trap 'stop_server; rm -rf "$SCRATCH"' EXIT
"${as_owner[@]}" "$bin/initdb" -D "$cluster/data" -U historian --auth=trust > "$cluster/initdb.log" 2>&1 ||
  fail "initdb: $(tail -3 "$cluster/initdb.log")"
port=$(( 20000 + RANDOM % 20000 ))
"${as_owner[@]}" "$bin/postgres" -D "$cluster/data" -c listen_addresses= -k "$cluster" -p "$port" \
  > "$cluster/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  if "$bin/pg_isready" -q -h "$cluster" -p "$port"; then break; fi
  kill -0 "$server_pid" 2> /dev/null || fail "postgres stopped: $(tail -5 "$cluster/server.log")"
  sleep 0.5
done
"$bin/pg_isready" -q -h "$cluster" -p "$port" || fail "postgres not ready: $(tail -5 "$cluster/server.log")"
"${as_owner[@]}" "$bin/createdb" -h "$cluster" -p "$port" -U historian history ||
  fail "createdb"
uri="postgresql:///history?host=$cluster&port=$port&user=historian"

add_history "$uri" 1 16 99 0
add_history "$uri" 17 22 17 0.12
set +e
"$HARNESS" history check --db "$uri" --since c15 --json "$SCRATCH/check.json" > "$SCRATCH/check.md"
code=$?
set -e
[[ $code == 1 ]] || fail "PostgreSQL: a 12% step: exit $code, want 1: $(cat "$SCRATCH/check.md")"
"$PY" - "$SCRATCH/check.json" <<'PY' || fail "check.json"
import json, sys
rows = {(r["benchmark"], r["metric"]): r for r in json.load(open(sys.argv[1]))["rows"]}
for system in ("overlap", "sync"):
    change = rows[(f"ci_regression / default / {system}", "iteration p50")]["change"]
    assert change["commit"] == "c17" and abs(change["change_pct"] - 12) < 1.5, change
PY
# The same history in SQLite gives the same verdicts, figure for figure.
add_history "$SCRATCH/same.sqlite" 1 16 99 0
add_history "$SCRATCH/same.sqlite" 17 22 17 0.12
set +e
"$HARNESS" history check --db "$SCRATCH/same.sqlite" --since c15 --json "$SCRATCH/sqlite.json" > /dev/null
set -e
"$PY" -c 'import json, sys; a, b = (json.load(open(f))["rows"] for f in sys.argv[1:]); [print(x, "\n", y) for x, y in zip(a, b) if x != y]; assert a == b, "PostgreSQL and SQLite differ"' \
  "$SCRATCH/check.json" "$SCRATCH/sqlite.json" || fail "PostgreSQL's verdicts differ from SQLite's"

# pg_dump's \restrict lines carry a new random key each time.
dump() { "$bin/pg_dump" -h "$cluster" -p "$port" -U historian --data-only history | grep -v '^\\\(un\)\?restrict'; }
dump > "$SCRATCH/before.sql"
expect_history_refused "commit c05 is in the history already" \
  history add "$SCRATCH/commits/c5" --commit c05 --db "$uri"
dump > "$SCRATCH/after.sql"
cmp -s "$SCRATCH/before.sql" "$SCRATCH/after.sql" || fail "a refused add changed the database: $(diff "$SCRATCH/before.sql" "$SCRATCH/after.sql" | head -5)"
"$HARNESS" history add "$SCRATCH/commits/c5" --commit c05 --db "$uri" --replace > /dev/null ||
  fail "--replace on PostgreSQL"
# An unreachable server: one line, its password not in it.
expect_history_refused "cannot connect" history check \
  --db "postgresql://historian:s3cret@localhost:1/history?host=$cluster/none"
if grep -q s3cret "$SCRATCH/refused.err"; then fail "the password was printed"; fi
"$HARNESS" history report --db "$uri" --out "$SCRATCH/site" > /dev/null || fail "report from PostgreSQL"
[[ -f $SCRATCH/site/index.html ]] || fail "no index.html"
echo "history on PostgreSQL: ok"
