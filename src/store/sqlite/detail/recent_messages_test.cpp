#include "store/sqlite/detail/recent_messages.hpp"

#include <gtest/gtest.h>

namespace posthorn::store::sqlite::detail {
namespace {

std::shared_ptr<const std::string> message(std::size_t bytes, char c) {
    return std::make_shared<const std::string>(bytes, c);
}

TEST(RecentMessages, KeepsTheNewestWithinItsBudgetPerAccount) {
    RecentMessages cache(1000);
    auto a = message(200, 'a'), b = message(200, 'b'), c = message(200, 'c');
    cache.put("acc_1", "em_a", a, a.get());
    cache.put("acc_1", "em_b", b, b.get());
    EXPECT_EQ(cache.find("acc_1", "em_a"), *a);
    EXPECT_FALSE(cache.find("acc_2", "em_a")) << "another account's is not found";
    EXPECT_FALSE(cache.find("acc_1", "em_x"));
    cache.put("acc_1", "em_c", c, c.get());
    for (int i = 0; i < 3; ++i) {
        auto more = message(200, static_cast<char>('d' + i));
        cache.put("acc_1", "em_" + std::to_string(i), more, more.get());
    }
    // 6 x 200 bytes over a budget of 1000: the oldest went.
    EXPECT_FALSE(cache.find("acc_1", "em_a"));
    EXPECT_EQ(cache.find("acc_1", "em_b"), *b);
    EXPECT_EQ(cache.find("acc_1", "em_2"), std::string(200, 'f'));
    auto big = message(300, 'z');  // over a quarter of the budget: not kept
    cache.put("acc_1", "em_big", big, big.get());
    EXPECT_FALSE(cache.find("acc_1", "em_big"));
    EXPECT_EQ(cache.find("acc_1", "em_b"), *b) << "and it pushed nothing out";
}

}  // namespace
}  // namespace posthorn::store::sqlite::detail
