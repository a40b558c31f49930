#include "app/smtp_certificate.hpp"

#include <gtest/gtest.h>

namespace posthorn::app {
namespace {

TEST(SelfSignedNames, NameTheHostLocalhostAndTheListenAddresses) {
    Config c;
    c.smtp.hostname = "mail.example.com";
    c.smtp.submission_listen = {"127.0.0.1", 2587};
    c.smtp.inbound_listen = {"192.0.2.25", 25};
    const auto names = self_signed_names(c);
    EXPECT_EQ(names.dns, (std::vector<std::string>{"mail.example.com", "localhost"}));
    EXPECT_EQ(names.ips, (std::vector<std::string>{"127.0.0.1", "192.0.2.25"}));
}

TEST(SelfSignedNames, AWildcardAddressNamesBothLoopbacksOnce) {
    Config c;
    c.smtp.hostname = "localhost";
    c.smtp.submission_listen = {"0.0.0.0", 587};
    c.smtp.inbound_listen = {"::", 25};
    const auto names = self_signed_names(c);
    EXPECT_EQ(names.dns, (std::vector<std::string>{"localhost"}));
    EXPECT_EQ(names.ips, (std::vector<std::string>{"127.0.0.1", "::1"}));
}

TEST(SelfSignedNames, AnIpv6AddressIsWrittenAsOpenSslReadsIt) {
    Config c;
    c.smtp.submission_listen = {"2001:db8::25", 587};
    c.smtp.inbound_listen = {"::1", 25};
    EXPECT_EQ(self_signed_names(c).ips, (std::vector<std::string>{"2001:db8::25", "::1"}));
}

}  // namespace
}  // namespace posthorn::app
