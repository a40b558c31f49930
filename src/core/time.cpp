#include "core/time.hpp"

#include <fmt/format.h>

#include <cctype>
#include <chrono>

namespace posthorn {
namespace {

using namespace std::chrono;

bool take_digits(std::string_view& s, std::size_t n, int& out) {
    if (s.size() < n) return false;
    int v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    s.remove_prefix(n);
    return true;
}

bool take_char(std::string_view& s, char c) {
    if (s.empty() || s.front() != c) return false;
    s.remove_prefix(1);
    return true;
}

}  // namespace

std::string format_iso8601(UnixMs ms) {
    const sys_time<milliseconds> tp{milliseconds{ms}};
    const auto day = floor<days>(tp);
    const year_month_day ymd{day};
    const hh_mm_ss<milliseconds> tod{tp - day};
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(ymd.year()),
                       static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                       tod.hours().count(), tod.minutes().count(), tod.seconds().count(),
                       tod.subseconds().count());
}

std::optional<UnixMs> parse_iso8601(std::string_view s) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
    if (!take_digits(s, 4, y) || !take_char(s, '-') || !take_digits(s, 2, mo) ||
        !take_char(s, '-') || !take_digits(s, 2, d))
        return std::nullopt;
    const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                             day{static_cast<unsigned>(d)}};
    if (!ymd.ok()) return std::nullopt;
    long long frac_ms = 0;
    long long offset_min = 0;
    if (!s.empty()) {
        if (!take_char(s, 'T') && !take_char(s, 't') && !take_char(s, ' ')) return std::nullopt;
        if (!take_digits(s, 2, h) || !take_char(s, ':') || !take_digits(s, 2, mi))
            return std::nullopt;
        if (take_char(s, ':') && !take_digits(s, 2, sec)) return std::nullopt;
        if (h > 23 || mi > 59 || sec > 59) return std::nullopt;
        if (take_char(s, '.')) {
            std::size_t n = 0;
            long long scale = 100;
            while (!s.empty() && std::isdigit(static_cast<unsigned char>(s.front())) && n < 9) {
                frac_ms += (s.front() - '0') * scale;
                scale /= 10;
                s.remove_prefix(1);
                ++n;
            }
            if (n == 0) return std::nullopt;
        }
        if (take_char(s, 'Z') || take_char(s, 'z')) {
        } else if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
            const int sign = s.front() == '-' ? -1 : 1;
            s.remove_prefix(1);
            int oh = 0, om = 0;
            if (!take_digits(s, 2, oh)) return std::nullopt;
            take_char(s, ':');
            if (!take_digits(s, 2, om) || oh > 23 || om > 59) return std::nullopt;
            offset_min = sign * (oh * 60 + om);
        }
        if (!s.empty()) return std::nullopt;
    }
    const auto tp = sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} - minutes{offset_min} +
                    milliseconds{frac_ms};
    return duration_cast<milliseconds>(tp.time_since_epoch()).count();
}

}  // namespace posthorn
