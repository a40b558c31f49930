#include "api/inbound_auth.hpp"

#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>
#include <boost/json/parse.hpp>

#include "core/block_on.hpp"
#include "dns/testing/static_resolver.hpp"

namespace posthorn::api {
namespace {

namespace json = boost::json;

json::object check(dns::Resolver& r, std::chrono::milliseconds budget) {
    asio::thread_pool pool(1);
    mail::AuthInput in{.client_ip = "192.0.2.1",
                       .helo = "client.example",
                       .mail_from = "x@a.example",
                       .from_domain = "a.example",
                       .message = "From: x@a.example\r\nSubject: s\r\n\r\nbody\r\n"};
    auto aw = authenticate_inbound(r, pool.get_executor(), std::move(in), budget);
    auto out = json::parse(block_on(std::move(aw))).as_object();
    pool.join();
    return out;
}

// The resolver's answers reach the checks: a record, a name without one (none), a failure.
TEST(InboundAuth, AsksTheResolver) {
    dns::StaticResolver r;
    r.add_txt("a.example", "v=spf1 ip4:192.0.2.1 -all");
    r.add_txt("_dmarc.a.example", "v=DMARC1; p=quarantine");
    auto j = check(r, std::chrono::seconds(15));
    EXPECT_EQ(j.at("spf").at("result").as_string(), "pass");
    EXPECT_EQ(j.at("spf").at("domain").as_string(), "a.example");
    EXPECT_EQ(j.at("spf").at("scope").as_string(), "mailfrom");
    EXPECT_TRUE(j.at("dkim").as_array().empty());
    EXPECT_EQ(j.at("dmarc").at("result").as_string(), "pass");
    EXPECT_EQ(j.at("dmarc").at("policy").as_string(), "quarantine");
    EXPECT_EQ(j.at("dmarc").at("spf_aligned").as_bool(), true);

    dns::StaticResolver empty;
    j = check(empty, std::chrono::seconds(15));
    EXPECT_EQ(j.at("spf").at("result").as_string(), "none");
    EXPECT_EQ(j.at("dmarc").at("result").as_string(), "none");
    EXPECT_TRUE(j.at("dmarc").at("policy").is_null());

    dns::StaticResolver failing;
    failing.add_failure("a.example", dns::errc::servfail);
    failing.add_failure("_dmarc.a.example", dns::errc::timeout);
    j = check(failing, std::chrono::seconds(15));
    EXPECT_EQ(j.at("spf").at("result").as_string(), "temperror");
    EXPECT_EQ(j.at("dmarc").at("result").as_string(), "temperror");
}

// Past the message's budget no question is asked: the checks are temperrors.
TEST(InboundAuth, TheBudgetBoundsTheWait) {
    dns::StaticResolver r;
    r.add_txt("a.example", "v=spf1 ip4:192.0.2.1 -all");
    r.add_txt("_dmarc.a.example", "v=DMARC1; p=reject");
    auto j = check(r, std::chrono::milliseconds(0));
    EXPECT_EQ(j.at("spf").at("result").as_string(), "temperror");
    EXPECT_EQ(j.at("dmarc").at("result").as_string(), "temperror");
}

}  // namespace
}  // namespace posthorn::api
