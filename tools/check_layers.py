#!/usr/bin/env python3
"""Fails when a file includes what its module may not see (CONVENTIONS §1, §2).

Every module shares the include root src/, so the linker alone cannot stop `api` from
including `delivery/...`. This reads every #include under src/, in both the "..." and the
<...> form, and checks:

  layers   an include that lands in another module (written "x/...", <x/...>, or a relative
           path such as "../x/..." that resolves there) must name a module of the includer's
           allowed set (ALLOWED below: the same sets as the DEPS of each CMakeLists.txt);
  detail   it must not land in that module's detail/ folder, by whatever path;
  testing  from non-test code, it must not land in any testing/ folder, the module's own
           included (test code: *_test/*_pgtest/*_fuzz files, and the fakes in testing/);
  C libs   a C library header (C_LIBS below) may only be included by the one module that
           wraps that library, and only where the table says (c-ares in dns/detail/ only,
           SQLite under store/sqlite/ only, ...);
  public   a public header (a .hpp/.h not under a detail/ folder) includes no C library
           header, neither itself nor through the headers of its own module that it
           includes (its detail/ ones, say): use pimpl, or keep the C types in detail/
           headers that only .cpp files include (the one exception, from §1: crypto's
           public headers may mention OpenSSL).

A quoted include is resolved as the compiler does: against the including file's folder
first, then against the include root src/. An angle-bracket include is resolved against
src/ only when its first component is a module; <boost/...> and the like are left alone.

usage: check_layers.py SRC_DIR
"""
import os
import pathlib
import re
import sys

ALLOWED = {
    "core": set(),
    "crypto": {"core"},
    "dns": {"core"},
    "mail": {"core", "crypto"},
    "smtp": {"core", "crypto"},
    "http": {"core", "crypto"},
    "domain": {"core"},  # L2: the product's vocabulary and rules, no I/O
    "store": {"core", "domain", "mail"},
    "delivery": {"core", "crypto", "dns", "domain", "mail", "smtp", "store"},
    "webhooks": {"core", "crypto", "domain", "http", "store"},
    # dns: Verify Domain
    "api": {"core", "crypto", "dns", "domain", "mail", "smtp", "http", "store"},
    "app": {"core", "crypto", "dns", "domain", "mail", "smtp", "http", "store", "delivery",
            "webhooks", "api"},
}


class CLib:
    """A C library: the headers that belong to it and where they may be included."""

    def __init__(self, name, pattern, module, where=None, cpp_only=False, public_ok=False):
        self.name = name
        self.pattern = re.compile(pattern)  # matched against the whole include name
        self.module = module                # the one module that wraps the library
        self.where = where                  # if set: only under this folder (relative to src/)
        self.cpp_only = cpp_only            # only in .cpp files, not in any header
        self.public_ok = public_ok          # may appear in the module's public headers


C_LIBS = [
    CLib("SQLite", r"sqlite3(ext)?\.h", "store", where="store/sqlite/"),
    CLib("libpq", r"(libpq-fe|libpq-events|postgres_ext)\.h|libpq/.+", "store", where="store/pg/"),
    CLib("c-ares", r"ares(_[a-z_]+)?\.h", "dns", where="dns/detail/"),
    # crypto is the only module whose public headers may mention OpenSSL types (§1).
    CLib("OpenSSL", r"openssl/.+", "crypto", public_ok=True),
    # Asio's and Beast's TLS wrappers include <openssl/ssl.h> themselves, so they count as
    # OpenSSL too: a module other than crypto that includes them is listed in EXCEPTIONS.
    CLib("OpenSSL (through Asio/Beast SSL)", r"boost/(asio|beast)/ssl(\.hpp|/.+)", "crypto",
         public_ok=True),
    CLib("GMime", r"gmime/.+", "mail"),
    # GMime is built on GLib/GObject: its handles (GObj<T>, g_object_unref) are GLib's.
    CLib("GLib", r"(glib|glib-object|gio)(\.h|/.+)", "mail"),
    CLib("libcurl", r"curl/.+", "webhooks"),
    CLib("libidn2", r"idn2\.h", "mail"),
    CLib("gumbo", r"gumbo\.h", "mail"),
    # inbound SPF, DKIM and DMARC (mail/auth.cpp)
    CLib("libspf2", r"spf2/.+", "mail", cpp_only=True),
    CLib("libopendkim", r"opendkim/.+", "mail", cpp_only=True),
    CLib("libopendmarc", r"opendmarc/.+", "mail", cpp_only=True),
    CLib("simdjson", r"simdjson\.h", "api", cpp_only=True),
    # Not a C library, but a large header-only one kept the same way: the stored templates'
    # renderer (mail/template.cpp) is its only includer, and no header shows its types.
    CLib("kainjow/mustache", r"kainjow/.+", "mail", cpp_only=True),
]

