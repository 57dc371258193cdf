#!/bin/sh
# A highly available control plane on loopback, for a workshop on control-plane HA:
# three etcd members (`kexplore etcd`), three `kexplore serve` replicas on 127.0.0.1:6443-6445
# sharing one PKI, each with its own kubeconfig. Kill a replica, or an etcd member, and watch
# the rest carry on. Ctrl-C stops everything.
#
#   scripts/ha-local.sh [DIR]       (default DIR: /tmp/kexplore-ha; KEXPLORE=path/to/kexplore)
set -eu
KEXPLORE=${KEXPLORE:-target/release/kexplore}
DIR=${1:-/tmp/kexplore-ha}
if [ ! -x "$KEXPLORE" ]; then
    echo "$KEXPLORE not found: run cargo build --release first (or set KEXPLORE)" >&2
    exit 2
fi
mkdir -p "$DIR"
pids=""
stop() {
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill $pids 2>/dev/null
    wait 2>/dev/null
}
trap stop EXIT
trap 'exit 0' INT TERM

"$KEXPLORE" etcd --members 3 --pki-dir "$DIR/pki" --data-dir "$DIR/etcd" >"$DIR/etcd.out" 2>&1 &
pids="$!"
i=0
until grep -q '^replicas:' "$DIR/etcd.out" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 300 ] || ! kill -0 "$pids" 2>/dev/null; then
        echo "etcd did not start:" >&2
        cat "$DIR/etcd.out" >&2
        exit 1
    fi
    sleep 0.1
done
flags=$(sed -n 's/^replicas: kexplore serve \(.*\) --pki-dir .*/\1/p' "$DIR/etcd.out")
for n in 1 2 3; do
    # shellcheck disable=SC2086
    "$KEXPLORE" serve $flags --pki-dir "$DIR/pki" --listen "127.0.0.1:644$((n + 2))" \
        --kubeconfig-out "$DIR/kubeconfig-$n" >"$DIR/serve-$n.out" 2>&1 &
    pids="$pids $!"
    echo "replica $n: pid $! https://127.0.0.1:644$((n + 2)) kubeconfig $DIR/kubeconfig-$n"
done
for n in 1 2 3; do
    i=0
    until grep -q '^leader election identity:' "$DIR/serve-$n.out" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -gt 300 ]; then
            echo "replica $n did not start:" >&2
            cat "$DIR/serve-$n.out" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "replica $n: $(grep '^leader election identity:' "$DIR/serve-$n.out")"
done
cat <<EOT
$(sed -n 's/^etcd: /etcd: /p' "$DIR/etcd.out")

Try:
  kubectl --kubeconfig $DIR/kubeconfig-1 get lease -n kube-system    # who leads (identity above)
  kubectl --kubeconfig $DIR/kubeconfig-2 create -f scenarios/app.json
  kubectl --kubeconfig $DIR/kubeconfig-3 get pods -o wide            # the same cluster
  kill -9 <the leading replica's pid>; within 15 s another holds the Leases
  tail -f $DIR/serve-*.out    # "successfully acquired lease kube-system/…" on the one that takes over
  $(sed -n 's/^members and leader: //p' "$DIR/etcd.out")
Ctrl-C stops everything.
EOT
wait
