#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# pkgconfig-check.sh MESON PKG-CONFIG CC BUILDDIR SRCDIR SANITIZE -- install the build into a
# scratch DESTDIR and build the 08 ping-pong client from what was installed, with
# nothing but `pkg-config --cflags --libs librpma` pointed at the installed librpma.pc:
# the header, the static library and its provider libraries must all come from it, and
# the program must not need Debian's librpma.so. SANITIZE is the build's b_sanitize (a
# sanitized librpma.a needs the program linked with the same runtime).
set -u
meson=$1 pkgconfig=$2 cc=$3 builddir=$4 srcdir=$5 sanitize=${6:-none}
san=
[ "$sanitize" = none ] || san=-fsanitize=$sanitize
dest=$(mktemp -d "${TMPDIR:-/tmp}/pkgconfig-check.XXXXXX")
trap 'rm -rf "$dest"' EXIT
fail() {
	echo "pkgconfig-check.sh: $*" >&2
	exit 1
}

"$meson" install -C "$builddir" --destdir "$dest" --no-rebuild >"$dest/install.log" 2>&1 ||
	{ cat "$dest/install.log" >&2; fail "meson install failed"; }
pc=$(find "$dest" -name librpma.pc)
[ -n "$pc" ] || fail "no librpma.pc installed"
case $pc in */rpmafs/pkgconfig/librpma.pc) ;; *) fail "librpma.pc at $pc, not in <libdir>/rpmafs/pkgconfig" ;; esac
[ -z "$(find "$dest" -path '*/include/librpma.h')" ] || fail "librpma.h installed where it shadows Debian's"
[ -z "$(find "$dest" -name librpma.a ! -path '*/rpmafs/*')" ] || fail "librpma.a installed where it shadows Debian's"

prefix=$(sed -n 's/^prefix=//p' "$pc")
pcq() {
	PKG_CONFIG_PATH=$(dirname "$pc") "$pkgconfig" \
		--define-variable=prefix="$dest$prefix" "$@" librpma
}
version=$(pcq --modversion) || fail "pkg-config cannot read $pc"
[ "$version" = 1.3.0 ] || fail "librpma.pc says version $version"
cflags=$(pcq --cflags) libs=$(pcq --libs) || fail "pkg-config --cflags/--libs failed"
echo "pkg-config: $cflags $libs"

c=$srcdir/common
# shellcheck disable=SC2086 # the flags are words
"$cc" $san -Werror -Wall -Wextra $cflags -I"$c" -o "$dest/client" "$srcdir/08-messages-ping-pong/client.c" \
	"$c/common-conn.c" "$c/common-messages-ping-pong.c" $libs || fail "the client did not build"
if ldd "$dest/client" | grep -q 'librpma\.so'; then
	fail "the client links Debian's librpma.so: $(ldd "$dest/client" | grep librpma)"
fi
nm "$dest/client" | grep -q ' T rpma_srq_new$' || fail "rpma_srq_new is not in the client"
"$dest/client" 2>/dev/null && fail "the client ran without arguments"
echo "pkgconfig-check.sh: built the 08 client from the installed librpma.pc ($version), statically"
