#include "app/store_open.hpp"

#include <gtest/gtest.h>

namespace posthorn::app {
namespace {

TEST(DatabaseForLog, APostgresPasswordIsNeverShown) {
    Config c;
    c.database.url = "postgresql://ph:s3cret@db.example:5432/posthorn?sslmode=require";
    EXPECT_EQ(database_for_log(c), "postgresql://ph:***@db.example:5432/posthorn?sslmode=require");
    c.database.url = "sqlite:///var/lib/posthorn/posthorn.db";
    EXPECT_EQ(database_for_log(c), "sqlite:///var/lib/posthorn/posthorn.db") << "as it is";
}

}  // namespace
}  // namespace posthorn::app
