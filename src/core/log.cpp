#include "core/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/panic.hpp"
#include "core/text.hpp"

namespace posthorn::log {
namespace {
std::mutex g_mutex;
Sink g_sink;  // guarded by g_mutex
std::atomic<Level> g_level{Level::info};

constexpr std::string_view kNames[] = {"debug", "info", "warn", "error"};

// The length of the valid UTF-8 sequence at the start of `s`, or 0.
std::size_t utf8_sequence(std::string_view s) {
    const auto b = static_cast<unsigned char>(s[0]);
    std::size_t n = 0;
    unsigned cp = 0;
    if (b < 0x80) return 1;
    if (b >= 0xc2 && b <= 0xdf) {
        n = 2;
        cp = b & 0x1fU;
    } else if (b >= 0xe0 && b <= 0xef) {
        n = 3;
        cp = b & 0x0fU;
    } else if (b >= 0xf0 && b <= 0xf4) {
        n = 4;
        cp = b & 0x07U;
    } else {
        return 0;
    }
    if (s.size() < n) return 0;
    for (std::size_t i = 1; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c & 0xc0U) != 0x80) return 0;
        cp = (cp << 6) | (c & 0x3fU);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

// `s` with every byte that is not part of valid UTF-8 replaced by U+FFFD: a JSON line stays
// valid JSON whatever a remote server sent.
std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    while (!s.empty()) {
        const auto n = utf8_sequence(s);
        if (n == 0) {
            out += "\xef\xbf\xbd";
            s.remove_prefix(1);
        } else {
            out.append(s.substr(0, n));
            s.remove_prefix(n);
        }
    }
    return out;
}

void append_json_member(std::string& out, std::string_view key, std::string_view value, bool bare) {
    out += ',';
    core::append_json_string(out, valid_utf8(key));
    out += ':';
    if (bare)
        out += value;
    else
        core::append_json_string(out, valid_utf8(value));
}

bool needs_quotes(std::string_view v) {
    if (v.empty()) return true;
    for (char c : v)
        if (static_cast<unsigned char>(c) <= 0x20 || c == '"' || c == '=' || c == '\\' || c == 0x7f)
            return true;
    return false;
}

}  // namespace

void set_sink(Sink sink) {
    std::lock_guard lock(g_mutex);
    g_sink = std::move(sink);
}

void set_level(Level level) { g_level.store(level); }

bool enabled(Level level) noexcept { return level >= g_level.load(std::memory_order_relaxed); }

std::string_view name(Level level) noexcept { return kNames[static_cast<int>(level)]; }

bool parse_level(std::string_view text, Level& out) noexcept {
    for (int i = 0; i < 4; ++i)
        if (text == kNames[i]) {
            out = static_cast<Level>(i);
            return true;
        }
    return false;
}

std::string text_line(std::string_view message, Fields fields) {
    std::string out(message);
    for (const auto& f : fields) {
        out += ' ';
        out += f.key;
        out += '=';
        if (!needs_quotes(f.value)) {
            out += f.value;
            continue;
        }
        out += '"';
        for (char c : f.value) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if (c == '\n') {
                out += "\\n";
            } else if (c == '\r') {
                out += "\\r";
            } else if (c == '\t') {
                out += "\\t";
            } else if (u < 0x20 || u == 0x7f) {
                out += fmt::format("\\x{:02x}", u);
            } else {
                out += c;
            }
        }
        out += '"';
    }
    return out;
}

std::string json_line(std::string_view time, Level level, std::string_view message, Fields fields) {
    std::string out = "{\"time\":";
    core::append_json_string(out, time);
    out += ",\"level\":";
    core::append_json_string(out, name(level));
    append_json_member(out, "message", message, false);
    for (const auto& f : fields) {
        // The line's own members keep their meaning: a field of the same name is renamed.
        const bool taken = f.key == "time" || f.key == "level" || f.key == "message";
        append_json_member(out, taken ? "field_" + std::string(f.key) : std::string(f.key), f.value,
                           f.number);
    }
    out += '}';
    return out;
}

void write(Level level, std::string_view message, Fields fields) {
    std::lock_guard lock(g_mutex);
    if (g_sink) {
        g_sink(level, message, fields);
        return;
    }
    const auto line = text_line(message, fields);
    const auto level_name = name(level);
    std::fprintf(stderr, "[%.*s] %.*s\n", static_cast<int>(level_name.size()), level_name.data(),
                 static_cast<int>(line.size()), line.data());
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
