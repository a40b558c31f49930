// PgStore: the statistics' counters (StatsStore), summed per bucket. They are written by the
// email writes (detail::add_stats, pg_emails.cpp).
#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {

using detail::Params;

asio::awaitable<Result<std::vector<StatCount>>> PgStore::stat_counts(StatQuery q) {
    return impl_->read(
        [q = std::move(q)](Conn& c) -> Result<std::vector<StatCount>> {
            // A range of the key (account_id, dimension, hour), grouped per bucket.
            auto rows = c.exec(
                "SELECT $3 + ((hour - $3) / $5) * $5 AS bucket, kind, sum(count)::bigint "
                "FROM stat_counters WHERE account_id = $1 AND dimension = $2 AND hour >= $3 "
                "AND hour < $4 GROUP BY bucket, kind ORDER BY bucket, kind",
                Params().add(q.account_id).add(q.dimension).add(q.from).add(q.to).add(q.width));
            if (!rows) return rows.error();
            std::vector<StatCount> out;
            for (int i = 0; i < rows->size(); ++i) {
                const auto row = rows->row(i);
                const auto kind = domain::from_name<domain::StatKind>(row.text(1));
                if (!kind) continue;  // a kind of a later version
                out.push_back(
                    StatCount{.bucket = row.int64(0), .kind = *kind, .count = row.int64(2)});
            }
            return out;
        },
        false);
}

}  // namespace posthorn::store::pg
