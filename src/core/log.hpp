// core/log.hpp — the logging facade. Modules log through these functions; app/ installs
// the sink (spdlog) at start. Without a sink, lines go to stderr. Thread-safe.
//
// A line is a message and, for the events an operator searches for (a delivery attempt, a
// refused session, a refused send), fields: log::event(Level::info, "delivery attempt",
// {{"email_id", id}, {"code", 250}}). The text format writes them after the message as
// key=value; the JSON format (log.format = "json") as members of the line's object. A field
// never carries a secret (an API key, a password) or a message body.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <concepts>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace posthorn::log {

enum class Level { debug, info, warn, error };

struct Field {
    Field(std::string_view k, std::string_view v) : key(k), value(v) {}
    Field(std::string_view k, std::string v) : key(k), value(std::move(v)) {}
    Field(std::string_view k, const char* v) : key(k), value(v != nullptr ? v : "") {}
    Field(std::string_view k, bool v) : key(k), value(v ? "true" : "false"), number(true) {}
    template <std::integral I>
    requires(!std::same_as<I, bool> && !std::same_as<I, char>) Field(std::string_view k, I v)
        : key(k), value(std::to_string(v)), number(true) {}
    Field(std::string_view k, double v)
        : key(k), value(fmt::format("{}", v)), number(std::isfinite(v)) {}

    std::string_view key;
    std::string value;
    bool number = false;  // written bare in JSON (a number or true/false), else a string
};
using Fields = std::span<const Field>;

using Sink = std::function<void(Level, std::string_view message, Fields fields)>;
void set_sink(Sink sink);
void set_level(Level level);
bool enabled(Level level) noexcept;
void write(Level level, std::string_view message, Fields fields = {});

// "debug", "info", "warn", "error"; parse_level answers false for anything else.
std::string_view name(Level level) noexcept;
bool parse_level(std::string_view text, Level& out) noexcept;

// A line of the text format: the message, then ` key=value` for each field (the value in
// double quotes, with \ and " escaped, when it is empty or holds a space, a quote, an = or
// a control character; control characters as \n, \r, \t or \xNN).
std::string text_line(std::string_view message, Fields fields);
// A line of the JSON format, without its line feed: {"time":…,"level":…,"message":…, the
// fields…}. `time` is RFC 3339 UTC with milliseconds.
std::string json_line(std::string_view time, Level level, std::string_view message, Fields fields);

inline void event(Level level, std::string_view message, std::initializer_list<Field> fields) {
    if (enabled(level)) write(level, message, Fields(fields.begin(), fields.size()));
}

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
