// store/store.hpp — the persistence seam (CONVENTIONS §9): narrow interfaces, one per
// concern, and `Store`, which a back end implements whole (sqlite/ now, pg/ later).
//
// Every write is durable when its awaitable completes: back ends batch concurrent writes
// into one transaction and one fsync (group commit) and acknowledge each after the commit.
// Driver calls never run on the caller's thread; the caller resumes on its own executor.
// All methods are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "store/errors.hpp"
#include "store/types.hpp"

namespace posthorn::store {

class AccountStore {
  public:
    virtual ~AccountStore() = default;
    // errc::conflict when the name is taken.
    virtual asio::awaitable<Result<void>> create_account(Account account) = 0;
    virtual asio::awaitable<Result<Account>> find_account_by_name(std::string name) = 0;
    virtual asio::awaitable<Result<void>> create_api_key(ApiKey key) = 0;
    virtual asio::awaitable<Result<std::vector<ApiKey>>> list_api_keys(std::string account_id) = 0;
    // Revoking twice keeps the first time; errc::not_found for an unknown id.
    virtual asio::awaitable<Result<ApiKey>> revoke_api_key(std::string key_id, UnixMs at) = 0;
    // Looks a key up by the hex SHA-256 of the presented key (revoked ones included).
    virtual asio::awaitable<Result<ApiKey>> find_api_key(std::string hash_hex) = 0;
};

class LogStore {
  public:
    virtual ~LogStore() = default;
    // Queued for the next group commit; the caller does not wait (the request log is
    // written off the response path). flush() waits for it.
    virtual void append_log(LogEntry entry) = 0;
    virtual asio::awaitable<Result<Page<LogEntry>>> list_logs(LogQuery query) = 0;
    // Deletes entries created before `cutoff`; answers how many went.
    virtual asio::awaitable<Result<std::int64_t>> delete_logs_before(UnixMs cutoff) = 0;
};

class Store : public AccountStore, public LogStore {
  public:
    // Completes when everything submitted before it is durable.
    virtual asio::awaitable<Result<void>> flush() = 0;
    // Drains pending writes, then refuses new work (errc::closed). Blocking; call it from
    // the main thread at shutdown, after the network has stopped.
    virtual void close() = 0;
};

}  // namespace posthorn::store
