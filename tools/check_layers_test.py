#!/usr/bin/env python3
"""The layer check must fail on a violation, not only pass on a clean tree.

Each case is a fake src/ tree in a temporary folder and the exit status check_layers.py
must give for it. Where a case fails, it also names the text the complaint must contain, so
that a tree failing for some other reason does not pass the case.
"""
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


def inc(name: str) -> str:
    return f"#include {name}\n"


# A tree that breaks none of the rules and uses every thing they allow.
CLEAN = {
    "core/result.hpp": "",
    "core/testing/manual_clock.hpp": inc('"core/result.hpp"'),
    "crypto/tls.hpp": inc("<boost/asio/ssl/context.hpp>") + inc("<openssl/ssl.h>"),
    "crypto/tls.cpp": inc('"crypto/tls.hpp"') + inc("<openssl/evp.h>"),
    "dns/resolver.hpp": inc("<string>") + inc('"core/result.hpp"'),
    "dns/detail/ares.hpp": inc("<ares.h>") + inc("<ares_dns_record.h>"),
    "dns/detail/ares.cpp": inc('"ares.hpp"') + inc('"../resolver.hpp"'),
    "dns/cares_resolver.cpp": inc('"dns/detail/ares.hpp"') + inc('"detail/ares.hpp"'),
    "dns/testing/static_resolver.hpp": inc('"dns/resolver.hpp"')
                                       + inc('"core/testing/manual_clock.hpp"'),
    "dns/testing/static_resolver.cpp": inc('"dns/testing/static_resolver.hpp"')
                                       + inc('"dns/detail/ares.hpp"'),
    "mail/message.hpp": inc('"core/result.hpp"'),
    "mail/detail/gmime.hpp": inc("<gmime/gmime.h>") + inc("<glib.h>"),
    "mail/message.cpp": inc('"mail/detail/gmime.hpp"') + inc("<idn2.h>") + inc("<gumbo.h>"),
    "smtp/client.hpp": inc("<boost/asio/ssl/context.hpp>") + inc('"crypto/tls.hpp"'),
    "smtp/client.cpp": inc("<boost/beast/ssl/ssl_stream.hpp>"),
    "smtp/server.hpp": inc("<boost/asio/ssl/context.hpp>"),
    "smtp/server.cpp": inc("<boost/beast/ssl/ssl_stream.hpp>"),
    "store/store.hpp": inc('"domain/model.hpp"') + inc('"mail/message.hpp"'),
    "store/sqlite/sqlite_store.cpp": inc("<sqlite3.h>") + inc('"store/sqlite/detail/db.hpp"'),
    "store/sqlite/detail/db.hpp": inc('"sqlite3.h"'),
    "store/sqlite/detail/testing/hooked_vfs.hpp": inc("<sqlite3.h>"),
    "store/sqlite/detail/writer_test.cpp": inc('"store/sqlite/detail/testing/hooked_vfs.hpp"'),
    "store/pg/pg_store.cpp": inc("<libpq-fe.h>"),
    "domain/model.hpp": inc('"core/result.hpp"'),
    "webhooks/http_client.cpp": inc("<curl/curl.h>"),
    "api/detail/json_body.cpp": inc("<simdjson.h>"),
    "api/emails.hpp": inc('"api/detail/context.hpp"') + inc('"domain/model.hpp"'),
    "api/detail/context.hpp": inc('"store/store.hpp"'),
    "app/main.cpp": inc("<smtp/client.hpp>") + inc('"../api/emails.hpp"'),
    "app/serve_test.cpp": inc('"dns/testing/static_resolver.hpp"'),
}


