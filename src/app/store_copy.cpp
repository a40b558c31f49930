#include "app/store_copy.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "store/copy.hpp"
#include "store/pg/pg_copy_target.hpp"
#include "store/pg/pg_store.hpp"
#include "store/sqlite/sqlite_copy_source.hpp"

namespace posthorn::app {

namespace {

constexpr std::string_view kSqlite = "sqlite://";

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int fail(const std::string& what, int code = 1) {
    std::cerr << "posthorn: store copy: " << what << "\n";
    return code;
}

void print_counts(const store::CopyReport& report) {
    std::cout << fmt::format("{:<22}{:>12}{:>12}\n", "table", "sqlite", "postgresql");
    for (const auto& t : report.tables) {
        std::cout << fmt::format("{:<22}{:>12}{:>12}{}\n", t.table, t.source, t.target,
                                 t.source == t.target ? "" : "  differs");
    }
}

}  // namespace

CopyEnds copy_ends(std::string_view from, std::string_view to) {
    CopyEnds ends;
    ends.shown_to = store::pg::redact_url(to);
    if (store::pg::is_pg_url(from))
        ends.problem =
            "--from names the store to copy, a SQLite file (sqlite://PATH), not a PostgreSQL "
            "database";
    else if (!starts_with(from, kSqlite))
        ends.problem =
            "--from must be a sqlite://PATH URL, not '" + store::pg::redact_url(from) + "'";
    else if (from.size() == kSqlite.size())
        ends.problem = "--from names no file (sqlite://PATH)";
    else if (starts_with(to, kSqlite))
        ends.problem =
            "--to names the database to copy into, a PostgreSQL one (postgresql://… or "
            "postgres://…), not a SQLite file";
    else if (!store::pg::is_pg_url(to))
        ends.problem =
            "--to must be a postgresql:// or postgres:// URL, not '" + ends.shown_to + "'";
    if (ends.problem) return ends;
    ends.sqlite_path = std::string(from.substr(kSqlite.size()));
    ends.pg_url = std::string(to);
    return ends;
}

int store_copy(const std::string& from, const std::string& to) {
    const auto ends = copy_ends(from, to);
    if (ends.problem) return fail(*ends.problem, 2);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(ends.sqlite_path, ec))
        return fail("cannot read " + ends.sqlite_path + ": " +
                    (ec ? ec.message() : std::string("no such file")));
    if (::access(ends.sqlite_path.c_str(), R_OK) != 0)
        return fail("cannot read " + ends.sqlite_path + ": permission denied");

    const auto start = std::chrono::steady_clock::now();
    std::cerr << "posthorn: copying " << from << " to " << ends.shown_to << "\n";
    auto source = store::sqlite::SqliteCopySource::open(ends.sqlite_path);
    if (!source)
        return fail("cannot read " + ends.sqlite_path + ": " + source.error().message() +
                    "; nothing was copied");
    auto target = store::pg::PgCopyTarget::open(ends.pg_url);
    if (!target)
        return fail("cannot open " + ends.shown_to + ": " + target.error().message() +
                    "; nothing was copied");
    auto last = std::chrono::steady_clock::now();
    auto progress = [&last](std::string_view table, std::int64_t rows) {
        std::cerr << fmt::format("  {}: {} rows ({:.1f} s)\n", table, rows, seconds_since(last));
        last = std::chrono::steady_clock::now();
    };
    auto report = store::copy_store(**source, **target, progress);
    if (!report)
        return fail("failed: " + report.error().message() + "; nothing was copied (rolled back)");
    switch (report->outcome) {
        case store::CopyReport::Outcome::target_not_empty: {
            std::string held;
            for (const auto& t : report->tables)
                held += fmt::format("{}{} ({} rows)", held.empty() ? "" : ", ", t.table, t.target);
            return fail("refused: " + ends.shown_to + " is not empty (" + held +
                        "); nothing was copied. Copy into a new, empty database.");
        }
        case store::CopyReport::Outcome::counts_differ:
            print_counts(*report);
            return fail("the counts differ (marked above): nothing was kept (rolled back)");
        case store::CopyReport::Outcome::copied:
            break;
    }
    print_counts(*report);
    std::int64_t rows = 0;
    for (const auto& t : report->tables) rows += t.target;
    std::cout << fmt::format("copied {} rows of {} tables in {:.1f} s; every count matches\n", rows,
                             report->tables.size(), seconds_since(start));
    return 0;
}

}  // namespace posthorn::app
