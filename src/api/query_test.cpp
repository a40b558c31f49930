#include "api/query.hpp"

#include <gtest/gtest.h>

namespace posthorn::api {
namespace {

http::Request with_query(http::Fields q) {
    http::Request r;
    r.query = std::move(q);
    return r;
}

TEST(ParseInt, AcceptsOnlyWholeNumbers) {
    EXPECT_EQ(parse_int("0"), 0);
    EXPECT_EQ(parse_int("100"), 100);
    EXPECT_EQ(parse_int("-1"), -1);
    for (const char* bad : {"", "abc", "1.5", "12abc", " 1", "+1", "99999999999999999999"})
        EXPECT_FALSE(parse_int(bad)) << bad;
}

TEST(ParsePaging, DefaultsAndBounds) {
    auto ok = parse_paging(with_query({}), 20, "sortOrder");
    ASSERT_TRUE(std::holds_alternative<Paging>(ok));
    EXPECT_EQ(std::get<Paging>(ok).limit, 20);
    EXPECT_EQ(std::get<Paging>(ok).page, 1);
    EXPECT_EQ(std::get<Paging>(ok).order, store::SortOrder::desc);

    auto full = parse_paging(with_query({{"limit", "100"}, {"page", "3"}, {"sortOrder", "asc"}}),
                             20, "sortOrder");
    ASSERT_TRUE(std::holds_alternative<Paging>(full));
    EXPECT_EQ(std::get<Paging>(full).limit, 100);
    EXPECT_EQ(std::get<Paging>(full).page, 3);
    EXPECT_EQ(std::get<Paging>(full).order, store::SortOrder::asc);

    for (http::Fields bad : std::vector<http::Fields>{{{"limit", "0"}},
                                                      {{"limit", "101"}},
                                                      {{"limit", "abc"}},
                                                      {{"page", "-1"}},
                                                      {{"page", "0"}},
                                                      {{"sortOrder", "x"}}}) {
        auto r = parse_paging(with_query(bad), 20, "sortOrder");
        ASSERT_TRUE(std::holds_alternative<std::string>(r)) << bad[0].first;
        EXPECT_NE(std::get<std::string>(r).find(bad[0].first), std::string::npos);
    }
}

TEST(CheckParams, RefusesUnknownAndRepeatedParameters) {
    EXPECT_FALSE(check_params(with_query({{"limit", "1"}, {"tag", "a:b"}, {"tag", "c:d"}}),
                              {"limit", "tag"}, {"tag"}));
    EXPECT_FALSE(check_params(with_query({}), {"limit"}));
    auto unknown =
        check_params(with_query({{"limit", "1"}, {"sortOrder", "asc"}}), {"limit", "sort_order"});
    ASSERT_TRUE(unknown);
    EXPECT_EQ(*unknown, "unknown query parameter 'sortOrder' (this list takes limit, sort_order)");
    auto twice = check_params(with_query({{"limit", "1"}, {"limit", "2"}}), {"limit"});
    ASSERT_TRUE(twice);
    EXPECT_EQ(*twice, "limit is given more than once");
}

}  // namespace
}  // namespace posthorn::api
