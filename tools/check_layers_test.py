#!/usr/bin/env python3
"""The layer check must fail on a violation, not only pass on a clean tree."""
import pathlib
import subprocess
import sys
import tempfile

CHECK = pathlib.Path(__file__).with_name("check_layers.py")


def run(files: dict[str, str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            p = pathlib.Path(d, name)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        return subprocess.run([sys.executable, str(CHECK), d], capture_output=True, text=True)


def main() -> int:
    cases = [
        ({"api/a.cpp": '#include "store/store.hpp"\n'}, 0),
        ({"api/a.cpp": '#include "delivery/queue.hpp"\n'}, 1),       # api never calls delivery
        ({"core/a.hpp": '#include "store/store.hpp"\n'}, 1),         # core is the bottom
        ({"dns/a.cpp": '#include "mail/address.hpp"\n'}, 1),         # same layer
        ({"api/a.cpp": '#include "store/sqlite/detail/db.hpp"\n'}, 1),  # private header
        ({"app/a.cpp": '#include "dns/testing/static_resolver.hpp"\n'}, 1),
        ({"app/a_test.cpp": '#include "dns/testing/static_resolver.hpp"\n'}, 0),
    ]
    failures = 0
    for files, want in cases:
        got = run(files).returncode
        if got != want:
            failures += 1
            print(f"FAIL {files}: exit {got}, want {want}")
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