# Includes of a C library outside what C_LIBS allows, each with its reason. Keyed by the
# including file (relative to src/) and the library's name. Exactly today's uses: a new one
# needs a line here and a reason. (No module but crypto includes <openssl/...> itself:
# webhooks signs with crypto/hash.hpp and lets libcurl do its own TLS, mail's DKIM signs
# with crypto/keys.hpp.)
EXCEPTIONS = {
    # smtp speaks STARTTLS on both sides. The session's stream (beast::ssl_stream) is an
    # Impl member in the .cpp; the contexts come ready-made from crypto/tls.hpp.
    ("smtp/client.cpp", "OpenSSL (through Asio/Beast SSL)"): "STARTTLS client stream",
    ("smtp/server.cpp", "OpenSSL (through Asio/Beast SSL)"): "STARTTLS server stream",
    # The public options carry the std::shared_ptr<asio::ssl::context> that crypto's
    # client_context()/server_context() make, so callers can share one context between
    # sessions. This drags <openssl/ssl.h> into every includer of these headers; a
    # forward declaration of boost::asio::ssl::context would do instead.
    ("smtp/client.hpp", "OpenSSL (through Asio/Beast SSL)"): "ClientOptions::tls_context",
    ("smtp/server.hpp", "OpenSSL (through Asio/Beast SSL)"): "ServerOptions::tls",
    # The server's tests speak STARTTLS as its clients do, through an Asio SSL stream.
    ("smtp/server_test.cpp", "OpenSSL (through Asio/Beast SSL)"): "the test's TLS client",
}

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)
SOURCE_SUFFIXES = (".hpp", ".cpp", ".h")


def c_lib_of(name: str):
    for lib in C_LIBS:
        if lib.pattern.fullmatch(name):
            return lib
    return None


def is_test_code(rel: pathlib.PurePosixPath) -> bool:
    """Unit tests, and the fakes under a testing/ folder that only test targets link."""
    return rel.stem.endswith(("_test", "_pgtest", "_fuzz")) or "testing" in rel.parts[1:-1]


def is_public_header(rel: pathlib.PurePosixPath) -> bool:
    return rel.suffix in (".hpp", ".h") and "detail" not in rel.parts[1:-1]


def resolve(src: pathlib.Path, path: pathlib.Path, name: str, quoted: bool):
    """Where an include lands, relative to src/ (a PurePosixPath, possibly starting with
    '..' when it climbs out of src/), or None when it is not one of ours."""
    root = os.path.abspath(src)
    here = os.path.dirname(os.path.abspath(path))
    first = name.split("/", 1)[0]
    if quoted:
        beside = os.path.normpath(os.path.join(here, name))
        if first in (".", "..") or os.path.exists(beside):
            target = beside
        else:
            target = os.path.normpath(os.path.join(root, name))
    elif first in ALLOWED:
        target = os.path.normpath(os.path.join(root, name))
    else:
        return None
    return pathlib.PurePosixPath(os.path.relpath(target, root).replace(os.sep, "/"))


class Include:
    """One #include line: its name as written, its line, and where it lands."""

    def __init__(self, src, path, match, text):
        self.quoted = match.group(1) is not None
        self.name = match.group(1) if self.quoted else match.group(2)
        self.line = text.count("\n", 0, match.start()) + 1
        self.spelled = f'"{self.name}"' if self.quoted else f"<{self.name}>"
        self.lib = c_lib_of(self.name)
        self.target = None if self.lib else resolve(src, path, self.name, self.quoted)


