// SqliteStore: the statistics' counters (StatsStore), summed per bucket. They are written by
// the email writes (detail::add_stats, beside the events).
#include "store/sqlite/detail/impl.hpp"

namespace posthorn::store::sqlite {

asio::awaitable<Result<std::vector<StatCount>>> SqliteStore::stat_counts(StatQuery q) {
    return impl_->read([q = std::move(q)](Db& db) -> Result<std::vector<StatCount>> {
        // A range of the key (account_id, dimension, hour), grouped per bucket.
        auto s = db.prepare(
            "SELECT ?3 + ((hour - ?3) / ?5) * ?5 AS bucket, kind, SUM(count) "
            "FROM stat_counters WHERE account_id = ?1 AND dimension = ?2 AND hour >= ?3 AND "
            "hour < ?4 GROUP BY bucket, kind ORDER BY bucket, kind");
        if (!s) return s.error();
        s->bind_ref(1, q.account_id)
            .bind_ref(2, q.dimension)
            .bind(3, q.from)
            .bind(4, q.to)
            .bind(5, q.width);
        std::vector<StatCount> out;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            const auto kind = domain::from_name<domain::StatKind>(s->text(1));
            if (!kind) continue;  // a kind of a later version
            out.push_back(StatCount{.bucket = s->int64(0), .kind = *kind, .count = s->int64(2)});
        }
        return out;
    });
}

}  // namespace posthorn::store::sqlite
