#include "core/time.hpp"

#include <gtest/gtest.h>

namespace posthorn {
namespace {

TEST(Iso8601, FormatsUtcWithMilliseconds) {
    EXPECT_EQ(format_iso8601(0), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(format_iso8601(1795255200123), "2026-11-21T10:00:00.123Z");
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
