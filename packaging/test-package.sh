#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# packaging_deb: sh test-package.sh CPACK BUILD_DIR WORK_DIR VERSION APP_ID
# Builds the Debian package of BUILD_DIR with cpack into WORK_DIR (its own folder: a package the user built in
# BUILD_DIR is left alone), checks its control fields and contents, that the binaries are stripped and their debug
# symbols are in the -dbgsym package under their build ids, unpacks it with dpkg-deb -x into a temporary root and
# runs the installed exposure-cli on the installed demo trace (and `render`, which runs the installed
# libexec/exposure/exposure-cli-render). Exits 77 (skipped) only where there is no dpkg-deb, i.e. not on Debian.
set -eu
cpack=$1 build=$2 work=$3 version=$4 appid=$5

fail() {
    echo "packaging_deb: $*" >&2
    exit 1
}

if ! command -v dpkg-deb >/dev/null 2>&1; then
    echo "packaging_deb: skipped: dpkg-deb is not installed (not a Debian system)"
    exit 77
fi
for tool in readelf file; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (apt-get install binutils file)"
done

rm -rf "$work"
mkdir -p "$work"
if ! "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1; then
    cat "$work/cpack.log" >&2
    fail "cpack failed (log above)"
fi
arch=$(dpkg --print-architecture)
deb=$work/exposure_${version}_${arch}.deb
dbgdeb=$work/exposure-dbgsym_${version}_${arch}.deb
[ -f "$deb" ] || fail "cpack wrote no $deb: $(ls "$work")"
[ -f "$dbgdeb" ] || fail "cpack wrote no debug-symbol package $dbgdeb: $(ls "$work")"

# Control fields: name, version from debian/changelog, a maintainer with an address, an extended description,
# and the shared-library dependencies that dpkg-shlibdeps computed.
field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = exposure ] || fail "Package is '$(field Package)', not exposure"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', not $version"
case $(field Maintainer) in
*?" <"?*@?*">") ;;
*) fail "Maintainer '$(field Maintainer)' is not 'Name <address>'" ;;
esac
[ "$(field Description | wc -l)" -ge 5 ] || fail "Description has no extended description: $(field Description)"
depends=$(field Depends)
for lib in libc6 libqt6core6 libqt6widgets6 libqt6svg6 libqcustomplot zlib1g libdeflate0 libsqlite3-0; do
    case $depends in
    *"$lib"*) ;;
    *) fail "Depends lacks $lib (is dpkg-shlibdeps installed? apt-get install dpkg-dev): '$depends'" ;;
    esac
done
[ "$(dpkg-deb --field "$dbgdeb" Package)" = exposure-dbgsym ] || fail "$dbgdeb is not the exposure-dbgsym package"

# Every file of the package belongs to root.
owners=$(dpkg-deb --contents "$deb" | awk '{print $2}' | sort -u)
[ "$owners" = root/root ] || fail "files not owned by root/root: $owners"

root=$work/root
dbgroot=$work/dbgsym
dpkg-deb -x "$deb" "$root"
dpkg-deb -x "$dbgdeb" "$dbgroot"

for f in usr/share/doc/exposure/copyright usr/share/doc/exposure/changelog.Debian.gz \
    usr/share/applications/$appid.desktop usr/share/metainfo/$appid.metainfo.xml \
    usr/share/mime/packages/$appid-mime.xml usr/share/icons/hicolor/scalable/apps/$appid.svg \
    usr/share/exposure/demo-trace/rank0/traces.otf2 usr/share/exposure/demo-trace/rank1/traces.otf2; do
    [ -f "$root/$f" ] || fail "the package lacks /$f"
done
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
    "$root/usr/share/doc/exposure/copyright" || fail "copyright is not in the machine-readable (DEP-5) format"
gzip -dc "$root/usr/share/doc/exposure/changelog.Debian.gz" | head -n1 | grep -q "^exposure ($version) " \
    || fail "changelog.Debian.gz does not start with version $version"
for size in 16 22 24 32 48 64 128 256 512; do
    png=$root/usr/share/icons/hicolor/${size}x$size/apps/$appid.png
    [ -f "$png" ] || fail "the package lacks the ${size}px icon /${png#"$root"/}"
    case $(file -b "$png") in
    "PNG image data, $size x $size,"*) ;;
    *) fail "/${png#"$root"/} is not a $size x $size PNG: $(file -b "$png")" ;;
    esac
done
for prog in exposure exposure-cli; do
    man=$root/usr/share/man/man1/$prog.1.gz
    [ -f "$man" ] || fail "the package lacks the man page /usr/share/man/man1/$prog.1.gz (is help2man installed?)"
    title=$(echo "$prog" | tr '[:lower:]' '[:upper:]')
    gzip -dc "$man" | grep -q "^\.TH $title \"1\"" || fail "$prog.1.gz is not a section-1 man page of $prog"
    gzip -dc "$man" | grep -q -F '\-\-help' || fail "$prog.1.gz does not describe --help"
done
for cmd in info stats render compare; do
    gzip -dc "$root/usr/share/man/man1/exposure-cli.1.gz" | grep -q -F ".SS \"exposure\\-cli $cmd\"" \
        || fail "exposure-cli.1.gz lacks the --help of exposure-cli $cmd"
done

# Stripped executables without a RUNPATH; their debug sections in the dbgsym package, found by build id.
for bin in usr/bin/exposure usr/bin/exposure-cli usr/libexec/exposure/exposure-cli-render usr/libexec/exposure/exposure-otf2-probe; do
    f=$root/$bin
    [ -x "$f" ] || fail "the package lacks the executable /$bin"
    ! readelf -S "$f" | grep -q '\.debug_info' || fail "/$bin is not stripped (it has .debug_info)"
    ! readelf -d "$f" | grep -q -E 'RUNPATH|RPATH' || fail "/$bin has a RUNPATH: $(readelf -d "$f" | grep PATH)"
    id=$(readelf -n "$f" | sed -n 's/.*Build ID: *//p')
    [ -n "$id" ] || fail "/$bin has no build id"
    dbg=usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
    [ -f "$dbgroot/$dbg" ] || fail "the dbgsym package lacks /$dbg, the debug symbols of /$bin"
    readelf -S "$dbgroot/$dbg" 2>/dev/null | grep -q '\.debug_info' || fail "/$dbg has no .debug_info"
done

# The installed programs work from the unpacked root.
cli=$root/usr/bin/exposure-cli
out=$("$cli" --version) || fail "installed exposure-cli --version failed"
[ "$out" = "exposure-cli ${version%-*}" ] || fail "installed exposure-cli --version printed '$out'"
trace=$root/usr/share/exposure/demo-trace
out=$("$cli" info "$trace") || fail "installed exposure-cli info $trace failed: $out"
echo "$out" | grep -q -E '^Ranks: +2$' || fail "installed exposure-cli info does not report 2 ranks: $out"
QT_QPA_PLATFORM=offscreen "$cli" render "$trace" -o "$work/demo.png" --width 400 --height 200 >/dev/null \
    || fail "installed exposure-cli render (libexec/exposure/exposure-cli-render) failed"
case $(file -b "$work/demo.png") in
"PNG image data, 400 x 200,"*) ;;
*) fail "installed exposure-cli render wrote no 400 x 200 PNG: $(file -b "$work/demo.png")" ;;
esac
# Keep the packages (packaging_lintian reads them), not the 90 MB of staging and unpacked copies.
rm -rf "$root" "$dbgroot" "$work/_CPack_Packages"
echo "packaging_deb: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) and $(basename "$dbgdeb") pass"
