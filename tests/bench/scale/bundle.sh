#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Packs exposure-cli, exposure-mpi, the `exposure` GUI (with Qt's offscreen platform plugin, the image plugins and
# the DejaVu fonts, to time `exposure --screenshot` headless), exposure-make-demo and bench_load of a build, the
# shared libraries they need (Qt 6, OTF2, ICU, ...) and Debian's Open MPI runtime (mpirun, its components, PMIx)
# into one folder that runs on a Linux x86-64 machine without Qt, OTF2 or MPI installed (a machine lent for
# measuring, say). glibc itself is not packed: the machine needs glibc 2.36 or later.
#
# usage: bundle.sh BUILD_DIR OUT_DIR        then, on the other machine:   . OUT_DIR/env.sh
#
# env.sh puts the binaries and mpirun on the PATH, points LD_LIBRARY_PATH, OPAL_PREFIX and PMIX_INSTALL_PREFIX into
# the folder and allows mpirun to run as root. Components that need fast networks (UCX, libfabric, verbs, PSM) are
# left out: exposure-mpi uses shared memory and TCP (ob1).
set -eu
build=$1
out=$2
arch=x86_64-linux-gnu
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/ompi/bin" "$out/ompi/lib/$arch/openmpi/lib/openmpi3" "$out/ompi/share" \
    "$out/pmix2/lib/pmix" "$out/pmix2/share"
cp "$build/app/exposure-cli" "$out/bin/"
[ -x "$build/app/mpi/exposure-mpi" ] && cp "$build/app/mpi/exposure-mpi" "$out/bin/"
# The demo generator and the load benchmark, for the many-thread OTF2 rows (bench_load DIR --threads 16).
[ -x "$build/app/exposure-make-demo" ] && cp "$build/app/exposure-make-demo" "$out/bin/"
[ -x "$build/tests/bench/bench_load" ] && cp "$build/tests/bench/bench_load" "$out/bin/"
qtplugins=/usr/lib/$arch/qt6/plugins
if [ -x "$build/app/exposure" ] && [ -f "$qtplugins/platforms/libqoffscreen.so" ]; then
    cp "$build/app/exposure" "$out/bin/"
    mkdir -p "$out/plugins/platforms" "$out/plugins/imageformats" "$out/fonts"
    cp "$qtplugins/platforms/libqoffscreen.so" "$qtplugins/platforms/libqminimal.so" "$out/plugins/platforms/"
    cp "$qtplugins"/imageformats/*.so "$out/plugins/imageformats/" 2>/dev/null || true
    [ -d /usr/share/fonts/truetype/dejavu ] && cp /usr/share/fonts/truetype/dejavu/*.ttf "$out/fonts/"
    # Qt finds fonts through fontconfig: a configuration of its own, with the fonts beside it.
    cat >"$out/fonts.conf" <<'CONF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir prefix="relative">fonts</dir>
  <cachedir>/tmp/exposure-bundle-fontconfig</cachedir>
</fontconfig>
CONF
fi

have_mpi=false
if [ -x /usr/bin/orterun ] && [ -d /usr/lib/$arch/openmpi/lib/openmpi3 ]; then
    have_mpi=true
    cp /usr/bin/orterun "$out/ompi/bin/"
    ln -s orterun "$out/ompi/bin/mpirun"
    for c in /usr/lib/$arch/openmpi/lib/openmpi3/*.so; do
        case $(basename "$c") in
        *ucx* | *ofi* | *openib* | *psm* | *verbs* | *java* | *cuda*) continue ;;
        esac
        cp "$c" "$out/ompi/lib/$arch/openmpi/lib/openmpi3/"
    done
    cp -r /usr/share/openmpi "$out/ompi/share/"
    cp /usr/lib/$arch/pmix2/lib/pmix/*.so "$out/pmix2/lib/pmix/"
    [ -d /usr/lib/$arch/pmix2/share/pmix ] && cp -r /usr/lib/$arch/pmix2/share/pmix "$out/pmix2/share/"
    [ -d /usr/share/pmix ] && cp -r /usr/share/pmix "$out/pmix2/share/"
fi

# Every library any of these loads, but glibc's own.
list=$(mktemp)
for f in "$out"/bin/* "$out"/plugins/*/*.so "$out"/ompi/bin/orterun "$out"/ompi/lib/$arch/openmpi/lib/openmpi3/*.so "$out"/pmix2/lib/pmix/*.so; do
    [ -f "$f" ] || continue
    ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 }' >>"$list"
done
sort -u "$list" | while read -r lib; do
    case $(basename "$lib") in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) continue ;;
    esac
    cp -L "$lib" "$out/lib/"
done
rm -f "$list"
strip --strip-unneeded "$out"/bin/* "$out"/lib/*.so* "$out"/plugins/*/*.so 2>/dev/null || true
$have_mpi && strip --strip-unneeded "$out"/ompi/bin/orterun "$out"/ompi/lib/$arch/openmpi/lib/openmpi3/*.so \
    "$out"/pmix2/lib/pmix/*.so 2>/dev/null || true

cat >"$out/env.sh" <<'EOF'
# Source this file: the bundled exposure binaries, libraries and Open MPI runtime.
b=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
[ -n "${EXPOSURE_BUNDLE:-}" ] && b=$EXPOSURE_BUNDLE
export PATH="$b/ompi/bin:$b/bin:$PATH"
export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$b/ompi" PMIX_INSTALL_PREFIX="$b/pmix2"
export PMIX_MCA_mca_base_component_path="$b/pmix2/lib/pmix"
export QT_PLUGIN_PATH="$b/plugins" QT_QPA_PLATFORM=offscreen FONTCONFIG_FILE="$b/fonts.conf"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 PMIX_MCA_pcompress_base_silence_warning=1
EOF
du -sh "$out"
