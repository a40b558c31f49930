#include "domain/api_keys.hpp"

#include <algorithm>

namespace posthorn::domain {

std::optional<KeyPermission> key_permission(std::string_view text) {
    for (std::size_t i = 0; i < kKeyPermissionNames.size(); ++i)
        if (kKeyPermissionNames[i] == text) return static_cast<KeyPermission>(i);
    return std::nullopt;
}

std::optional<std::string> key_lacks(const ApiKey& key, KeyNeed need, std::string_view what) {
    if (key.permission == KeyPermission::full) return std::nullopt;
    switch (need) {
        case KeyNeed::send:
        case KeyNeed::read_sent_mail:
        case KeyNeed::read_stats:
            return std::nullopt;
        case KeyNeed::full:
            break;
    }
    return "this key may only send email (and read the emails it sent); a full-access key "
           "is needed to " +
           std::string(what);
}

bool may_read_email(const ApiKey& key, std::string_view sender_key_id) {
    return key.permission == KeyPermission::full ||
           (!sender_key_id.empty() && sender_key_id == key.id);
}

bool key_may_send_from(const ApiKey& key, std::string_view domain_id) {
    return !key.domain_id || *key.domain_id == domain_id;
}

std::optional<std::string> stats_domain_of(const ApiKey& key) { return key.domain_id; }

std::optional<std::string> revocation_refusal(const ApiKey& target,
                                              const std::vector<ApiKey>& account_keys) {
    if (target.revoked_at || target.permission != KeyPermission::full) return std::nullopt;
    const bool another = std::any_of(account_keys.begin(), account_keys.end(), [&](const auto& k) {
        return k.id != target.id && !k.revoked_at && k.permission == KeyPermission::full;
    });
    if (another) return std::nullopt;
    return "this is the account's last full-access key: create another full-access key "
           "before revoking it";
}

}  // namespace posthorn::domain
