#include "app/commands.hpp"

#include <fmt/format.h>

#include <iostream>

#include "api/keys.hpp"
#include "app/store_open.hpp"
#include "core/block_on.hpp"
#include "core/clock.hpp"
#include "core/id.hpp"
#include "domain/api_keys.hpp"

namespace posthorn::app {
namespace {

// Every command but `account create` works on an install that exists: a wrong --config or
// data_dir must not leave an empty database behind, nor answer from one.
std::unique_ptr<store::Store> open_or_die(const Config& config,
                                          OpenMode mode = OpenMode::existing) {
    auto s = open_store(config, 1, mode);
    if (!s && s.error() == store::errc::no_schema) {
        std::cerr << "posthorn: " << no_database_message(config) << "\n";
        std::exit(1);  // NOLINT(concurrency-mt-unsafe): the CLI runs no other thread
    }
    if (!s) {
        std::cerr << "posthorn: cannot open the database: " << s.error().message() << "\n";
        std::exit(1);  // NOLINT(concurrency-mt-unsafe): the CLI runs no other thread
    }
    return std::move(*s);
}

int fail(const std::string& what) {
    std::cerr << "posthorn: " << what << "\n";
    return 1;
}

}  // namespace

int account_create(const Config& config, const std::string& name) {
    if (name.empty() || name.size() > 200) return fail("an account name has 1 to 200 characters");
    auto store = open_or_die(config, OpenMode::create);  // the first command of an install
    core::SystemClock clock;
    const auto now = clock.now_ms();
    store::Account a{.id = new_id("acc_", now), .name = name, .created_at = now};
    auto r = block_on(store->create_account(a));
    if (!r) {
        if (r.error() == store::errc::conflict)
            return fail("account '" + name + "' exists already");
        return fail("cannot create the account: " + r.error().message());
    }
    std::cout << a.id << "\n";
    return 0;
}

int key_create(const Config& config, const std::string& account_name, bool test) {
    auto store = open_or_die(config);
    auto account = block_on(store->find_account_by_name(account_name));
    if (!account) return fail("no account named '" + account_name + "'");
    core::SystemClock clock;
    const auto now = clock.now_ms();
    auto k = api::generate_api_key();
    store::ApiKey row{.id = new_id("key_", now),
                      .account_id = account->id,
                      .prefix = k.prefix,
                      .hash = k.hash,
                      .created_at = now,
                      .permission = domain::KeyPermission::full,  // the operator's: full
                      .test = test};
    if (auto r = block_on(store->create_api_key(row)); !r)
        return fail("cannot create the key: " + r.error().message());
    std::cout << "key id: " << row.id << " (account " << account->name
              << (test ? ", test mode: its mail is never delivered" : "")
              << "); the key is shown only now:\n"
              << k.key << "\n";
    return 0;
}

int key_list(const Config& config, const std::string& account_name) {
    auto store = open_or_die(config);
    auto account = block_on(store->find_account_by_name(account_name));
    if (!account) return fail("no account named '" + account_name + "'");
    auto keys = block_on(store->list_api_keys(account->id));
    if (!keys) return fail("cannot list keys: " + keys.error().message());
    for (const auto& k : *keys) {
        // The permission, and the domain a key is tied to, as the API shows them; a key made
        // here is a full key of no domain.
        std::string scope(domain::name(k.permission));
        if (k.domain_id) scope += " " + *k.domain_id;
        if (k.test) scope += " test";
        if (!k.name.empty()) scope += " \"" + k.name + "\"";
        std::cout << fmt::format(
            "{}  {}…  {}  created {}  {}\n", k.id, k.prefix, scope, format_iso8601(k.created_at),
            k.revoked_at ? "revoked " + format_iso8601(*k.revoked_at) : std::string("active"));
    }
    return 0;
}

int key_revoke(const Config& config, const std::string& key_id) {
    auto store = open_or_die(config);
    core::SystemClock clock;
    auto k = block_on(store->revoke_api_key(key_id, clock.now_ms()));
    if (!k) {
        if (k.error() == store::errc::not_found) return fail("no key with id '" + key_id + "'");
        return fail("cannot revoke the key: " + k.error().message());
    }
    std::cout << "revoked " << k->id << " at " << format_iso8601(*k->revoked_at) << "\n";
    return 0;
}

int dns_zone(const Config& config) {
    auto store = open_or_die(config);
    auto entries = block_on(store->dkim_zone());
    if (!entries) return fail("cannot read the DKIM keys: " + entries.error().message());
    std::cout << "; posthorn DKIM keys: serve these TXT records in the zone "
              << config.dns.dkim_zone << " (" << entries->size() << " records)\n";
    for (const auto& e : *entries) {
        // RFC 1035 §3.3.14: a TXT record is character-strings of at most 255 octets each;
        // DKIM verifiers join them (RFC 6376 §3.6.2.2).
        const std::string text = "v=DKIM1; k=rsa; p=" + e.public_key;
        std::string strings;
        for (std::size_t i = 0; i < text.size(); i += 255)
            strings += (i ? " \"" : "\"") + text.substr(i, 255) + "\"";
        std::cout << e.selector << "." << e.token << "." << config.dns.dkim_zone << ". 3600 IN TXT "
                  << strings << " ; " << e.domain << "\n";
    }
    return 0;
}

}  // namespace posthorn::app
