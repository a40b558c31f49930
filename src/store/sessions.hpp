// store/sessions.hpp — the dashboard's sessions (api/dashboard.hpp, docs/dashboard.md),
// shared by every node of a store. A signed-in browser acts with one API key; the store keeps
// the hex SHA-256 of the session id (the cookie's value), never the id itself. Whether a
// session may be used (expired, its key revoked) is the caller's to decide: a store stores.
// Both back ends implement it beside Store (SqliteStore, PgStore); the contract is
// store/contract/dashboard_sessions_test.cpp. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "store/errors.hpp"
#include "store/types.hpp"

namespace posthorn::store {

struct DashboardSession {
    std::string id_hash;  // hex SHA-256 of the session id
    std::string account_id;
    std::string key_id;
    std::string csrf_token;
    UnixMs created_at = 0;
    UnixMs expires_at = 0;
};

// A session with its key as the key stands now (revoked or not).
struct SessionWithKey {
    DashboardSession session;
    ApiKey key;
};

class SessionStore {
  public:
    virtual ~SessionStore() = default;
    // errc::conflict when a session of that id_hash exists.
    virtual asio::awaitable<Result<void>> create_session(DashboardSession session) = 0;
    // The session of `id_hash` with its key, expired or not; errc::not_found when there is
    // none (or its key is gone).
    virtual asio::awaitable<Result<SessionWithKey>> find_session(std::string id_hash) = 0;
    // Answers whether there was one.
    virtual asio::awaitable<Result<bool>> delete_session(std::string id_hash) = 0;
    // Deletes the sessions whose expires_at is at or before `now`; answers how many went.
    virtual asio::awaitable<Result<std::int64_t>> delete_expired_sessions(UnixMs now) = 0;
};

}  // namespace posthorn::store
