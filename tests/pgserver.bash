# A private PostgreSQL server for the budget store tests (tests/store-pg.bats):
# initdb in a fresh temporary directory, its unix socket in that directory,
# no TCP; stopped by its own pid.  Root cannot run postgres: then the
# server runs as the user postgres (setpriv), in a directory it owns.
#
#   pg_start     sets PGDIR, PGPID; when PostgreSQL is not installed it
#                writes why to PG_SKIP_FILE and returns 0 (pg_skip_check in
#                each test skips then), or fails under CI=true
#   pg_uri DB    the URI of database DB on that server
#   pg_psql DB SQL   run SQL as the superuser
#   pg_stop      stops exactly that server (pg_ctl, then its pid)
# PG_SKIP_FILE and PG_STATE_FILE (PGDIR PGPID, written by pg_start) are
# files of the caller's; tests and teardown read the server from the latter.

pg_unavailable() {
	if [ "${CI:-}" = true ]; then
		echo "store-pg: $1 (CI=true: PostgreSQL is required; make deps)" >&2
		return 1
	fi
	echo "$1 (make deps installs PostgreSQL)" > "$PG_SKIP_FILE"
}

# In each test: skip when pg_start found no PostgreSQL.
pg_skip_check() {
	[ ! -s "$PG_SKIP_FILE" ] || skip "$(cat "$PG_SKIP_FILE")"
}

pg_as() {
	if [ "$(id -u)" = 0 ]; then
		/usr/bin/setpriv --reuid postgres --regid postgres --init-groups \
		    --reset-env -- "$@"
	else
		"$@"
	fi
}

pg_start() {
	local bin
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x /usr/bin/psql ]; then
		pg_unavailable "PostgreSQL server not installed"
		return
	fi
	if [ "$(id -u)" = 0 ] && ! id postgres > /dev/null 2>&1; then
		pg_unavailable "no user postgres to run the server as"
		return
	fi
	PGBINDIR=$bin
	PGDIR=$(mktemp -d /tmp/privada-pg.XXXXXX)
	echo "$PGDIR" > "$PG_STATE_FILE"	# for pg_stop, also on failure
	chmod 0700 "$PGDIR"
	[ "$(id -u)" != 0 ] || chown postgres:postgres "$PGDIR"
	pg_as "$bin/initdb" -D "$PGDIR/data" -U privada --auth=trust \
	    -E UTF8 --locale=C.UTF-8 --no-sync > "$PGDIR/initdb.log" 2>&1 ||
	    { cat "$PGDIR/initdb.log" >&2; echo "store-pg: initdb failed" >&2; return 1; }
	pg_as "$bin/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
	    -o "-k $PGDIR -c listen_addresses= -c fsync=off -c max_connections=60" \
	    start > /dev/null ||
	    { cat "$PGDIR/server.log" >&2; echo "store-pg: the server did not start" >&2; return 1; }
	PGPID=$(head -1 "$PGDIR/data/postmaster.pid")
	echo "$PGDIR $PGPID" > "$PG_STATE_FILE"
	export PGDIR PGPID PGBINDIR
}

pg_uri() {
	printf 'postgresql://privada@/%s?host=%s\n' "$1" "$PGDIR"
}

pg_psql() {
	PGOPTIONS='-c client_min_messages=warning' /usr/bin/psql -X -q -v ON_ERROR_STOP=1 -d "$(pg_uri "$1")" -c "$2"
}

pg_stop() {
	[ ! -s "$PG_STATE_FILE" ] || read -r PGDIR PGPID < "$PG_STATE_FILE"
	[ -n "${PGDIR:-}" ] || return 0
	if [ -n "${PGPID:-}" ] && kill -0 "$PGPID" 2> /dev/null; then
		pg_as "$PGBINDIR/pg_ctl" -D "$PGDIR/data" -m immediate -w stop \
		    > /dev/null 2>&1 || true
		if kill -0 "$PGPID" 2> /dev/null; then
			kill -KILL "$PGPID" 2> /dev/null || true
		fi
	fi
	rm -rf "$PGDIR"
	rm -f "$PG_STATE_FILE"
	PGDIR=
}
