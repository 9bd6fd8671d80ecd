#!/usr/bin/env bash
# Builds the Rust test programs in tests/apps offline from Debian's crate sources
# (and tests/apps-tokio153: some of them again on tokio 1.53.1 from ../shared/crates;
# tests/apps-tokio153-unstable: on 1.53.1 with --cfg tokio_unstable and the tracing feature),
# the deployment profiles' program (tests/apps-deployed on 1.24, tests/apps-deployed153 on
# 1.53.1: one program in each profile of deployed_profiles, each in its own target/PROFILE),
# and the C USDT test program (needs <sys/sdt.h>: systemtap-sdt-dev).
set -euo pipefail
export PATH="$HOME/.cargo/bin:$PATH"
cd "$(dirname "$0")/../tests/apps"
cargo build --release --quiet

# tests/apps-deployed*/target/PROFILE/deployed in every profile of its Cargo.toml: release
# (debug = true), nodebug, lto, abort, small, v0, v0nodebug, packed; v0 mangling is a
# RUSTFLAGS change, so those two build with it (each profile its own directory: nothing is
# rebuilt for another). About 12 s of CPU a profile.
deployed_profiles() {
	local flags
	for p in release nodebug lto abort small v0 v0nodebug packed; do
		flags=$1
		case $p in v0*) flags="$flags -C symbol-mangling-version=v0" ;; esac
		RUSTFLAGS="$flags" cargo build --profile "$p" --quiet
	done
}
(cd ../apps-deployed && deployed_profiles "")
# the same Tokio programs on tokio 1.53.1 (sources in ../shared/crates, beside
# the repository); without them the demo still builds, and the tokio153_*
# and tokio153u_* integration cases fail for want of their programs
if [ -d ../../../shared/crates/tokio-1.53.1 ]; then
	(cd ../apps-tokio153 && cargo build --release --quiet)
	(cd ../apps-tokio153-unstable && cargo build --release --quiet)
	(cd ../apps-deployed153 && deployed_profiles "--cap-lints=allow")
else
	echo "build-apps: no ../shared/crates beside the repository: the tokio 1.53 test" \
	     "programs (tests/apps-tokio153, tests/apps-tokio153-unstable) are not built," \
	     "and their integration cases will fail" >&2
fi
cc -O2 -g -Wall -Wextra -Werror -o usdt/usdt_app usdt/usdt_app.c usdt/usdt_guarded.c
cc -O2 -g -Wall -Wextra -Werror -o usdt/usdt_tasks usdt/usdt_tasks.c
cc -O2 -g -Wall -Wextra -Werror -o uring/uring_tasks uring/uring_tasks.c
