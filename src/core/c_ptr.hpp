// core/c_ptr.hpp — RAII for C handles: CPtr<sqlite3, sqlite3_close_v2> and the like.
// Each module declares its own aliases in its detail/ headers (CONVENTIONS §7).
#pragma once

#include <memory>

namespace posthorn {

template <auto Free>
struct CFree {
    void operator()(auto* p) const noexcept { Free(p); }
};
template <class T, auto Free>
using CPtr = std::unique_ptr<T, CFree<Free>>;

}  // namespace posthorn
