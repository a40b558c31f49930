// store/errors.hpp — what a store operation can fail with. Back ends map their driver
// codes onto these, so callers never see SQLite or libpq codes.
#pragma once

#include <type_traits>

#include "core/result.hpp"

namespace posthorn::store {

enum class errc {
    not_found = 1,  // no such row (or it belongs to another account)
    conflict,       // a unique constraint: the row exists already
    busy,           // the database stayed locked past the busy timeout
    io,             // the driver failed: disk full, I/O error, corrupt file
    closed,         // the store is shutting down and takes no more work
    unavailable,    // the database cannot be reached (a server store's lost connection):
                    // nothing of the operation was written
    newer_schema,   // the database was migrated by a newer posthorn than this one
    older_schema,   // the database is at an older schema than this posthorn's, and is not to be
                    // migrated here (a copy's source, opened read-only)
    no_schema,      // opened as an existing install (create = false), the database is missing
                    // or has no posthorn schema; nothing was created
};

const boost::system::error_category& error_category() noexcept;
inline error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace posthorn::store

template <>
struct boost::system::is_error_code_enum<posthorn::store::errc> : std::true_type {};
