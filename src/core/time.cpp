#include "core/time.hpp"

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

// The fields of an instant in UTC. Written digit by digit below: every answer about an
// email carries a few timestamps, and fmt::format took 5,000 instructions for each.
struct Civil {
    year_month_day ymd;
    hh_mm_ss<milliseconds> tod;
    weekday wd;
};

Civil civil(UnixMs ms) {
    const sys_time<milliseconds> tp{milliseconds{ms}};
    const auto day = floor<days>(tp);
    return {year_month_day{day}, hh_mm_ss<milliseconds>{tp - day}, weekday{day}};
}

// `n` as `width` decimal digits, zero-padded (a year past 9999 gets all its digits).
void put(std::string& out, long long n, int width) {
    if (n < 0 || n >= (width == 4 ? 10000 : width == 3 ? 1000 : 100)) {
        out += std::to_string(n);
        return;
    }
    char digits[4];
    for (int i = width - 1; i >= 0; --i) {
        digits[i] = static_cast<char>('0' + n % 10);
        n /= 10;
    }
    out.append(digits, static_cast<std::size_t>(width));
}

// "hh:mm:ss", both forms' time of day.
void put_time_of_day(std::string& out, const hh_mm_ss<milliseconds>& tod) {
    put(out, tod.hours().count(), 2);
    out += ':';
    put(out, tod.minutes().count(), 2);
    out += ':';
    put(out, tod.seconds().count(), 2);
}

}  // namespace

std::string format_iso8601(UnixMs ms) {
    const auto c = civil(ms);
    std::string out;
    out.reserve(24);
    put(out, static_cast<int>(c.ymd.year()), 4);
    out += '-';
    put(out, static_cast<unsigned>(c.ymd.month()), 2);
    out += '-';
    put(out, static_cast<unsigned>(c.ymd.day()), 2);
    out += 'T';
    put_time_of_day(out, c.tod);
    out += '.';
    put(out, c.tod.subseconds().count(), 3);
    out += 'Z';
    return out;
}

std::string format_rfc5322(UnixMs ms) {
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto c = civil(ms);
    std::string out;
    out.reserve(32);
    out.append(kDays[c.wd.c_encoding()]).append(", ");
    put(out, static_cast<unsigned>(c.ymd.day()), 2);
    out.append(" ").append(kMonths[static_cast<unsigned>(c.ymd.month()) - 1]).append(" ");
    put(out, static_cast<int>(c.ymd.year()), 4);
    out += ' ';
    put_time_of_day(out, c.tod);
    out.append(" +0000");
    return out;
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
