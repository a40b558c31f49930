#!/usr/bin/env python3
"""Fails when a file includes a module outside its allowed layers (CONVENTIONS §1).

Every module shares the include root src/, so the linker alone cannot stop `api` from
including `delivery/...`. This reads every #include "module/..." under src/ and checks it
against the table below (the same sets as the DEPS of each module's CMakeLists.txt). It
also refuses includes of another module's detail/ or testing/ headers from non-test code.

usage: check_layers.py SRC_DIR
"""
import pathlib
import re
import sys

ALLOWED = {
    "core": set(),
    "crypto": {"core"},
    "dns": {"core"},
    "domain": {"core"},
    "mail": {"core", "crypto"},
    "smtp": {"core", "crypto"},
    "http": {"core", "crypto"},
    "store": {"core", "domain", "mail"},
    "delivery": {"core", "crypto", "dns", "domain", "mail", "smtp", "store"},
    "webhooks": {"core", "crypto", "domain", "http", "store"},
    "api": {"core", "crypto", "dns", "domain", "mail", "smtp", "http", "store"},  # dns: Verify Domain
    "app": {"core", "crypto", "dns", "domain", "mail", "smtp", "http", "store", "delivery", "webhooks", "api"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)


def check(src: pathlib.Path) -> list[str]:
    problems = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".h") or not path.is_file():
            continue
        module = path.relative_to(src).parts[0]
        if module not in ALLOWED:
            problems.append(f"{path}: module '{module}' is not in the layer table")
            continue
        is_test = path.stem.endswith(("_test", "_pgtest", "_fuzz"))
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in INCLUDE.finditer(text):
            target, rest = match.group(1), match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            where = f"{path}:{line}"
            if target == module:
                continue
            if target not in ALLOWED:
                problems.append(f'{where}: includes "{target}/{rest}", an unknown module')
            elif target not in ALLOWED[module]:
                problems.append(f'{where}: {module} may not include {target} ("{target}/{rest}")')
            elif rest.startswith("detail/") or "/detail/" in rest:
                problems.append(f'{where}: includes the private header "{target}/{rest}"')
            elif (rest.startswith("testing/") or "/testing/" in rest) and not is_test:
                problems.append(f'{where}: non-test code includes "{target}/{rest}"')
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = pathlib.Path(sys.argv[1])
    problems = check(src)
    for p in problems:
        print(p)
    files = sum(1 for p in src.rglob("*") if p.suffix in (".hpp", ".cpp"))
    print(f"check_layers: {files} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
