#include "store/sqlite/detail/events.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "domain/vocabulary.hpp"

namespace posthorn::store::sqlite::detail {

Result<void> insert_event(Db& db, const Event& e) {
    auto s = db.prepare(
        "INSERT INTO events (id, account_id, type, email_id, data, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!s) return s.error();
    return s->bind(1, e.id)
        .bind(2, e.account_id)
        .bind_ref(3, domain::name(e.kind))
        .bind(4, e.email_id)
        .bind(5, e.data_json)
        .bind(6, e.created_at)
        .run();
}

namespace {

// The bumps with those of one counter summed into one.
std::vector<StatBump> summed_stats(std::vector<StatBump> stats) {
    auto key = [](const StatBump& b) {
        return std::tie(b.account_id, b.dimension, b.hour, b.kind);
    };
    std::sort(stats.begin(), stats.end(),
              [&](const StatBump& a, const StatBump& b) { return key(a) < key(b); });
    std::vector<StatBump> summed;
    for (auto& b : stats) {
        if (!summed.empty() && key(summed.back()) == key(b))
            summed.back().count += b.count;
        else
            summed.push_back(std::move(b));
    }
    return summed;
}

}  // namespace

void add_stats(Db& db, const std::vector<StatBump>& stats) {
    auto& pending = db.pending_stats();
    pending.insert(pending.end(), stats.begin(), stats.end());
}

error_code write_pending_stats(Db& db) {
    if (db.pending_stats().empty()) return {};
    const auto summed = summed_stats(std::exchange(db.pending_stats(), {}));
    for (const auto& b : summed) {
        auto s = db.prepare(
            "INSERT INTO stat_counters (account_id, dimension, hour, kind, count) "
            "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (account_id, dimension, hour, kind) "
            "DO UPDATE SET count = count + excluded.count");
        if (!s) return s.error();
        if (auto r = s->bind_ref(1, b.account_id)
                         .bind_ref(2, b.dimension)
                         .bind(3, b.hour)
                         .bind_ref(4, domain::name(b.kind))
                         .bind(5, b.count)
                         .run();
            !r)
            return r.error();
    }
    return {};
}

}  // namespace posthorn::store::sqlite::detail
