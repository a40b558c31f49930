#!/usr/bin/env python3
"""Fails when a C++ file under src/ or tests/ differs from .clang-format. Never rewrites.

usage: check_format.py CLANG_FORMAT REPO_DIR
"""
import pathlib
import subprocess
import sys


def main() -> int:
    clang_format, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    files = [p for d in ("src", "tests") for p in (repo / d).rglob("*")
             if p.suffix in (".hpp", ".cpp", ".h") and p.is_file()]
    bad = []
    for f in sorted(files):
        r = subprocess.run([clang_format, "--dry-run", "--Werror", f"--style=file:{repo / '.clang-format'}", str(f)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(str(f.relative_to(repo)))
    for b in bad:
        print(f"not formatted: {b}   (fix: {clang_format} -i {b})")
    print(f"check_format: {len(files)} files, {len(bad)} not formatted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
