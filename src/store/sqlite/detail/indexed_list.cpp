#include "store/sqlite/detail/indexed_list.hpp"

#include <algorithm>
#include <limits>

#include "store/sqlite/detail/search_index.hpp"

namespace posthorn::store::sqlite::detail {

namespace {

// FTS5's query syntax for "these columns contain this string": a phrase in double quotes
// (its quotes doubled), which the trigram tokenizer matches as a substring.
std::string match_expression(const IndexedList& list, std::string_view needle) {
    std::string out = list.columns;
    out += " : \"";
    for (const char c : needle) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::int64_t created_at_of(std::int64_t rowid) {
    constexpr std::int64_t kPer = std::int64_t{1} << SearchIndex::kTieBits;
    const std::int64_t q = rowid / kPer;
    return (rowid % kPer < 0 ? q - 1 : q) + SearchIndex::kEpoch;  // floor, also below 0
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    const std::int64_t q = a / b;
    return a % b < 0 ? q - 1 : q;
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

// The account's documents created in [from, to) (ms): the two partial seconds at the ends
// stepped over in the index of documents, the rest summed from the bucket counts, level by
// level (seconds, minutes, hours at each end; days in the middle).
Result<std::int64_t> count_in_time(Db& db, const IndexedList& list, std::int64_t account_no,
                                   std::int64_t from, std::int64_t to) {
    using R = Result<std::int64_t>;
    const std::string docs_sql = std::string("SELECT count(*) FROM search.") + list.docs +
                                 " WHERE account_no = ?1 AND rowid BETWEEN ?2 AND ?3";
    const std::string sum_sql = std::string("SELECT COALESCE(sum(n), 0) FROM search.") +
                                list.buckets +
                                " WHERE account_no = ?1 AND level = ?2 AND bucket >= ?3 AND "
                                "bucket < ?4";
    std::int64_t total = 0;
    // One count: a statement of the connection's cache, reset when it goes.
    auto count = [&](const std::string& sql, std::int64_t a, std::int64_t b,
                     std::optional<int> level) -> Result<void> {
        auto s = db.prepare(sql);
        if (!s) return s.error();
        s->bind(1, account_no);
        if (level)
            s->bind(2, *level).bind(3, a).bind(4, b);
        else
            s->bind(2, a).bind(3, b);
        auto row = s->step();
        if (!row) return row.error();
        total += s->int64(0);
        return {};
    };
    auto by_docs = [&](std::int64_t a, std::int64_t b) -> Result<void> {  // [a, b) ms
        if (a >= b) return {};
        return count(docs_sql, SearchIndex::rowid_at(a), SearchIndex::rowid_at(b) - 1, {});
    };
    auto by_buckets = [&](int level, std::int64_t a, std::int64_t b) -> Result<void> {
        if (a >= b) return {};
        return count(sum_sql, a, b, level);
    };
    // Milliseconds: the whole seconds inside, and the two ends outside them.
    std::int64_t lo = ceil_div(from, SearchIndex::kBucketMs[0]);
    std::int64_t hi = floor_div(to, SearchIndex::kBucketMs[0]);
    if (lo >= hi) {
        if (auto r = by_docs(from, to); !r) return R(boost::system::in_place_error, r.error());
        return total;
    }
    if (auto r = by_docs(from, lo * SearchIndex::kBucketMs[0]); !r)
        return R(boost::system::in_place_error, r.error());
    if (auto r = by_docs(hi * SearchIndex::kBucketMs[0], to); !r)
        return R(boost::system::in_place_error, r.error());
    for (int level = 0; level < 3; ++level) {  // [lo, hi) in units of this level
        const auto ratio = SearchIndex::kBucketMs[level + 1] / SearchIndex::kBucketMs[level];
        const auto up_lo = ceil_div(lo, ratio), up_hi = floor_div(hi, ratio);
        if (up_lo >= up_hi) {
            if (auto r = by_buckets(level, lo, hi); !r)
                return R(boost::system::in_place_error, r.error());
            return total;
        }
        if (auto r = by_buckets(level, lo, up_lo * ratio); !r)
            return R(boost::system::in_place_error, r.error());
        if (auto r = by_buckets(level, up_hi * ratio, hi); !r)
            return R(boost::system::in_place_error, r.error());
        lo = up_lo;
        hi = up_hi;
    }
    if (auto r = by_buckets(3, lo, hi); !r) return R(boost::system::in_place_error, r.error());
    return total;
}

}  // namespace

bool indexable(std::string_view needle) {
    std::size_t chars = 0;  // UTF-8 characters: bytes that do not continue one
    for (const char c : needle)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++chars;
    return chars >= 3;
}

Result<IndexedPage> indexed_page(Db& db, const IndexedList& list, const IndexedQuery& q,
                                 const std::vector<TailRow>& tail) {
    IndexedPage page;
    const auto match = match_expression(list, q.needle);
    const std::int64_t lo =
        q.start ? SearchIndex::rowid_at(*q.start) : std::numeric_limits<std::int64_t>::min();
    const std::int64_t hi =
        q.end ? SearchIndex::rowid_at(*q.end + 1) - 1 : std::numeric_limits<std::int64_t>::max();
    // By the FTS5 table for a search; by the account's index of its documents otherwise
    // (?1 then stands for nothing: 1 = 1).
    const bool search = !q.needle.empty();
    const std::string account = "(SELECT no FROM search.accounts WHERE account_id = ?2)";
    const std::string from =
        // CROSS JOIN: the FTS5 table is the outer loop (SQLite keeps the order written), so
        // that its matches are read once, in rowid order, each looked up in the documents by
        // rowid; left to choose, the planner took every document of the account as the outer
        // loop and ran the match once for each (seconds at 20,000 emails).
        search ? std::string(" FROM search.") + list.text + " t CROSS JOIN search." + list.docs +
                     " d ON d.rowid = t.rowid WHERE t." + list.text + " MATCH ?1 AND " +
                     "d.account_no = " + account + " AND t.rowid BETWEEN ?3 AND ?4"
               : std::string(" FROM search.") + list.docs +
                     " t WHERE ?1 = ?1 AND t.account_no = " + account +
                     " AND t.rowid BETWEEN ?3 AND ?4";
    const std::string id = std::string(search ? "d." : "t.") + list.id_column;
    // Without a needle, the account's documents by time: counted from the buckets.
    std::optional<std::int64_t> account_no;
    std::int64_t from_ms = 0, to_ms = 0;  // [from_ms, to_ms): the list's bounds
    std::int64_t in_index = 0;
    if (!search) {
        auto no = db.prepare("SELECT no FROM search.accounts WHERE account_id = ?1");
        if (!no) return no.error();
        no->bind(1, q.account_id);
        auto row = no->step();
        if (!row) return row.error();
        if (*row) account_no = no->int64(0);
        from_ms = q.start ? *q.start : SearchIndex::kFirstMs;
        to_ms = q.end ? *q.end + 1 : SearchIndex::kLastMs;
        if (account_no) {
            auto n = count_in_time(db, list, *account_no, from_ms, to_ms);
            if (!n) return n.error();
            in_index = *n;
        }
    }
    if (q.count && !search) {
        page.total = in_index + static_cast<std::int64_t>(tail.size());
    } else if (q.count) {
        auto c = db.prepare("SELECT count(*)" + from);
        if (!c) return c.error();
        c->bind(1, match).bind(2, q.account_id).bind(3, lo).bind(4, hi);
        auto row = c->step();
        if (!row) return row.error();
        page.total = c->int64(0) + static_cast<std::int64_t>(tail.size());
    }
    // The index's part of the page: the window of its matches that the tail cannot push out
    // of it (see docs/architecture.md, "The lists' search index").
    const auto t = static_cast<std::int64_t>(tail.size());
    const std::int64_t start = std::max<std::int64_t>(0, q.offset - t);
    const std::int64_t n = q.offset + q.limit - start;
    // Deep into the documents by time, the window is found by the buckets rather than by an
    // OFFSET that steps over every document before it: the millisecond where it starts is
    // searched for (halving the range), and only the documents of that millisecond are
    // stepped over.
    std::int64_t window_lo = lo, window_hi = hi, skip = start;
    constexpr std::int64_t kSeekFrom = 1000;
    if (!search && start >= kSeekFrom) {
        if (!account_no || start >= in_index) {
            window_lo = 1;  // past the end: nothing
            window_hi = 0;
        } else {
            auto count = [&](std::int64_t a, std::int64_t b) {
                return count_in_time(db, list, *account_no, a, b);
            };
            // c(T): the documents from T to the end (descending) or from the start through T
            // (ascending); the window's first document is in the millisecond T* where c first
            // passes `start`.
            std::int64_t a = from_ms, b = to_ms - 1;
            while (a < b) {
                const std::int64_t mid = q.descending ? a + (b - a + 1) / 2 : a + (b - a) / 2;
                auto c = q.descending ? count(mid, to_ms) : count(from_ms, mid + 1);
                if (!c) return c.error();
                if (q.descending) {
                    if (*c > start)
                        a = mid;
                    else
                        b = mid - 1;
                } else {
                    if (*c > start)
                        b = mid;
                    else
                        a = mid + 1;
                }
            }
            auto before = q.descending ? count(a + 1, to_ms) : count(from_ms, a);
            if (!before) return before.error();
            skip = start - *before;
            if (q.descending)
                window_hi = SearchIndex::rowid_at(a + 1) - 1;
            else
                window_lo = SearchIndex::rowid_at(a);
        }
    }
    std::vector<TailRow> window;
    {
        auto s = db.prepare("SELECT " + id + ", t.rowid" + from +
                            (q.descending ? " ORDER BY t.rowid DESC" : " ORDER BY t.rowid ASC") +
                            " LIMIT ?5 OFFSET ?6");
        if (!s) return s.error();
        s->bind(1, match)
            .bind(2, q.account_id)
            .bind(3, window_lo)
            .bind(4, window_hi)
            .bind(5, n)
            .bind(6, skip);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            window.emplace_back(created_at_of(s->int64(1)), s->text(0));
        }
    }
    // Merged by creation time, a tail row first among those of its millisecond (descending;
    // last, ascending).
    std::vector<const std::string*> merged;
    merged.reserve(window.size() + tail.size());
    std::size_t i = 0, j = 0;
    while (i < window.size() || j < tail.size()) {
        bool take_tail = i == window.size();
        if (!take_tail && j < tail.size())
            take_tail =
                q.descending ? tail[j].first >= window[i].first : tail[j].first < window[i].first;
        merged.push_back(take_tail ? &tail[j++].second : &window[i++].second);
    }
    const auto from_pos = static_cast<std::size_t>(q.offset - start);
    for (std::size_t k = from_pos; k < merged.size() && k < from_pos + q.limit; ++k)
        page.ids.push_back(*merged[k]);
    return page;
}

}  // namespace posthorn::store::sqlite::detail
