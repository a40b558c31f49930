// The embedded migrations (generated from src/store/migrations/pg by CMake), and applying
// them. Private to store/pg.
#pragma once

#include <vector>

#include "core/result.hpp"
#include "store/pg/detail/conn.hpp"

namespace posthorn::store::pg::detail {

struct Migration {
    int version;
    const char* name;
    const char* sql;
};

// In the order of their versions.
const std::vector<Migration>& migrations();

// Brings the database of `conn` to the last of `all` (each migration in a transaction of its
// own, recorded in schema_migrations), holding an advisory lock meanwhile so that nodes
// starting together migrate once. Answers the database's version; errc::newer_schema when
// it is beyond the last of `all` (logged: "upgrade posthorn"). Unless `create`, a database
// that has no schema_migrations table, or an empty one, is errc::no_schema, untouched.
Result<int> migrate(Conn& conn, const std::vector<Migration>& all, bool create = true);

}  // namespace posthorn::store::pg::detail
