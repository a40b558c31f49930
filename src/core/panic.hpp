// core/panic.hpp — broken invariants. PH_PANIC logs and aborts (Postfix's msg_panic);
// PH_ASSERT does the same in every build type, because a queue that goes on after a
// broken invariant can lose mail.
#pragma once

#include <string_view>

namespace posthorn::core {
[[noreturn]] void panic(std::string_view what, const char* file, int line) noexcept;
}  // namespace posthorn::core

#define PH_PANIC(what) ::posthorn::core::panic((what), __FILE__, __LINE__)
#define PH_ASSERT(cond)                                    \
    do {                                                   \
        if (!(cond)) PH_PANIC("assertion failed: " #cond); \
    } while (0)
