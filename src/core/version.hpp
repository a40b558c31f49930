// core/version.hpp — the version of this build (CMakeLists.txt's project version), as
// `posthorn --version`, the start-up line and posthorn_build_info say it.
#pragma once

#include <string_view>

namespace posthorn::core {

std::string_view version() noexcept;

}  // namespace posthorn::core
