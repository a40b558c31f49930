// core/log.hpp — the logging facade. Modules log through these functions; app/ installs
// the sink (spdlog) at start. Without a sink, lines go to stderr. Thread-safe.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string_view>

namespace posthorn::log {

enum class Level { debug, info, warn, error };

using Sink = std::function<void(Level, std::string_view)>;
void set_sink(Sink sink);
void set_level(Level level);
bool enabled(Level level) noexcept;
void write(Level level, std::string_view message);

template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
    if (enabled(Level::debug)) write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
    if (enabled(Level::info)) write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
    if (enabled(Level::warn)) write(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
    if (enabled(Level::error)) write(Level::error, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace posthorn::log
