#!/usr/bin/env bash
# Emulated machines where a network namespace can be made but not entered: in a chroot whose /
# is no mount point, iproute2's `ip -n` fails (it makes / a slave mount first), and so would
# every machine's set-up. The harness says so before anything launches -- one line naming the
# cause, exit 2, no output folder, no namespace left -- rather than failing half-way through
# building the machines. The chroot is this machine's own folders bound below a plain folder, in
# a private mount namespace. Skips (77) without root, iproute2 or unshare.
source "$(dirname "$0")/common.sh"
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "needs root (a mount namespace, a chroot, network namespaces)"
for tool in ip unshare chroot; do command -v "$tool" >/dev/null || skip "needs $tool"; done

root=$SCRATCH/root
cat >"$SCRATCH/chroot.sh" <<EOF
set -e
mount --make-rprivate /
mkdir -p "$root"
for dir in /*; do
  if [[ -L \$dir ]]; then
    cp -P "\$dir" "$root\$dir"
  elif [[ -d \$dir && \$dir != /tmp ]]; then
    mkdir "$root\$dir" && mount --rbind "\$dir" "$root\$dir"
  fi
done
# The scratch folder, and the binary wherever it was built, at their own paths.
for dir in "$SCRATCH" "$(dirname "$HARNESS")"; do
  mkdir -p "$root\$dir" && mount --bind "\$dir" "$root\$dir"
done
exec chroot "$root" "$HARNESS" profile comm --world 2 --machines 2 --ops allreduce --sizes 1K \
  --iterations 1 --warmup 0 --out "$SCRATCH/out"
EOF
# unshare, bash and chroot each exec the next: the harness keeps the pid started here.
set +e
unshare -m bash "$SCRATCH/chroot.sh" >"$SCRATCH/stdout" 2>"$SCRATCH/stderr" &
pid=$!
wait $pid
code=$?
set -e
err=$(cat "$SCRATCH/stderr")
[[ $code == 2 ]] || fail "exit $code, not 2: $err $(tail -3 "$SCRATCH/stdout")"
[[ $(wc -l <"$SCRATCH/stderr") == 1 ]] || fail "not one line: $err"
expect_contains "$err" "error: --machines: cannot enter a network namespace here (ip -n NAME link set lo up: "
expect_contains "$err" "mount --make-rslave /"
[[ ! -e $SCRATCH/out ]] || fail "the refused run wrote its folder"
leftover=$(ip netns list | grep -E "^harness-$pid-probe" || true)
[[ -z $leftover ]] || fail "the probe's namespace was left: $leftover"
echo "PASS: in a chroot, --machines refused in one line: $err"
