// domain/stats.hpp — the account's statistics (GET /v1/stats, issue 31): which counters an
// email's acceptance and each change of it add to, and the window of buckets a question
// asks for. Counted are emails, not recipients: an email counts once as accepted when it is
// stored; once as delivered, bounced (by the class of its first bounced recipient), complained,
// failed or blocked when its status becomes that one (a late DSN after DELIVERED counts it
// bounced too); once as opened or clicked, at the first open or click. Each count goes to
// the UTC hour of the moment it happened, for every email of the account (dimension ""),
// for its domain ("domain:<id>") and for each of its tags ("tag:<name>:<value>"), so that a
// store answers every filter from counters alone. Test-mode mail (domain/test_mode.hpp)
// counts nowhere: its outcomes are simulated (a test suite's bounces and complaints would
// otherwise move the rates a team watches), as Postmark's test token and SES's mailbox
// simulator leave their statistics alone. Pure: no I/O, no clock; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "domain/model.hpp"

namespace posthorn::domain {

inline constexpr UnixMs kStatHourMs = 3'600'000;
inline constexpr UnixMs kStatDayMs = 24 * kStatHourMs;
inline constexpr std::int64_t kMaxStatBuckets = 1000;

// The UTC hour (or day) `t` falls in: its start.
constexpr UnixMs stat_floor(UnixMs t, UnixMs width) {
    const auto r = t % width;
    return r < 0 ? t - r - width : t - r;
}

std::string domain_dimension(std::string_view domain_id);
std::string tag_dimension(const Tag& tag);

// The counters one `kind` of `email` at `at` adds to: one for each of its dimensions.
std::vector<StatBump> stat_bumps(const Email& email, StatKind kind, UnixMs at);

// What storing `email` adds: accepted, at its created_at.
std::vector<StatBump> accepted_stats(const Email& email);

// What `change` does to `before` (all of its recipients) in the statistics' terms.
std::vector<StatKind> stat_kinds(const Email& before, const EmailChange& change);

// Appends to change.stats the counters of stat_kinds(before, change), at change.at.
void count_change(const Email& before, EmailChange& change);

enum class StatInterval : std::uint8_t { hour, day };

// The buckets a question covers: [from, to) in steps of `width`, aligned to UTC hours or days.
struct StatWindow {
    StatInterval interval = StatInterval::day;
    UnixMs from = 0;
    UnixMs to = 0;
    UnixMs width = kStatDayMs;
    std::int64_t buckets() const { return (to - from) / width; }
};

struct StatWindowError {
    std::string field;  // the query parameter at fault
    std::string message;
};

// The window of `interval` between `from` and `to` (either may be absent): `from` rounded down
// and `to` up to a bucket's bound; absent, `to` is the end of the bucket `now` is in and `from`
// 30 days (interval day) or 24 hours (hour) before `to`. `from` must come before `to`, and
// the window hold at most kMaxStatBuckets buckets.
std::variant<StatWindow, StatWindowError> stat_window(StatInterval interval,
                                                      std::optional<UnixMs> from,
                                                      std::optional<UnixMs> to, UnixMs now);

// The counts of one bucket (or of a whole window), by StatKind.
struct StatCounts {
    std::array<std::int64_t, 11> by_kind{};
    std::int64_t operator[](StatKind k) const { return by_kind[static_cast<std::size_t>(k)]; }
    std::int64_t bounced() const;
};

}  // namespace posthorn::domain
