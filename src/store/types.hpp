// store/types.hpp — the rows the store reads and writes, as plain structs. Times are
// UnixMs (UTC milliseconds); ids are the prefixed strings of core/id.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/time.hpp"

namespace posthorn::store {

struct Account {
    std::string id;  // acc_…
    std::string name;
    UnixMs created_at = 0;
};

struct ApiKey {
    std::string id;  // key_…
    std::string account_id;
    std::string prefix;  // the first characters of the key, for people to recognise it
    std::string hash;    // lower-case hex SHA-256 of the whole key; the key itself is never stored
    UnixMs created_at = 0;
    std::optional<UnixMs> revoked_at;
};

struct LogEntry {
    std::string id;  // log_…
    std::string account_id;
    UnixMs created_at = 0;
    std::string method;
    std::string url;  // the request target: path and query
    int status = 0;
    std::int64_t duration_ms = 0;
    std::string ip;
    std::string user_agent;
};

enum class SortOrder { asc, desc };

struct LogQuery {
    std::string account_id;
    std::int64_t page = 1;  // 1-based
    std::int64_t limit = 20;
    std::optional<int> status;
    std::optional<std::string> method;
    SortOrder order = SortOrder::desc;
};

template <class T>
struct Page {
    std::vector<T> items;
    std::int64_t total = 0;  // rows matching the filter, over all pages
};

}  // namespace posthorn::store
