// domain/api_keys.hpp — an account's API keys and what each may do (issue 29): a `full` key
// does everything its account may; a `sending` key only sends and reads the emails it sent;
// a key tied to a domain sends only from that domain. An account keeps at least one
// unrevoked full key: revoking its last one is refused, so that it cannot lock itself out
// by accident (the operator's CLI can still revoke any key). The stores keep keys as they
// are; these rules are applied by the front doors (api/) and, for a revocation, inside the
// store's transaction (AccountStore::revoke_api_key_if). Pure; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"

namespace posthorn::domain {

enum class KeyPermission : std::uint8_t { full, sending };
inline constexpr std::array<std::string_view, 2> kKeyPermissionNames = {"full", "sending"};

constexpr std::string_view name(KeyPermission p) {
    return kKeyPermissionNames[static_cast<std::size_t>(p)];
}
// The permission named `text` exactly, or nullopt.
std::optional<KeyPermission> key_permission(std::string_view text);

struct ApiKey {
    std::string id;  // key_…
    std::string account_id;
    std::string prefix;  // the first characters of the key, for people to recognise it
    std::string hash;    // lower-case hex SHA-256 of the whole key; the key itself is never stored
    UnixMs created_at = 0;
    std::optional<UnixMs> revoked_at;
    std::string name;  // the user's label; "" when none
    KeyPermission permission = KeyPermission::full;
    std::optional<std::string> domain_id;  // sends only from this domain of its account
    bool test = false;                     // test mode: its mail never leaves (issue 29, point 3)
};

// What a request asks of its key.
enum class KeyNeed : std::uint8_t {
    send,            // POST /v1/emails, SMTP submission
    read_sent_mail,  // GET /v1/emails/{id}: a sending key only of the emails it sent
    read_stats,      // GET /v1/stats: any key, of its domain when it is tied to one
    full,            // everything else: domains, webhooks, logs, lists, keys…
};

// Why `key` may not do `need`, or nullopt when it may. `what` says what the request does,
// in the words of "a full-access key is needed to <what>" ("manage domains").
std::optional<std::string> key_lacks(const ApiKey& key, KeyNeed need, std::string_view what);

// Whether `key` may read the email that `sender_key_id` sent ("" when no key is known: an
// email from before keys were recorded, which only a full key reads).
bool may_read_email(const ApiKey& key, std::string_view sender_key_id);

// Whether `key` may send from its account's domain `domain_id`: a key tied to a domain
// sends only from that one.
bool key_may_send_from(const ApiKey& key, std::string_view domain_id);

// The domain whose statistics alone `key` reads (GET /v1/stats): the one it is tied to, or
// nullopt for a key that reads the whole account's.
std::optional<std::string> stats_domain_of(const ApiKey& key);

// Why `target` may not be revoked, given every key of its account as they stand
// (`account_keys`, `target` among them), or nullopt when it may: the account's last
// unrevoked full key stays. Revoking a revoked key again changes nothing and is allowed.
std::optional<std::string> revocation_refusal(const ApiKey& target,
                                              const std::vector<ApiKey>& account_keys);

}  // namespace posthorn::domain
