// Statements that insert many rows at once (INSERT … VALUES (…), (…), …). One statement's
// rows share its cursors, so that each row after the first is appended where the last one
// went instead of sought from the root of every B-tree it goes into (the request log's
// rows: −26% of the writer's work for each). Not used for the emails of a batch: grouped
// that way (an experiment, 2026-11-24), the writer's instructions a send fell 22% under
// callgrind, but neither its CPU time nor the rate moved measurably at full load.
#pragma once

#include <array>
#include <bit>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace posthorn::store::sqlite::detail {

inline constexpr std::size_t kMaxRows = 32;

// How many rows the next statement takes when `left` are left: kMaxRows, or else the
// largest power of two not above `left`, so that a few statements cover any number.
inline std::size_t next_rows(std::size_t left) {
    return left >= kMaxRows ? kMaxRows : std::bit_floor(left);
}

// `head` followed by `rows` copies of `row`, comma-separated, each ?N in a copy numbered
// N + params × its index: values_sql("INSERT INTO t (a, b) VALUES ", "(?1, ?2)", 2, 2) is
// "INSERT INTO t (a, b) VALUES (?1, ?2),(?3, ?4)".
inline std::string values_sql(std::string_view head, std::string_view row, std::size_t params,
                              std::size_t rows) {
    std::string sql(head);
    for (std::size_t r = 0; r < rows; ++r) {
        if (r) sql += ',';
        for (std::size_t i = 0; i < row.size(); ++i) {
            sql += row[i];
            if (row[i] != '?') continue;
            std::size_t n = 0;
            while (i + 1 < row.size() && std::isdigit(static_cast<unsigned char>(row[i + 1])))
                n = n * 10 + static_cast<std::size_t>(row[++i] - '0');
            sql += std::to_string(n + r * params);
        }
    }
    return sql;
}

// The statements of one INSERT for 1, 2, 4 … kMaxRows rows.
class RowsSql {
  public:
    RowsSql(std::string_view head, std::string_view row, std::size_t params) {
        for (std::size_t k = 0; k < sql_.size(); ++k)
            sql_[k] = values_sql(head, row, params, std::size_t{1} << k);
    }
    // `rows`: a value of next_rows().
    const std::string& at(std::size_t rows) const {
        return sql_.at(static_cast<std::size_t>(std::countr_zero(rows)));
    }

  private:
    std::array<std::string, std::countr_zero(kMaxRows) + 1> sql_;
};

}  // namespace posthorn::store::sqlite::detail
