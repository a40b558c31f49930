#include "mail/auth.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "crypto/keys.hpp"
#include "mail/dkim.hpp"

namespace posthorn::mail {
namespace {

// An in-memory zone; every question is counted. A name in `failing` answers a failure.
class Zone final : public AuthLookup {
  public:
    std::map<std::string, std::vector<std::string>> txts, mxs, ips;
    std::vector<std::string> failing;
    int questions = 0;

    Status txt(const std::string& name, std::vector<std::string>& out) override {
        return answer(txts, name, out);
    }
    Status mx(const std::string& name, std::vector<std::string>& out) override {
        return answer(mxs, name, out);
    }
    Status addresses(const std::string& name, std::vector<std::string>& out) override {
        return answer(ips, name, out);
    }

  private:
    Status answer(const std::map<std::string, std::vector<std::string>>& m, const std::string& name,
                  std::vector<std::string>& out) {
        ++questions;
        for (const auto& f : failing)
            if (f == name) return Status::failed;
        auto it = m.find(name);
        if (it == m.end()) return Status::not_found;
        out = it->second;
        return Status::ok;
    }
};

AuthInput input(std::string mail_from, std::string_view message, std::string from_domain = "") {
    return {.client_ip = "192.0.2.10",
            .helo = "client.example.net",
            .mail_from = std::move(mail_from),
            .from_domain = std::move(from_domain),
            .message = message};
}

constexpr std::string_view kPlain =
    "From: a@example.com\r\nTo: b@example.net\r\nSubject: hi\r\n\r\nbody\r\n";

TEST(AuthSpf, ResultsOfTheRecord) {
    Zone z;
    z.txts["pass.example"] = {"v=spf1 ip4:192.0.2.0/24 -all"};
    z.txts["fail.example"] = {"v=spf1 ip4:198.51.100.1 -all"};
    z.txts["soft.example"] = {"v=spf1 ~all"};
    z.txts["neutral.example"] = {"v=spf1 ?all"};
    z.txts["other.example"] = {"not spf"};
    z.txts["bad.example"] = {"v=spf1 bogus:x -all"};
    z.txts["mx.example"] = {"v=spf1 mx -all"};
    z.mxs["mx.example"] = {"mail.mx.example"};
    z.ips["mail.mx.example"] = {"2001:db8::1", "192.0.2.10"};
    z.failing = {"broken.example"};
    auto spf = [&](const std::string& from) {
        return check_authentication(input(from, kPlain), z).spf.result;
    };
    EXPECT_EQ(spf("x@pass.example"), "pass");
    EXPECT_EQ(spf("x@fail.example"), "fail");
    EXPECT_EQ(spf("x@soft.example"), "softfail");
    EXPECT_EQ(spf("x@neutral.example"), "neutral");
    EXPECT_EQ(spf("x@other.example"), "none");
    EXPECT_EQ(spf("x@nothing.example"), "none");
    EXPECT_EQ(spf("x@bad.example"), "permerror");
    EXPECT_EQ(spf("x@broken.example"), "temperror");
    EXPECT_EQ(spf("x@mx.example"), "pass");
    auto r = check_authentication(input("x@Pass.Example", kPlain), z).spf;
    EXPECT_EQ(r.domain, "pass.example");
    EXPECT_EQ(r.scope, "mailfrom");
}

TEST(AuthSpf, NullSenderChecksTheHelo) {
    Zone z;
    z.txts["client.example.net"] = {"v=spf1 ip4:192.0.2.10 -all"};
    auto in = input("", kPlain);
    auto r = check_authentication(in, z).spf;
    EXPECT_EQ(r.result, "pass");
    EXPECT_EQ(r.scope, "helo");
    EXPECT_EQ(r.domain, "client.example.net");
    in.client_ip = "::ffff:192.0.2.11";
    EXPECT_EQ(check_authentication(in, z).spf.result, "fail");
}

// libspf2's own query answers "pass" to any loopback client; ours reads the record.
TEST(AuthSpf, LoopbackClientsAreCheckedLikeAnyOther) {
    Zone z;
    z.txts["hard.example"] = {"v=spf1 -all"};
    z.txts["lo.example"] = {"v=spf1 ip4:127.0.0.1 ip6:::1 -all"};
    auto in = input("x@hard.example", kPlain);
    in.client_ip = "127.0.0.1";
    EXPECT_EQ(check_authentication(in, z).spf.result, "fail");
    in.client_ip = "::1";
    EXPECT_EQ(check_authentication(in, z).spf.result, "fail");
    in.mail_from = "x@lo.example";
    EXPECT_EQ(check_authentication(in, z).spf.result, "pass");
    in.client_ip = "127.0.0.2";
    EXPECT_EQ(check_authentication(in, z).spf.result, "fail");
}

// RFC 7208 §4.6.4: more than 10 mechanisms that ask DNS is a permerror; an include loop
// never runs on.
TEST(AuthSpf, DnsLookupsAreBounded) {
    Zone z;
    std::string many = "v=spf1";
    for (int i = 0; i < 12; ++i) many += " a:h" + std::to_string(i) + ".example";
    z.txts["many.example"] = {many + " -all"};
    z.txts["loop.example"] = {"v=spf1 include:loop.example -all"};
    EXPECT_EQ(check_authentication(input("x@many.example", kPlain), z).spf.result, "permerror");
    z.questions = 0;
    const auto loop = check_authentication(input("x@loop.example", kPlain), z).spf.result;
    EXPECT_TRUE(loop == "permerror" || loop == "temperror") << loop;
    EXPECT_LE(z.questions, 15);
}

class AuthDkim : public ::testing::Test {
  protected:
    void SetUp() override {
        auto pair = crypto::generate_rsa(2048);
        ASSERT_TRUE(pair);
        key_ = *crypto::PrivateKey::from_pem(pair->private_pem);
        zone_.txts["sel._domainkey.example.com"] = {"v=DKIM1; k=rsa; p=" + pair->public_spki_b64};
        zone_.txts["example.com"] = {"v=spf1 ip4:192.0.2.10 -all"};
    }
    std::string sign(std::string_view msg, std::string domain = "example.com") {
        const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        auto s = dkim_sign(msg, {std::move(domain), "sel", key_}, now);
        EXPECT_TRUE(s);
        return s ? *s : "";
    }
    crypto::PrivateKey key_;
    Zone zone_;
};

TEST_F(AuthDkim, PassFailAndNoKey) {
    const auto signed_msg = sign(kPlain);
    auto r = check_authentication(input("a@example.com", signed_msg, "example.com"), zone_);
    ASSERT_EQ(r.dkim.size(), 1u);
    EXPECT_EQ(r.dkim[0].result, "pass");
    EXPECT_EQ(r.dkim[0].domain, "example.com");
    EXPECT_EQ(r.dkim[0].selector, "sel");

    auto tampered = signed_msg;
    tampered.replace(tampered.rfind("body"), 4, "BODY");
    r = check_authentication(input("a@example.com", tampered, "example.com"), zone_);
    ASSERT_EQ(r.dkim.size(), 1u);
    EXPECT_EQ(r.dkim[0].result, "fail");

    auto unknown = sign(kPlain, "nokey.example");
    r = check_authentication(input("a@example.com", unknown, "example.com"), zone_);
    ASSERT_EQ(r.dkim.size(), 1u);
    EXPECT_EQ(r.dkim[0].result, "permerror");
    EXPECT_EQ(r.dkim[0].domain, "nokey.example");

    zone_.failing = {"sel._domainkey.example.com"};
    r = check_authentication(input("a@example.com", signed_msg, "example.com"), zone_);
    ASSERT_EQ(r.dkim.size(), 1u);
    EXPECT_EQ(r.dkim[0].result, "temperror");

    r = check_authentication(input("a@example.com", kPlain, "example.com"), zone_);
    EXPECT_TRUE(r.dkim.empty());
}

TEST_F(AuthDkim, SignaturesAreBounded) {
    std::string msg(kPlain);
    for (int i = 0; i < 8; ++i) msg = sign(msg);
    zone_.questions = 0;
    auto r = check_authentication(input("a@example.com", msg, "example.com"), zone_,
                                  {.max_dkim_signatures = 3});
    EXPECT_EQ(r.dkim.size(), 3u);
    for (const auto& d : r.dkim) EXPECT_EQ(d.result, "pass");
}

TEST_F(AuthDkim, Dmarc) {
    zone_.txts["_dmarc.example.com"] = {"v=DMARC1; p=reject"};
    const auto signed_msg = sign(kPlain);
    // Both aligned.
    auto r = check_authentication(input("a@example.com", signed_msg, "example.com"), zone_);
    EXPECT_EQ(r.dmarc.result, "pass");
    EXPECT_EQ(r.dmarc.policy, "reject");
    EXPECT_EQ(r.dmarc.domain, "example.com");
    EXPECT_TRUE(r.dmarc.spf_aligned);
    EXPECT_TRUE(r.dmarc.dkim_aligned);
    // SPF passes for another domain, the signature is of another domain: not aligned.
    zone_.txts["other.example"] = {"v=spf1 ip4:192.0.2.10 -all"};
    auto foreign = sign(kPlain, "other.example");
    zone_.txts["sel._domainkey.other.example"] = zone_.txts["sel._domainkey.example.com"];
    r = check_authentication(input("a@other.example", foreign, "example.com"), zone_);
    EXPECT_EQ(r.spf.result, "pass");
    ASSERT_EQ(r.dkim.size(), 1u);
    EXPECT_EQ(r.dkim[0].result, "pass");
    EXPECT_EQ(r.dmarc.result, "fail");
    EXPECT_EQ(r.dmarc.policy, "reject");
    EXPECT_FALSE(r.dmarc.spf_aligned);
    EXPECT_FALSE(r.dmarc.dkim_aligned);
    // A subdomain's From, relaxed alignment, the organizational domain's record.
    r = check_authentication(input("a@example.com", signed_msg, "news.example.com"), zone_);
    EXPECT_EQ(r.dmarc.result, "pass");
    EXPECT_EQ(r.dmarc.policy, "reject");
    EXPECT_TRUE(r.dmarc.dkim_aligned);
    // No record.
    r = check_authentication(input("a@other.example", foreign, "other.example"), zone_);
    EXPECT_EQ(r.dmarc.result, "none");
    EXPECT_EQ(r.dmarc.policy, "");
    // The record cannot be read.
    zone_.failing = {"_dmarc.example.com"};
    r = check_authentication(input("a@example.com", signed_msg, "example.com"), zone_);
    EXPECT_EQ(r.dmarc.result, "temperror");
}

}  // namespace
}  // namespace posthorn::mail
