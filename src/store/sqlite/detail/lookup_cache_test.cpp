#include "store/sqlite/detail/lookup_cache.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace posthorn::store::sqlite::detail {
namespace {

namespace fs = std::filesystem;

TEST(LookupCache, AnswersWithinAnEpochAndForgetsWhenItMoves) {
    LookupCache<int> cache;
    EXPECT_FALSE(cache.find("a", 0));
    cache.put("a", 1, 0);
    EXPECT_EQ(cache.find("a", 0), 1);
    EXPECT_FALSE(cache.find("a", 1)) << "a newer epoch empties the cache";
    cache.put("a", 2, 1);
    EXPECT_EQ(cache.find("a", 1), 2);
}

TEST(LookupCache, ARowReadUnderAnOlderEpochIsNotKept) {
    LookupCache<int> cache;
    EXPECT_FALSE(cache.find("a", 3));  // the cache is at epoch 3
    cache.put("a", 1, 2);              // read by a thread that loaded epoch 2 before the change
    EXPECT_FALSE(cache.find("a", 3));
    EXPECT_FALSE(cache.find("a", 2)) << "an older epoch neither answers nor goes back";
    cache.put("a", 5, 3);
    EXPECT_EQ(cache.find("a", 3), 5);
}

TEST(Epoch, IsSharedByEveryMappingOfTheFile) {
    const auto path = fs::temp_directory_path() / ("ph_epoch_test_" + std::to_string(::getpid()));
    fs::remove(path);
    {
        auto a = Epoch::open(path.string());
        auto b = Epoch::open(path.string());  // as another process maps it
        ASSERT_TRUE(a && b);
        EXPECT_EQ(a->load(), 0u);
        a->bump();
        a->bump();
        EXPECT_EQ(b->load(), 2u);
        b->bump();
        EXPECT_EQ(a->load(), 3u);
    }
    auto again = Epoch::open(path.string());
    ASSERT_TRUE(again);
    EXPECT_EQ(again->load(), 3u) << "a later start keeps counting";
    fs::remove(path);
}

TEST(Epoch, AFileThatCannotBeMadeMeansNoCache) {
    auto e = Epoch::open("/nonexistent-dir/x-epoch");
    EXPECT_FALSE(e);
    Epoch none;
    EXPECT_FALSE(none.valid());
    none.bump();  // harmless
    EXPECT_EQ(none.load(), 0u);
}

}  // namespace
}  // namespace posthorn::store::sqlite::detail
