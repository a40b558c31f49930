#include "app/store_copy.hpp"

#include <gtest/gtest.h>

namespace posthorn::app {
namespace {

TEST(CopyEnds, ASqliteFileIntoAPostgresDatabase) {
    auto e = copy_ends("sqlite:///var/lib/posthorn/posthorn.db",
                       "postgresql://ph:s3cret@db.example:5432/posthorn?sslmode=require");
    ASSERT_FALSE(e.problem) << *e.problem;
    EXPECT_EQ(e.sqlite_path, "/var/lib/posthorn/posthorn.db");
    EXPECT_EQ(e.pg_url, "postgresql://ph:s3cret@db.example:5432/posthorn?sslmode=require");
    EXPECT_EQ(e.shown_to, "postgresql://ph:***@db.example:5432/posthorn?sslmode=require");
    auto relative = copy_ends("sqlite://data/posthorn.db", "postgres://db/posthorn");
    ASSERT_FALSE(relative.problem);
    EXPECT_EQ(relative.sqlite_path, "data/posthorn.db");
}

TEST(CopyEnds, TheWrongWayRoundIsRefused) {
    auto e = copy_ends("postgresql://ph:s3cret@db/posthorn", "sqlite:///tmp/x.db");
    ASSERT_TRUE(e.problem);
    EXPECT_NE(e.problem->find("--from"), std::string::npos) << *e.problem;
    EXPECT_EQ(e.problem->find("s3cret"), std::string::npos) << *e.problem;
    auto to = copy_ends("sqlite:///tmp/x.db", "sqlite:///tmp/y.db");
    ASSERT_TRUE(to.problem);
    EXPECT_NE(to.problem->find("--to"), std::string::npos) << *to.problem;
}

TEST(CopyEnds, OtherSchemesAndEmptyPathsAreRefusedWithoutShowingAPassword) {
    EXPECT_TRUE(copy_ends("/var/lib/posthorn.db", "postgresql://db/p").problem);
    EXPECT_TRUE(copy_ends("sqlite://", "postgresql://db/p").problem);
    EXPECT_TRUE(copy_ends("sqlite:///x.db", "").problem);
    auto e = copy_ends("sqlite:///x.db", "mysql://root:hunter2@db/p");
    ASSERT_TRUE(e.problem);
    EXPECT_EQ(e.problem->find("hunter2"), std::string::npos) << *e.problem;
    EXPECT_NE(e.problem->find("mysql://root:***@db/p"), std::string::npos) << *e.problem;
    auto kv = copy_ends("sqlite:///x.db", "host=db password=hunter2");
    ASSERT_TRUE(kv.problem);
    EXPECT_EQ(kv.problem->find("hunter2"), std::string::npos) << *kv.problem;
}

}  // namespace
}  // namespace posthorn::app