def main() -> int:
    cases = [
        # name, files, exit status, text the complaint must hold
        ("clean tree", CLEAN, 0, ""),
        # --- layers (existing rules)
        ("same module", {"api/a.cpp": inc('"store/store.hpp"')}, 0, ""),
        ("api never calls delivery", {"api/a.cpp": inc('"delivery/queue.hpp"')}, 1,
         "api may not include delivery"),
        ("core is the bottom", {"core/a.hpp": inc('"store/store.hpp"')}, 1, "core may not"),
        ("same layer", {"dns/a.cpp": inc('"mail/address.hpp"')}, 1, "dns may not include mail"),
        ("domain: only core", {"domain/a.hpp": inc('"store/store.hpp"')}, 1,
         "domain may not include store"),
        ("domain: store may", {"store/a.hpp": inc('"domain/model.hpp"')}, 0, ""),
        ("unknown module", {"api/a.cpp": inc('"nosuch/x.hpp"')}, 1, "unknown module"),
        ("file outside the table", {"nosuch/a.cpp": ""}, 1, "not in the layer table"),
        ("private header", {"api/a.cpp": inc('"store/sqlite/detail/db.hpp"')}, 1, "private"),
        ("testing from production", {"app/a.cpp": inc('"dns/testing/static_resolver.hpp"')}, 1,
         "non-test code"),
        ("testing from a test", {"app/a_test.cpp": inc('"dns/testing/static_resolver.hpp"')},
         0, ""),
        # --- layers and detail/testing, reached by other paths
        ("layer, relative", {"api/a.cpp": inc('"../delivery/queue.hpp"')}, 1,
         "api may not include delivery"),
        ("layer, angle brackets", {"api/a.cpp": inc("<delivery/queue.hpp>")}, 1,
         "api may not include delivery"),
        ("detail, angle brackets", {"api/a.cpp": inc("<smtp/detail/command.hpp>")}, 1, "private"),
        ("detail, ../", {"api/a.cpp": inc('"../smtp/detail/command.hpp"')}, 1, "private"),
        ("detail, ../../", {"store/sqlite/a.cpp": inc('"../../mail/detail/gmime.hpp"')}, 1,
         "private"),
        ("detail, through another folder", {"api/a.cpp": inc('"core/../smtp/detail/command.hpp"')},
         1, "private"),
        ("detail, from a detail/ folder",
         {"api/detail/a.cpp": inc('"../detail/x.hpp"'), "api/detail/x.hpp": "",
          "api/b.cpp": inc('"detail/../../smtp/detail/command.hpp"'),
          "smtp/detail/command.hpp": ""}, 1, "resolves to smtp/detail"),
        ("own detail, relative", {"smtp/a.cpp": inc('"detail/command.hpp"'),
                                  "smtp/detail/command.hpp": ""}, 0, ""),
        ("own detail, ../", {"smtp/detail/a.cpp": inc('"../detail/command.hpp"')}, 0, ""),
        ("beside the file, not the root", {"api/a.cpp": inc('"store/x.hpp"'),
                                            "api/store/x.hpp": ""}, 0, ""),
        ("out of src/", {"api/a.cpp": inc('"../../tests/support/x.hpp"')}, 1, "outside src/"),
        ("testing, relative", {"app/a.cpp": inc('"../dns/testing/static_resolver.hpp"')}, 1,
         "non-test code"),
        ("own testing from production", {"dns/a.cpp": inc('"dns/testing/static_resolver.hpp"')},
         1, "non-test code"),
        ("testing from testing", {"store/testing/fake.hpp": inc('"core/testing/manual_clock.hpp"')},
         0, ""),
        # --- C library headers outside their owner module, or outside their folder
        ("SQLite outside store", {"api/a.cpp": inc("<sqlite3.h>")}, 1, "belongs to store"),
        ("SQLite, quoted", {"delivery/a.cpp": inc('"sqlite3.h"')}, 1, "belongs to store"),
        ("SQLite outside store/sqlite/", {"store/a.cpp": inc("<sqlite3.h>")}, 1, "store/sqlite/"),
        ("SQLite in store/pg/", {"store/pg/a.cpp": inc("<sqlite3.h>")}, 1, "store/sqlite/"),
        ("libpq outside store", {"app/a.cpp": inc("<libpq-fe.h>")}, 1, "belongs to store"),
        ("libpq outside store/pg/", {"store/sqlite/a.cpp": inc("<libpq-fe.h>")}, 1, "store/pg/"),
        ("c-ares outside dns", {"delivery/a.cpp": inc("<ares.h>")}, 1, "belongs to dns"),
        ("c-ares outside dns/detail/", {"dns/cares_resolver.cpp": inc("<ares.h>")}, 1,
         "dns/detail/"),
        ("c-ares, other header", {"dns/a.cpp": inc("<ares_dns_record.h>")}, 1, "dns/detail/"),
        ("OpenSSL outside crypto", {"webhooks/a.cpp": inc("<openssl/hmac.h>")}, 1,
         "belongs to crypto"),
        ("OpenSSL in smtp", {"smtp/client.cpp": inc("<openssl/ssl.h>")}, 1, "belongs to crypto"),
        ("Asio SSL outside crypto", {"http/a.hpp": inc("<boost/asio/ssl.hpp>")}, 1,
         "belongs to crypto"),
        ("Beast SSL, a new smtp file", {"smtp/detail/tls.cpp": inc("<boost/beast/ssl.hpp>")}, 1,
         "belongs to crypto"),
        ("GMime outside mail", {"api/a.cpp": inc("<gmime/gmime.h>")}, 1, "belongs to mail"),
        ("GLib outside mail", {"store/a.cpp": inc("<glib-object.h>")}, 1, "belongs to mail"),
        ("curl outside webhooks", {"delivery/a.cpp": inc("<curl/curl.h>")}, 1,
         "belongs to webhooks"),
        ("idn2 outside mail", {"smtp/a.cpp": inc('"idn2.h"')}, 1, "belongs to mail"),
        ("gumbo outside mail", {"api/a.cpp": inc("<gumbo.h>")}, 1, "belongs to mail"),
        ("simdjson outside api", {"http/a.cpp": inc("<simdjson.h>")}, 1, "belongs to api"),
        ("simdjson in a header", {"api/detail/json.hpp": inc("<simdjson.h>")}, 1, ".cpp"),
        # --- a public header includes no C library header
        ("public: GMime", {"mail/message.hpp": inc("<gmime/gmime.h>")}, 1, "public header"),
        ("public: SQLite", {"store/sqlite/sqlite_store.hpp": inc("<sqlite3.h>")}, 1,
         "public header"),
        ("public: curl", {"webhooks/http_client.hpp": inc("<curl/curl.h>")}, 1, "public header"),
        ("public: testing/ is public", {"dns/testing/fake.hpp": inc("<ares.h>")}, 1, "dns/detail/"),
        ("public: through its own detail/",
         {"mail/message.hpp": inc('"mail/detail/gmime.hpp"'),
          "mail/detail/gmime.hpp": inc('"mail/detail/glue.hpp"'),
          "mail/detail/glue.hpp": inc("<gmime/gmime.h>")}, 1,
         "reaches <gmime/gmime.h> (GMime) through mail/detail/gmime.hpp > mail/detail/glue.hpp"),
        ("public: detail/ without C headers",
         {"api/emails.hpp": inc('"api/detail/context.hpp"'), "api/detail/context.hpp": ""}, 0, ""),
        ("public: crypto may show OpenSSL", {"crypto/tls.hpp": inc("<openssl/ssl.h>")}, 0, ""),
    ]
    failures = 0
    for name, files, want, says in cases:
        r = run(files)
        if r.returncode != want or says not in r.stdout:
            failures += 1
            print(f"FAIL {name}: exit {r.returncode}, want {want}"
                  + (f", output lacks {says!r}" if says not in r.stdout else ""))
            print("  " + r.stdout.replace("\n", "\n  "))
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
