#include "core/version.hpp"

namespace posthorn::core {

// POSTHORN_VERSION is defined for this file alone (src/core/CMakeLists.txt): a new version
// recompiles one file.
std::string_view version() noexcept { return POSTHORN_VERSION; }

}  // namespace posthorn::core
