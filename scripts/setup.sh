#!/usr/bin/env bash
# Installs, idempotently, every Debian package asyncscope's build, tests and
# benchmarks need. With --check it only verifies and installs what is missing.
set -euo pipefail
# libclang-rt-14-dev: the libFuzzer and sanitizer runtimes of `make fuzz`;
# protobuf-compiler: protoc, which the tests decode `export --format
# perfetto` with against Perfetto's schema; debuginfod (the server) and
# binutils (strip, objcopy): the stripped-binary tests.
PKGS=(clang llvm libclang-rt-14-dev libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
      libiberty-dev libncurses-dev pkg-config make gcc valgrind wrk
      python3 chromium tmux librust-tokio-dev librust-futures-dev librust-hyper-dev
      librust-async-std-dev librust-smol-dev librust-async-executor-dev systemtap-sdt-dev
      libdebuginfod-dev debuginfod binutils protobuf-compiler libcapstone-dev golang-go libc6-dbg)
# From npm (the registry's own client): speedscope's release build, in which
# the integration cases load `export --format speedscope` files with
# speedscope's own code in headless chromium (checks/speedscope_load.sh).
# Kept outside the repository, fetched once.
SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_DIR=${ASYNCSCOPE_NPM_DIR:-/opt/asyncscope/npm}/speedscope-$SPEEDSCOPE_VERSION
npm_setup() {
	[ -r "$SPEEDSCOPE_DIR/dist/release/index.html" ] && return 0
	if [ "${1:-}" = "--check" ] && [ "$(id -u)" -ne 0 ]; then
		echo "setup: speedscope $SPEEDSCOPE_VERSION (npm) missing: run 'sudo make setup'" >&2
		return 1
	fi
	command -v npm >/dev/null || { echo "setup: npm not found: cannot fetch speedscope" >&2; return 1; }
	local tmp
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "speedscope@$SPEEDSCOPE_VERSION" >/dev/null &&
		mkdir -p "$SPEEDSCOPE_DIR" && tar xzf "speedscope-$SPEEDSCOPE_VERSION.tgz" \
		--strip-components=1 -C "$SPEEDSCOPE_DIR") || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
	echo "setup: speedscope $SPEEDSCOPE_VERSION (npm) in $SPEEDSCOPE_DIR"
}
missing=()
# serve: libmicrohttpd-dev, its HTTP server; prometheus (and its promtool)
# and golang-go (go tool pprof), the consumers its tests run against
PKGS+=(libmicrohttpd-dev prometheus golang-go)
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	[ "${1:-}" = "--check" ] || echo "setup: all ${#PKGS[@]} packages present"
	npm_setup "${1:-}"
	exit 0
fi
echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "setup: need root to install packages: run 'sudo make setup'" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
npm_setup
