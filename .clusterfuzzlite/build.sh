#!/bin/bash -eu
# Builds the fuzz targets and copies them (with their seed corpora) to $OUT. In the
# ClusterFuzzLite image $SRC and $OUT are set and cargo-fuzz is on nightly; run locally it
# defaults them (repo = this checkout, OUT=/tmp/cflite-out) and uses stable `-s none` when no
# nightly toolchain is installed:  .clusterfuzzlite/build.sh
here="$(cd "$(dirname "$0")/.." && pwd)"
SRC="${SRC:-$(dirname "$here")}"
OUT="${OUT:-/tmp/cflite-out}"
repo="$SRC/gangway"
[ -d "$repo/fuzz" ] || repo="$here"
mkdir -p "$OUT"
cd "$repo"

if [ -n "${SANITIZER:-}" ] || rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  # The OSS-Fuzz image's default toolchain is nightly; locally ask for it by name.
  if [ -z "${SANITIZER:-}" ]; then fuzz=(cargo +nightly fuzz); else fuzz=(cargo fuzz); fi
  "${fuzz[@]}" build -O
else
  fuzz=(cargo fuzz)
  "${fuzz[@]}" build -O -s none
fi

release=fuzz/target/x86_64-unknown-linux-gnu/release
for target in $("${fuzz[@]}" list); do
  cp "$release/$target" "$OUT/"
  if [ -d "fuzz/seeds/$target" ]; then
    # ClusterFuzzLite picks up <target>_seed_corpus.zip beside the binary.
    (cd "fuzz/seeds/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
done
echo "built into $OUT: $(ls "$OUT" | tr '\n' ' ')"
