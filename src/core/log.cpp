#include "core/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/panic.hpp"

namespace posthorn::log {
namespace {
std::mutex g_mutex;
Sink g_sink;  // guarded by g_mutex
std::atomic<Level> g_level{Level::info};
}  // namespace

void set_sink(Sink sink) {
    std::lock_guard lock(g_mutex);
    g_sink = std::move(sink);
}

void set_level(Level level) { g_level.store(level); }

bool enabled(Level level) noexcept { return level >= g_level.load(std::memory_order_relaxed); }

void write(Level level, std::string_view message) {
    std::lock_guard lock(g_mutex);
    if (g_sink) {
        g_sink(level, message);
        return;
    }
    static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
    std::fprintf(stderr, "[%s] %.*s\n", kNames[static_cast<int>(level)],
                 static_cast<int>(message.size()), message.data());
}

}  // namespace posthorn::log

namespace posthorn::core {
void panic(std::string_view what, const char* file, int line) noexcept {
    std::fprintf(stderr, "panic: %.*s (%s:%d)\n", static_cast<int>(what.size()), what.data(), file,
                 line);
    std::fflush(stderr);
    std::abort();
}
}  // namespace posthorn::core
