#include "delivery/router.hpp"

#include <gtest/gtest.h>

#include "core/block_on.hpp"
#include "dns/testing/static_resolver.hpp"

namespace posthorn::delivery {
namespace {

asio::ip::address ip(const char* s) { return asio::ip::make_address(s); }

class RouterTest : public ::testing::Test {
  protected:
    std::variant<std::vector<Target>, AttemptResult> route_of(std::string domain,
                                                              bool allow_private,
                                                              std::optional<Relay> relay = {}) {
        return block_on(route(zone_, std::move(domain), relay, 25, allow_private));
    }
    dns::StaticResolver zone_;
};

TEST_F(RouterTest, PrivateMxAddressesAreNoTargetsUnlessAllowed) {
    zone_.add_mx("inside.test", "mx.inside.test").add_address("mx.inside.test", ip("10.0.0.5"));
    zone_.add_mx("mixed.test", "a.mixed.test", 10).add_mx("mixed.test", "b.mixed.test", 20);
    zone_.add_address("a.mixed.test", ip("127.0.0.1")).add_address("b.mixed.test", ip("192.0.2.1"));
    zone_.add_address("b.mixed.test", ip("8.8.8.8"));

    auto r = route_of("inside.test", false);
    const auto* refused = std::get_if<AttemptResult>(&r);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->trouble, domain::Trouble::no_address);
    EXPECT_EQ(refused->text,
              "the mail servers of inside.test are at private or special-purpose addresses "
              "only (10.0.0.5), which delivery.allow_private_targets refuses");

    // Only the public address of the second MX is left (192.0.2.1 is TEST-NET-1).
    r = route_of("mixed.test", false);
    ASSERT_TRUE(std::holds_alternative<std::vector<Target>>(r));
    const auto& targets = std::get<std::vector<Target>>(r);
    ASSERT_EQ(targets.size(), 1u);
    EXPECT_EQ(targets[0].host, "b.mixed.test");
    EXPECT_EQ(targets[0].endpoint.address(), ip("8.8.8.8"));

    // Allowed: every address, in order.
    r = route_of("mixed.test", true);
    ASSERT_TRUE(std::holds_alternative<std::vector<Target>>(r));
    EXPECT_EQ(std::get<std::vector<Target>>(r).size(), 3u);
    // The relay is the operator's: not checked.
    r = route_of("inside.test", false, Relay{"127.0.0.1", 2525});
    ASSERT_TRUE(std::holds_alternative<std::vector<Target>>(r));
    EXPECT_EQ(std::get<std::vector<Target>>(r).front().endpoint.port(), 2525);
}

}  // namespace
}  // namespace posthorn::delivery
