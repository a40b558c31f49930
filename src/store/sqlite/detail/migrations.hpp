// The embedded migrations (generated from src/store/migrations/sqlite by CMake).
#pragma once

#include <vector>

namespace posthorn::store::sqlite::detail {

struct Migration {
    int version;
    const char* name;
    const char* sql;
};

const std::vector<Migration>& migrations();

}  // namespace posthorn::store::sqlite::detail
