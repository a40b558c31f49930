// What PgStore promises without a server: the URL it may log, and which URLs are its.
#include "store/pg/pg_store.hpp"

#include <gtest/gtest.h>

#include "store/pg/detail/conn.hpp"

namespace posthorn::store::pg {
namespace {

TEST(PostgresUrl, PasswordsAreNeverShown) {
    EXPECT_EQ(redact_url("postgresql://ph:s3cret@db.example:5432/posthorn"),
              "postgresql://ph:***@db.example:5432/posthorn");
    EXPECT_EQ(redact_url("postgres://ph:p%40ss@db/posthorn?sslmode=require"),
              "postgres://ph:***@db/posthorn?sslmode=require");
    EXPECT_EQ(redact_url("postgresql://ph@db/posthorn"), "postgresql://ph@db/posthorn")
        << "no password: as it is";
    EXPECT_EQ(redact_url("postgresql://db/posthorn"), "postgresql://db/posthorn");
    EXPECT_EQ(redact_url("postgresql://ph:a:b@db/x"), "postgresql://ph:***@db/x")
        << "a colon in the password";
    EXPECT_EQ(redact_url("postgresql://ph:pw@[::1]:5432/x"), "postgresql://ph:***@[::1]:5432/x");
    EXPECT_EQ(redact_url("postgresql://db/x?user=ph&password=pw&sslmode=require"),
              "postgresql://db/x?user=ph&password=***&sslmode=require");
    EXPECT_EQ(redact_url("host=db user=ph password=pw dbname=x"),
              "host=db user=ph password=*** dbname=x");
    EXPECT_EQ(redact_url("host=db password='p w\\'x' dbname=x"), "host=db password=*** dbname=x");
    EXPECT_EQ(redact_url("host=db dbname=x"), "host=db dbname=x");
}

TEST(PostgresUrl, PostgresUrlsAreKnown) {
    EXPECT_TRUE(is_pg_url("postgresql://db/x"));
    EXPECT_TRUE(is_pg_url("postgres://db/x"));
    EXPECT_FALSE(is_pg_url("sqlite:///var/lib/posthorn.db"));
    EXPECT_FALSE(is_pg_url("postgresql:/db"));
    EXPECT_FALSE(is_pg_url(""));
}

TEST(PostgresLikePattern, WildcardsAreTakenLiterally) {
    EXPECT_EQ(detail::like_pattern("100% off_now"), "%100\\% off\\_now%");
    EXPECT_EQ(detail::like_pattern("a\\b"), "%a\\\\b%");
    EXPECT_EQ(detail::like_pattern(""), "%%");
}

}  // namespace
}  // namespace posthorn::store::pg
