#!/usr/bin/env bash
# What a newcomer meets, measured on this machine: a minimal Debian 12 (debootstrap's minbase,
# with git and ca-certificates, as a machine someone cloned onto has) built in a chroot, then,
# inside it, `git clone` of this repository and `bash scripts/quickstart.sh` (or TEST=1: then
# `bash scripts/test.sh` as well), timed from the clone to the quickstart's tables with apt's
# download and install included. Prints each phase (clone and apt, configure and build, the
# study) from the files' times. Needs root, debootstrap (apt install debootstrap) and Debian's
# mirror; the chroot shares this machine's kernel, cores and network, so the figures are this
# machine's, apt's the most (its mirror's distance). Everything it made goes at the end.
#
#   sudo bash bench/fresh_machine.sh [WORK_DIR]    (default: a new folder under /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) == 0 ]] || { echo "error: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "error: no debootstrap (apt install debootstrap)" >&2; exit 2; }
work=${1:-$(mktemp -d /tmp/harness-fresh-XXXXXX)}
mkdir -p "$work"
root=$work/root
cleanup() {
  local target
  # Every mount of the chroot and below it, deepest first: this script's, and what the run
  # mounted inside (iproute2 mounts the chroot's /run/netns when the tests' emulated machines
  # add a namespace).
  findmnt -rn -o TARGET | awk -v root="$root" '$0 == root || index($0, root "/") == 1' |
    sort -r | while read -r target; do
    umount "$target" 2>/dev/null || true
  done
  [[ ${KEEP:-0} == 1 ]] || rm -rf --one-file-system "$work"
}
trap cleanup EXIT
bind() {  # source target [options]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  [[ -z ${3:-} ]] || mount -o "remount,bind,$3" "$2"
}

t0=$(date +%s.%N)
debootstrap --variant=minbase --include=git,ca-certificates bookworm "$root" \
  http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
  { tail -5 "$work/debootstrap.log"; exit 1; }
echo "minimal Debian 12 in $root: $(python3 -c "import sys; print(round($(date +%s.%N) - $t0))") s"
# The chroot's / a mount point, as a machine's is: iproute2 enters a network namespace by
# making / a slave mount first, so that elsewhere the tests that build emulated machines skip.
mount --bind "$root" "$root"
bind "$PWD" "$root/src" ro
bind /dev "$root/dev"
bind /dev/pts "$root/dev/pts"
mount -t proc proc "$root/proc"
# The host's /sys with what is mounted below it, as a booted machine has: slurmd needs the cgroup
# file system at /sys/fs/cgroup. A slave, so that the cleanup's unmounts stay in the chroot.
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
cp /etc/resolv.conf /etc/hosts "$root/etc/"
# The chroot uses this machine's network, so it trusts what this machine trusts: behind a proxy
# that re-signs TLS, pip in the chroot would refuse PyPI's certificate (TEST=1).
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

# Inside: the README's commands, each phase's end stamped.
chroot "$root" bash -c '
  set -e
  stamp() { date +%s.%N >> /root/stamps; }
  cd /root && stamp
  git clone -q /src main && cd main
  bash scripts/quickstart.sh > /root/quickstart.log 2>&1; stamp
  # When the quickstart had configured and built (test.sh after it builds there again).
  stat -c %.9Y build/build.ninja build/harness > /root/quickstart_files
  if [[ ${TEST:-0} == 1 ]]; then bash scripts/test.sh > /root/test.log 2>&1 || true; stamp; fi
' || { tail -20 "$root/root/quickstart.log"; exit 1; }
python3 - "$root" <<'PY'
import sys
root = sys.argv[1]
stamps = [float(x) for x in open(f"{root}/root/stamps")]
configured, built = (float(x) for x in open(f"{root}/root/quickstart_files"))
start, tables = stamps[0], stamps[1]
print(f"git clone to the quickstart's tables: {tables - start:.1f} s")
print(f"  clone, packages (apt), cmake's configuration: {configured - start:.1f} s")
print(f"  build (harness, harness-rank):                {built - configured:.1f} s")
print(f"  the study:                                    {tables - built:.1f} s")
if len(stamps) > 2:
    log = open(f"{root}/root/test.log").read()
    print(f"then scripts/test.sh: {stamps[2] - tables:.1f} s; ctest: " +
          "; ".join(line.strip() for line in log.splitlines() if "tests passed" in line))
    # Its own account of where the time went: each pass's packages, build and ctest.
    print("  " + next((line for line in log.splitlines() if line.startswith("test.sh: ")), "test.sh: no phases line"))
PY
