#include "mail/dkim.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "crypto/keys.hpp"

namespace posthorn::mail {
namespace {

// RFC 6376 §3.4.5, the worked example.
TEST(DkimRelaxed, HeadersAsInRfc6376Example) {
    EXPECT_EQ(dkim_relaxed_header("A", " X"), "a:X");
    EXPECT_EQ(dkim_relaxed_header("B ", " Y\t\r\n\tZ  "), "b:Y Z");
}

TEST(DkimRelaxed, BodyAsInRfc6376Example) {
    EXPECT_EQ(dkim_relaxed_body(" C \r\nD \t E\r\n\r\n\r\n"), " C\r\nD E\r\n");
    EXPECT_EQ(dkim_relaxed_body(""), "");
    EXPECT_EQ(dkim_relaxed_body("\r\n\r\n"), "");
    EXPECT_EQ(dkim_relaxed_body("no final newline"), "no final newline\r\n");
}

// RFC 6376 §3.4.4 written out character by character, as plainly as it reads: the fast
// paths of dkim_relaxed_body must give the same bytes for any body.
std::string relaxed_body_reference(std::string_view body) {
    std::string out, pending;
    std::size_t pos = 0;
    while (pos < body.size()) {
        auto eol = body.find("\r\n", pos);
        const bool last = eol == std::string_view::npos;
        std::string l;
        bool space = false;
        for (char c : body.substr(pos, (last ? body.size() : eol) - pos)) {
            if (c == ' ' || c == '\t') {
                space = true;
                continue;
            }
            if (space) l += ' ';
            space = false;
            l += c;
        }
        if (l.empty()) {
            pending += "\r\n";
        } else {
            out += pending + l + "\r\n";
            pending.clear();
        }
        if (last) break;
        pos = eol + 2;
    }
    return out;
}

TEST(DkimRelaxed, BodyMatchesTheRuleOnEdgeCasesAndRandomBodies) {
    for (std::string b :
         {" lead", "  two lead", "\tlead tab", "trail ", "trail\t \r\n", "a  b\r\n", "a \t b",
          " \r\n\r\nx\r\n \t\r\n\r\n", "\r\n\r\nx", "x\r\n\r\n\r\ny\r\n", ".\r\n", "a\rb\n c"})
        EXPECT_EQ(dkim_relaxed_body(b), relaxed_body_reference(b)) << b;
    std::srand(7);
    const char alphabet[] = {'a', ' ', ' ', '\t', '\r', '\n', '.', 'b'};
    for (int round = 0; round < 2000; ++round) {
        std::string b;
        const int n = std::rand() % 40;
        for (int i = 0; i < n; ++i) {
            if (std::rand() % 4 == 0)
                b += "\r\n";
            else
                b += alphabet[std::rand() % sizeof alphabet];
        }
        ASSERT_EQ(dkim_relaxed_body(b), relaxed_body_reference(b)) << "body: " << b;
    }
}

// Feedback-ID is signed, and over-signed (Gmail trusts it only under a signature made
// after it was added); Received, a trace field that relays add to, is not.
TEST(DkimSign, SignsFeedbackIdButNotReceived) {
    auto key = crypto::generate_rsa(2048);
    ASSERT_TRUE(key);
    const std::string msg =
        "Received: from c.example (unknown [192.0.2.7])\r\n\tby mx.example.com (posthorn) with "
        "HTTPS id em_1;\r\n\tSat, 21 Nov 2026 10:00:00 +0000\r\nFrom: a@example.com\r\n"
        "Subject: hi\r\nFeedback-ID: :example.com:acc_1:posthorn\r\n\r\nbody\r\n";
    auto signed_msg =
        dkim_sign(msg, {"example.com", "ph1", *crypto::PrivateKey::from_pem(key->private_pem)},
                  1795255200000);
    ASSERT_TRUE(signed_msg);
    EXPECT_NE(signed_msg->find("h=from:from:subject:feedback-id:feedback-id;"), std::string::npos)
        << *signed_msg;
    EXPECT_EQ(signed_msg->find("received", 0), std::string::npos) << *signed_msg;
}

TEST(DkimSign, PrependsASignatureOverThePresentHeaders) {
    auto key = crypto::generate_rsa(2048);
    ASSERT_TRUE(key);
    const std::string msg =
        "From: a@example.com\r\nTo: b@example.net\r\nSubject: hi\r\nX-Other: 1\r\n\r\nbody\r\n";
    auto signed_msg =
        dkim_sign(msg, {"example.com", "ph1", *crypto::PrivateKey::from_pem(key->private_pem)},
                  1795255200000);
    ASSERT_TRUE(signed_msg);
    EXPECT_EQ(signed_msg->rfind(
                  "DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.com; s=ph1;", 0),
              0u)
        << *signed_msg;
    EXPECT_NE(signed_msg->find("h=from:from:to:subject;"), std::string::npos) << *signed_msg;
    EXPECT_EQ(signed_msg->find("x-other"), std::string::npos);
    EXPECT_NE(signed_msg->find("t=1795255200;"), std::string::npos);
    EXPECT_EQ(signed_msg->substr(signed_msg->size() - msg.size()), msg);
    for (std::size_t i = 0, start = 0; i < signed_msg->size(); ++i)
        if ((*signed_msg)[i] == '\n') {
            EXPECT_LE(i - start, 100u) << "folded";
            start = i + 1;
        }
    EXPECT_FALSE(crypto::PrivateKey::from_pem("not a key"));
    EXPECT_FALSE(dkim_sign(msg, {"example.com", "ph1", crypto::PrivateKey{}}, 0));
}

}  // namespace
}  // namespace posthorn::mail

