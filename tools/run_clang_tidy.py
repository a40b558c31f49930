#!/usr/bin/env python3
"""The `tidy` test: clang-tidy (the repository's .clang-tidy) over the translation units of
src/ in a build's compile_commands.json, N at a time. Fails when clang-tidy reports anything.

  run_clang_tidy.py CLANG_TIDY BUILD_DIR SOURCE_DIR [-j N] [FILE ...]

Left out: the test files (*_test.cpp, and *_pgtest.cpp, the tests that need a PostgreSQL
server) and the TUs that only compile a library (Asio, Beast and
Asio's SSL, core/asio_impl.cpp and the like); tests/ (the fuzz targets) is not under src/.
Our headers are checked through the files that include them (HeaderFilterRegex).
FILE ... narrows the run to those files (paths relative to SOURCE_DIR or absolute)."""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

# Translation units that hold nothing of ours but a library's implementation.
LIBRARY_TUS = {"src/core/asio_impl.cpp", "src/core/beast_impl.cpp",
               "src/crypto/detail/asio_ssl_impl.cpp"}


def selected(source_dir: pathlib.Path, build_dir: pathlib.Path) -> list[pathlib.Path]:
    with open(build_dir / "compile_commands.json") as f:
        entries = json.load(f)
    files = set()
    for e in entries:
        path = pathlib.Path(e["directory"], e["file"]).resolve()
        try:
            rel = path.relative_to(source_dir).as_posix()
        except ValueError:
            continue
        if not rel.startswith("src/") or rel in LIBRARY_TUS or rel.endswith(("_test.cpp", "_pgtest.cpp")):
            continue
        files.add(path)
    return sorted(files)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("clang_tidy")
    ap.add_argument("build_dir", type=pathlib.Path)
    ap.add_argument("source_dir", type=pathlib.Path)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("files", nargs="*")
    args = ap.parse_intermixed_args()
    source_dir = args.source_dir.resolve()
    build_dir = args.build_dir.resolve()

    files = selected(source_dir, build_dir)
    if args.files:
        wanted = {(source_dir / f).resolve() for f in args.files}
        files = [f for f in files if f in wanted]

    def run(path: pathlib.Path):
        start = time.monotonic()
        # The build's flags are GCC's: clang does not know some of its -Wno-* options.
        r = subprocess.run([args.clang_tidy, "--quiet", "-p", str(build_dir),
                            "--extra-arg=-Wno-unknown-warning-option", str(path)],
                           capture_output=True, text=True)
        return path, r.returncode, r.stdout, time.monotonic() - start

    failed = []
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        for path, rc, out, secs in pool.map(run, files):
            rel = path.relative_to(source_dir)
            print(f"{rel}: {secs:.1f}s{'' if rc == 0 else ' FAILED'}", flush=True)
            if rc != 0:
                failed.append(rel)
                sys.stdout.write(out)
    print(f"clang-tidy: {len(files)} files in {time.monotonic() - start:.0f}s, "
          f"{len(failed)} with findings")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
