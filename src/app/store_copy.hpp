// app/store_copy.hpp — `posthorn store copy --from sqlite://PATH --to postgresql://…`: moves
// an install from its SQLite store into an empty PostgreSQL database (store/copy.hpp does the
// copying; docs/postgresql.md, "Moving an install from SQLite"). A PostgreSQL URL is shown
// only with its password replaced by ***.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace posthorn::app {

// The two ends of a copy, as --from and --to name them.
struct CopyEnds {
    std::string sqlite_path;             // the file --from names
    std::string pg_url;                  // --to, as it is (for libpq)
    std::string shown_to;                // --to as it may be printed
    std::optional<std::string> problem;  // set: the arguments are wrong, in words
};

CopyEnds copy_ends(std::string_view from, std::string_view to);

// Runs the copy and prints the count of every table on both sides. Exit code: 0 copied and
// every count matches; 1 refused (a non-empty target, a source in use or of another schema
// version) or failed, nothing kept; 2 bad arguments.
int store_copy(const std::string& from, const std::string& to);

}  // namespace posthorn::app
