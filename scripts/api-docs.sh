#!/usr/bin/env bash
# The library documentation: one DocC archive per library product, from its doc comments and its
# catalog (Sources/<Product>/<Product>.docc: the overview article and the topic groups).
#
#   scripts/api-docs.sh MODULES_DIR OUTPUT_DIR     (make api-docs; make test checks it)
#
# MODULES_DIR is a build's Modules directory (make's release build: $(OUT)/release/Modules): the
# symbol graphs are extracted from the built modules (swift-symbolgraph-extract, about a second
# each), so no second build is made. DocC runs with --warnings-as-errors: a link to a symbol that
# does not exist, or a topic that names none, fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=${1:?usage: scripts/api-docs.sh MODULES_DIR OUTPUT_DIR}
output=${2:?usage: scripts/api-docs.sh MODULES_DIR OUTPUT_DIR}
toolchain=$(dirname "$(readlink -f "$(command -v "${SWIFT:-swift}")")")
build=$(dirname "$modules")
products=$(sed -n 's/^ *\.library(name: "\([A-Za-z]*\)".*/\1/p' Package.swift)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$output"
maps=()
for map in "$build"/*.build/module.modulemap; do maps+=(-Xcc "-fmodule-map-file=$map"); done
for product in $products; do
  catalog=Sources/$product/$product.docc
  [ -d "$catalog" ] || { echo "api-docs: $product has no catalog ($catalog)" >&2; exit 1; }
  mkdir -p "$work/$product"
  "$toolchain/swift-symbolgraph-extract" -module-name "$product" -target "$(uname -m)-unknown-linux-gnu" -I "$modules" "${maps[@]}" \
    -output-dir "$work/$product" -minimum-access-level public
  "$toolchain/docc" convert "$catalog" --additional-symbol-graph-dir "$work/$product" \
    --output-path "$output/$product.doccarchive" --fallback-display-name "$product" \
    --fallback-bundle-identifier "org.fr-profile.$product" --warnings-as-errors >"$work/$product.log" 2>&1 ||
    { cat "$work/$product.log" >&2; echo "api-docs: $product: DocC failed" >&2; exit 1; }
  echo "api-docs: $output/$product.doccarchive"
done
