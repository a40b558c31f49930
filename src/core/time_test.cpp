#include "core/time.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <ctime>

namespace posthorn {
namespace {

TEST(Iso8601, FormatsUtcWithMilliseconds) {
    EXPECT_EQ(format_iso8601(0), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(format_iso8601(1795255200123), "2026-11-21T10:00:00.123Z");
}

// Both text forms against the C library's strftime, over instants from 1970 to 9999.
TEST(TimeFormats, MatchStrftime) {
    std::uint64_t seed = 7;
    for (int i = 0; i < 20000; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const UnixMs ms =
            i < 10 ? UnixMs{i} * 86'399'999 : static_cast<UnixMs>(seed >> 17) % 253402300800000;
        const std::time_t t = static_cast<std::time_t>(ms / 1000);
        std::tm tm{};
        gmtime_r(&t, &tm);
        char date[64], iso[64];
        std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
        std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
        char millis[8];
        std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(ms % 1000));
        ASSERT_EQ(format_rfc5322(ms), date) << ms;
        ASSERT_EQ(format_iso8601(ms), std::string(iso) + millis) << ms;
    }
    EXPECT_EQ(format_rfc5322(1795255200123), "Sat, 21 Nov 2026 10:00:00 +0000");
    EXPECT_EQ(format_rfc5322(0), "Thu, 01 Jan 1970 00:00:00 +0000");
}

TEST(Iso8601, RoundTrips) {
    for (UnixMs t : {UnixMs{0}, UnixMs{951782400000}, UnixMs{1795255200123}, UnixMs{4102444799999}})
        EXPECT_EQ(parse_iso8601(format_iso8601(t)), t);
}

TEST(Iso8601, AcceptsDatesAndOffsets) {
    EXPECT_EQ(parse_iso8601("2026-11-21"), 1795219200000);
    EXPECT_EQ(parse_iso8601("2026-11-21T10:00:00Z"), 1795255200000);
    EXPECT_EQ(parse_iso8601("2026-11-21T11:00:00+01:00"), 1795255200000);
    EXPECT_EQ(parse_iso8601("2026-11-21T10:00Z"), 1795255200000);
    EXPECT_EQ(parse_iso8601("2026-11-21T10:00:00.5Z"), 1795255200500);
}

TEST(Iso8601, RejectsGarbage) {
    for (const char* bad :
         {"", "yesterday", "2026-13-01", "2026-02-30", "2026-11-21T25:00:00Z",
          "2026-11-21T10:00:00Zjunk", "2026-11-21T10", "2026/11/21", "2026-11-21T10:00:00.Z"})
        EXPECT_FALSE(parse_iso8601(bad).has_value()) << bad;
}

}  // namespace
}  // namespace posthorn