namespace posthorn::mail {
namespace {

// The signature as an independent verifier (python3-dkim, from Debian) sees it.
TEST(DkimSign, VerifiesWithPython3Dkim) {
    if (std::system("/usr/bin/python3 -c 'import dkim' 2>/dev/null") != 0)
        GTEST_SKIP() << "python3-dkim is not installed";
    auto key = crypto::generate_rsa(2048);
    ASSERT_TRUE(key);
    const std::string msg =
        "From: \"Ann\" <a@example.com>\r\nTo: b@example.net,\r\n c@example.net\r\n"
        "Subject:   folded\r\n  subject  \r\nDate: Sun, 22 Nov 2026 02:00:00 +0000\r\n"
        "Message-ID: <x@y>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n"
        "line one  \r\n\r\n.dot\r\n\r\n\r\n";
    auto signed_msg =
        dkim_sign(msg, {"example.com", "ph1", *crypto::PrivateKey::from_pem(key->private_pem)},
                  1795255200000);
    ASSERT_TRUE(signed_msg);
    const std::string dir = ::testing::TempDir();
    {
        std::FILE* f = std::fopen((dir + "/dkim_msg.eml").c_str(), "wb");
        std::fwrite(signed_msg->data(), 1, signed_msg->size(), f);
        std::fclose(f);
        f = std::fopen((dir + "/dkim_pub.txt").c_str(), "wb");
        const std::string txt = "v=DKIM1; k=rsa; p=" + key->public_spki_b64;
        std::fwrite(txt.data(), 1, txt.size(), f);
        std::fclose(f);
    }
    const std::string script =
        "import dkim,sys\n"
        "msg=open(sys.argv[1],'rb').read(); txt=open(sys.argv[2],'rb').read()\n"
        "ok=dkim.verify(msg, dnsfunc=lambda name, timeout=5: txt)\n"
        "sys.exit(0 if ok else 1)\n";
    const std::string cmd = "/usr/bin/python3 -c \"" + std::string("exec(") + "'''" + script +
                            "''')\" " + dir + "/dkim_msg.eml " + dir + "/dkim_pub.txt";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << *signed_msg;

    // Altering a signed header breaks it.
    std::string tampered = *signed_msg;
    tampered.replace(tampered.find("folded"), 6, "FOLDED");
    std::FILE* f = std::fopen((dir + "/dkim_msg.eml").c_str(), "wb");
    std::fwrite(tampered.data(), 1, tampered.size(), f);
    std::fclose(f);
    EXPECT_NE(std::system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace posthorn::mail
