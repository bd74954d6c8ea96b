# The preamble of the benches that build a C driver against the library (ocr_small_bench.sh,
# stt_hints_bench.sh). Source it from the repository root, after parsing arguments.

# bench_setup NAME FILE TOOL...: exit 2 unless run from the repository root (FILE and the
# Makefile there) with every TOOL found; then $tmp is a fresh directory, removed on exit.
bench_setup() {
    local name=$1 file=$2 tool
    shift 2
    if [[ ! -f $file || ! -f Makefile ]]; then
        echo "$name: run from the repository root" >&2
        exit 2
    fi
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null; then
            echo "$name: '$tool': not found (scripts/install-deps.sh installs it)" >&2
            exit 2
        fi
    done
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
}

# bench_lib NAME: build build/rel/libvidtheque.a, or show the build's output and exit 1.
bench_lib() {
    if ! make -s build/rel/libvidtheque.a >"$tmp/make.log" 2>&1; then
        cat "$tmp/make.log" >&2
        echo "$1: cannot build build/rel/libvidtheque.a" >&2
        exit 1
    fi
}
