#include "api/detail/context.hpp"

#include <gtest/gtest.h>

#include "store/errors.hpp"

namespace posthorn::api {
namespace {

std::string header(const http::Response& r, std::string_view name) {
    for (const auto& [k, v] : r.headers)
        if (k == name) return v;
    return {};
}

// A store error is answered for what it is: unreachable and busy are 503 with the wait the
// client should make; anything else is a 500 that names the work, not the error.
TEST(InternalError, AnswersTheStoresRefusalsWith503AndARetryAfter) {
    const auto lost = detail::internal_error("read the key", store::errc::unavailable);
    EXPECT_EQ(lost.status, 503u);
    EXPECT_NE(lost.body.find("STORE_UNAVAILABLE"), std::string::npos);
    EXPECT_EQ(header(lost, "Retry-After"), "5");

    const auto busy = detail::internal_error("revoke the key", store::errc::busy);
    EXPECT_EQ(busy.status, 503u);
    EXPECT_NE(busy.body.find("STORE_UNAVAILABLE"), std::string::npos);
    EXPECT_NE(busy.body.find("busy"), std::string::npos);
    EXPECT_EQ(header(busy, "Retry-After"), "1");

    const auto other = detail::internal_error("revoke the key", store::errc::io);
    EXPECT_EQ(other.status, 500u);
    EXPECT_NE(other.body.find("INTERNAL_ERROR"), std::string::npos);
    EXPECT_NE(other.body.find("could not revoke the key"), std::string::npos);
    EXPECT_EQ(header(other, "Retry-After"), "");
}

}  // namespace
}  // namespace posthorn::api
