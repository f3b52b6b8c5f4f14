#!/bin/bash -eu
# Builds every cargo-fuzz target (`cargo fuzz list`) and copies each to $OUT with what
# ClusterFuzzLite picks up beside a binary: <target>_seed_corpus.zip (the committed seeds and
# regressions), <target>.dict and <target>.options when fuzz/ has them.
#
# In the ClusterFuzzLite image (.clusterfuzzlite/Dockerfile) $SRC, $OUT and $SANITIZER are set,
# the toolchain is nightly and `cargo` is OSS-Fuzz's wrapper, which turns `cargo fuzz build`
# into a `-Cinstrument-coverage` build when SANITIZER=coverage. Run locally
# (`.clusterfuzzlite/build.sh`), OUT defaults to /tmp/cflite-out and the build goes to its own
# target directory (CFLITE_TARGET_DIR, default fuzz/target/cflite); with a nightly toolchain it
# is the AddressSanitizer build ClusterFuzzLite makes, without one stable `-s none`.
#
# As .ci/fuzz builds: coverage feedback only in the core (RUSTC_WRAPPER=.ci/fuzz-rustc; the
# sanitizer still instruments every crate), debug assertions kept (an overflow is a finding),
# no comparison tracing; but optimized (-O), as ClusterFuzzLite's Rust builds are.

here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -f "$here/fuzz/Cargo.toml" ]; then
  repo="$here"                 # run from the checkout
elif [ -f "$PWD/fuzz/Cargo.toml" ]; then
  repo="$PWD"                  # the image: WORKDIR $SRC/gangway, build.sh copied to $SRC
else
  repo="${SRC:?}/gangway"
fi
cd "$repo"
OUT="${OUT:-/tmp/cflite-out}"
mkdir -p "$OUT"
export RUSTC_WRAPPER="$repo/.ci/fuzz-rustc"

# No comparison tracing, as .ci/fuzz: inputs are small indexes taken modulo (fuzz/README.md).
build=(-O --debug-assertions --no-trace-compares)
if [ -n "${SANITIZER:-}" ] && [ -d /rust ]; then
  # The image (/rust is its CARGO_HOME): its default toolchain is nightly, and the wrapper
  # needs the target directory cargo metadata names, so no --target-dir.
  fuzz=(cargo fuzz)
  list=(env SANITIZER= cargo fuzz list) # the wrapper would take `fuzz list` for a coverage build
  local_run=false
else
  if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
  else
    fuzz=(cargo fuzz)
    if [ "${SANITIZER:-none}" != none ]; then
      echo "no nightly toolchain: sanitizer $SANITIZER needs one; using none" >&2
    fi
    SANITIZER=none
  fi
  list=("${fuzz[@]}" list)
  target_dir="${CFLITE_TARGET_DIR:-fuzz/target/cflite}"
  build+=(--target-dir "$target_dir")
  local_run=true
fi
case "${SANITIZER:-address}" in
  address | memory) build+=(-s "${SANITIZER:-address}") ;;
  coverage) ;; # the image's cargo wrapper makes the coverage build
  *) build+=(-s none) ;; # none; ClusterFuzzLite has only ASan for Rust
esac

echo "building: ${fuzz[*]} build ${build[*]}"
"${fuzz[@]}" build "${build[@]}"

if $local_run; then
  bin_dir="$target_dir/$(rustc -vV | sed -n 's/^host: //p')/release"
else
  bin_dir="$(cargo metadata --manifest-path fuzz/Cargo.toml --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/x86_64-unknown-linux-gnu/release"
fi

seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
targets=()
for target in $("${list[@]}"); do
  targets+=("$target")
  cp "$bin_dir/$target" "$OUT/"
  # One flat seed corpus: the seeds, then the regressions (prefixed, so no name is taken twice).
  rm -rf "${seeds:?}"/* "$OUT/${target}_seed_corpus.zip"
  if [ -d "fuzz/seeds/$target" ]; then
    cp fuzz/seeds/"$target"/* "$seeds/" 2>/dev/null || true
  fi
  if [ -d "fuzz/regressions/$target" ]; then
    for input in fuzz/regressions/"$target"/*; do
      [ -f "$input" ] && cp "$input" "$seeds/regression-$(basename "$input")"
    done
  fi
  if [ -n "$(ls -A "$seeds")" ]; then
    if command -v zip >/dev/null; then
      (cd "$seeds" && zip -q -j "$OUT/${target}_seed_corpus.zip" ./*)
    else
      python3 -m zipfile -c "$OUT/${target}_seed_corpus.zip" "$seeds"/*
    fi
  fi
  for extra in dict options; do
    if [ -f "fuzz/$target.$extra" ]; then
      cp "fuzz/$target.$extra" "$OUT/$target.$extra"
    fi
  done
done
if [ "${#targets[@]}" -eq 0 ]; then
  echo "no fuzz targets listed by ${list[*]}" >&2
  exit 1
fi
echo "built into $OUT: ${targets[*]}"
find "$OUT" -maxdepth 1 -type f -printf '  %f %s bytes\n' | sort