def includes(src: pathlib.Path, path: pathlib.Path, _cache={}) -> list[Include]:
    key = (os.path.abspath(src), os.path.abspath(path))
    if key not in _cache:
        text = path.read_text(encoding="utf-8", errors="replace")
        _cache[key] = [Include(src, path, m, text) for m in INCLUDE.finditer(text)]
    return _cache[key]


def c_lib_problem(rel, inc) -> str | None:
    module, lib = rel.parts[0], inc.lib
    if (str(rel), lib.name) in EXCEPTIONS:
        return None
    if module != lib.module:
        return f"{inc.spelled} ({lib.name}) belongs to {lib.module}; {module} may not include it"
    if lib.where and not str(rel).startswith(lib.where):
        return f"{inc.spelled} ({lib.name}) may only be included under {lib.where}"
    if lib.cpp_only and rel.suffix != ".cpp":
        return f"{inc.spelled} ({lib.name}) may only be included in a .cpp file"
    if is_public_header(rel) and not lib.public_ok:
        return f"public header includes {inc.spelled} ({lib.name}); keep it in detail/ or a .cpp"
    return None


def leaks(src: pathlib.Path, path: pathlib.Path, rel) -> list[str]:
    """A public header must not reach a C library header through the headers of its own
    module that it includes (a detail/ header, say): what they include, it includes. A
    public header on the way answers for its own includes; other modules' public headers
    are checked on their own."""
    module = rel.parts[0]
    problems, seen = [], {rel}
    for first in includes(src, path):
        if first.target is None or first.target.parts[0] != module or first.target in seen:
            continue
        stack = [(first.target, [first.target])]
        while stack:
            here, chain = stack.pop()
            seen.add(here)
            file = src / here
            if not file.is_file():
                continue
            for inc in includes(src, file):
                if inc.lib is not None:
                    lib = inc.lib
                    excused = (str(here), lib.name) in EXCEPTIONS or is_public_header(here)
                    if not excused and not (lib.public_ok and lib.module == module):
                        through = " > ".join(str(c) for c in chain)
                        problems.append(f"{path}:{first.line}: public header reaches "
                                        f"{inc.spelled} ({lib.name}) through {through}")
                elif (inc.target is not None and inc.target.parts[0] == module
                      and inc.target not in seen):
                    stack.append((inc.target, chain + [inc.target]))
    return problems


def check_file(src: pathlib.Path, path: pathlib.Path) -> list[str]:
    rel = pathlib.PurePosixPath(path.relative_to(src).as_posix())
    module = rel.parts[0]
    if module not in ALLOWED:
        return [f"{path}: module '{module}' is not in the layer table"]
    problems = []
    for inc in includes(src, path):
        where, spelled, target = f"{path}:{inc.line}", inc.spelled, inc.target
        if inc.lib is not None:
            problem = c_lib_problem(rel, inc)
            if problem:
                problems.append(f"{where}: {problem}")
            continue
        if target is None:
            continue
        if target.parts[0] == "..":
            problems.append(f"{where}: {spelled} resolves outside src/ ({target})")
            continue
        owner = target.parts[0]
        inner = target.parts[1:-1]
        via = "" if str(target) == inc.name else f" (resolves to {target})"
        if owner == module:
            # A module's own fakes are test code too: production code never includes them.
            if "testing" in inner and not is_test_code(rel):
                problems.append(f"{where}: non-test code includes {spelled}{via}")
            continue
        if owner not in ALLOWED:
            if "/" in inc.name:  # "foo.h" without a folder may be a system header
                problems.append(f"{where}: includes {spelled}, an unknown module")
            continue
        if owner not in ALLOWED[module]:
            problems.append(f"{where}: {module} may not include {owner} ({spelled}{via})")
        elif "detail" in inner:
            problems.append(f"{where}: includes the private header {spelled}{via}")
        elif "testing" in inner and not is_test_code(rel):
            problems.append(f"{where}: non-test code includes {spelled}{via}")
    if is_public_header(rel):
        problems += leaks(src, path, rel)
    return problems


def check(src: pathlib.Path) -> list[str]:
    problems = []
    for path in sorted(src.rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and path.is_file():
            problems += check_file(src, path)
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = pathlib.Path(sys.argv[1])
    problems = check(src)
    for p in problems:
        print(p)
    files = sum(1 for p in src.rglob("*") if p.suffix in SOURCE_SUFFIXES)
    print(f"check_layers: {files} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
