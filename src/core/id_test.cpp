#include "core/id.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace posthorn {
namespace {

TEST(Id, HasPrefixAndFixedLength) {
    const auto id = new_id("em_", 1795255200123);
    EXPECT_TRUE(is_id(id, "em_")) << id;
    EXPECT_FALSE(is_id(id, "dom_"));
    EXPECT_FALSE(is_id("em_short", "em_"));
    EXPECT_FALSE(is_id("em_0123456789abcdefghjkmnpqrU", "em_"));
}

TEST(Id, SortsByTime) {
    const auto a = new_id("log_", 1795255200123);
    const auto b = new_id("log_", 1795255200124);
    const auto c = new_id("log_", 1895255200000);
    EXPECT_LT(a, b);
    EXPECT_LT(b, c);
}

TEST(Id, SortsInOrderOfMakingWithinOneMillisecond) {
    std::string prev = new_id("log_", 1895255200000);
    for (int i = 0; i < 1000; ++i) {
        auto next = new_id("log_", 1895255200000);
        EXPECT_LT(prev, next);
        prev = std::move(next);
    }
}

TEST(Id, FirstIdAtBoundsTheIdsOfItsMillisecond) {
    const UnixMs t = 1995255200000;
    const auto floor = first_id_at("log_", t);
    EXPECT_TRUE(is_id(floor, "log_"));
    EXPECT_LT(first_id_at("log_", t - 1), floor);
    EXPECT_EQ(floor.substr(0, 14), new_id("log_", t).substr(0, 14)) << "the same time digits";
    EXPECT_LE(floor, new_id("log_", t));
    EXPECT_LT(new_id("log_", t), first_id_at("log_", t + 1));
    // Times an id cannot hold are its ends, so that a bound of the year 1 or 20000 still orders.
    EXPECT_EQ(first_id_at("log_", -62'135'596'800'000), first_id_at("log_", 0));
    EXPECT_EQ(first_id_at("log_", 569'000'000'000'000), first_id_at("log_", (UnixMs{1} << 48) - 1));
}

TEST(Id, IdTimeIsTheMillisecondOfTheId) {
    const UnixMs t = 2095255200123;
    EXPECT_EQ(id_time(new_id("em_", t), "em_"), t);
    EXPECT_EQ(id_time(first_id_at("em_", t + 1), "em_"), t + 1);
    // A clock that steps back: the id keeps the later millisecond, and says so.
    EXPECT_EQ(id_time(new_id("em_", t - 5), "em_"), t);
    EXPECT_EQ(id_time(first_id_at("em_", 0), "em_"), 0);
    EXPECT_EQ(id_time(first_id_at("em_", (UnixMs{1} << 48) - 1), "em_"), (UnixMs{1} << 48) - 1);
}

TEST(Id, DoesNotRepeat) {
    std::set<std::string> seen;
    for (int i = 0; i < 10000; ++i) EXPECT_TRUE(seen.insert(new_id("key_", 42)).second);
}

// Small draws come from a buffer per thread: across its refills, of every size, no draw
// repeats or comes back wiped (all zero), and large draws are whole.
TEST(RandomBytes, SmallDrawsNeverRepeatAcrossRefills) {
    std::set<std::string> seen;
    for (int i = 0; i < 2000; ++i) {
        const std::size_t n = 8 + i % 57;  // 8..64 bytes: refills fall mid-draw
        std::string s(n, '\0');
        random_bytes(s.data(), n);
        EXPECT_NE(s, std::string(n, '\0'));
        EXPECT_TRUE(seen.insert(s).second) << "draw " << i << " repeated";
    }
    std::string big(4096, '\0');
    random_bytes(big.data(), big.size());
    EXPECT_EQ(big.find(std::string(16, '\0')), std::string::npos);
}

}  // namespace
}  // namespace posthorn
