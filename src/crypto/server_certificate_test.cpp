#include "crypto/server_certificate.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/c_ptr.hpp"

namespace posthorn::crypto {
namespace {

namespace fs = std::filesystem;
using X509Ptr = CPtr<X509, X509_free>;
using PkeyPtr = CPtr<EVP_PKEY, EVP_PKEY_free>;

const SubjectNames kNames{.dns = {"mail.test", "localhost"}, .ips = {"127.0.0.1", "::1"}};

class TempDir {
  public:
    TempDir() : path_(::testing::TempDir() + "server_certificate_test_XXXXXX") {
        if (::mkdtemp(path_.data()) == nullptr) throw std::runtime_error("mkdtemp");
    }
    ~TempDir() { fs::remove_all(path_); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&&) = delete;
    TempDir& operator=(TempDir&&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

X509Ptr read_cert(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return nullptr;
    X509Ptr cert(PEM_read_X509(f, nullptr, nullptr, nullptr));
    std::fclose(f);
    return cert;
}

std::string sha256(const X509* cert) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    X509_digest(cert, EVP_sha256(), md, &n);
    return std::string(reinterpret_cast<const char*>(md), n);
}

// What OpenSSL says of `cert` verified against itself as the only trusted CA, for `host`,
// with the strict checks Python 3.13's default context turns on.
std::string verify_as_own_ca(X509* cert, const std::string& host) {
    CPtr<X509_STORE, X509_STORE_free> store(X509_STORE_new());
    X509_STORE_add_cert(store.get(), cert);
    CPtr<X509_STORE_CTX, X509_STORE_CTX_free> ctx(X509_STORE_CTX_new());
    X509_STORE_CTX_init(ctx.get(), store.get(), cert, nullptr);
    X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_X509_STRICT | X509_V_FLAG_PARTIAL_CHAIN);
    X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
    if (host.find(':') != std::string::npos || host.find_first_not_of("0123456789.") == host.npos)
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
    else
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    if (X509_verify_cert(ctx.get()) == 1) return "ok";
    return X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
}

// The SHA-256 of the certificate a client is shown by a server on `server`: a handshake in
// memory (a BIO pair), as a TCP connection would carry it.
std::string presented(boost::asio::ssl::context& server) {
    CPtr<SSL_CTX, SSL_CTX_free> cctx(SSL_CTX_new(TLS_client_method()));
    CPtr<SSL, SSL_free> client(SSL_new(cctx.get()));
    CPtr<SSL, SSL_free> srv(SSL_new(server.native_handle()));
    BIO* a = nullptr;
    BIO* b = nullptr;
    BIO_new_bio_pair(&a, 0, &b, 0);
    SSL_set_bio(client.get(), a, a);
    SSL_set_bio(srv.get(), b, b);
    SSL_set_connect_state(client.get());
    SSL_set_accept_state(srv.get());
    for (int i = 0; i < 20; ++i) {
        const int c = SSL_do_handshake(client.get());
        const int s = SSL_do_handshake(srv.get());
        if (c == 1 && s == 1) break;
    }
    const X509* peer = SSL_get0_peer_certificate(client.get());
    return peer != nullptr ? sha256(peer) : std::string("no handshake");
}

TEST(EnsureSelfSigned, NamesEveryNameAndVerifiesAsItsOwnCa) {
    TempDir dir;
    const auto made = ensure_self_signed(dir.path(), kNames);
    EXPECT_EQ(made.made, "new");
    EXPECT_EQ(made.cert_path, dir.path() + "/tls.crt");
    auto cert = read_cert(made.cert_path);
    ASSERT_TRUE(cert);
    for (const std::string host : {"mail.test", "localhost", "127.0.0.1", "::1"})
        EXPECT_EQ(verify_as_own_ca(cert.get(), host), "ok") << host;
    EXPECT_NE(verify_as_own_ca(cert.get(), "other.test"), "ok") << "only the names given";
    EXPECT_NE(verify_as_own_ca(cert.get(), "10.0.0.1"), "ok");
    struct stat st {};
    ASSERT_EQ(::stat(made.key_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_FALSE(fs::exists(made.key_path + ".tmp"));
}

TEST(EnsureSelfSigned, KeepsAPairThatNamesEverything) {
    TempDir dir;
    const auto first = ensure_self_signed(dir.path(), kNames);
    const auto cert = slurp(first.cert_path), key = slurp(first.key_path);
    const auto again = ensure_self_signed(dir.path(), kNames);
    EXPECT_EQ(again.made, "");
    EXPECT_EQ(slurp(again.cert_path), cert);
    EXPECT_EQ(slurp(again.key_path), key);
    // Fewer names than it has: still kept.
    EXPECT_EQ(ensure_self_signed(dir.path(), {.dns = {"localhost"}}).made, "");
}

TEST(EnsureSelfSigned, MakesItAgainWhenANameIsMissing) {
    TempDir dir;
    const auto first = ensure_self_signed(dir.path(), kNames);
    const auto before = slurp(first.cert_path);
    auto names = kNames;
    names.ips.emplace_back("192.0.2.7");
    const auto again = ensure_self_signed(dir.path(), names);
    EXPECT_EQ(again.made, "no subjectAltName IP:192.0.2.7");
    EXPECT_NE(slurp(again.cert_path), before);
    auto cert = read_cert(again.cert_path);
    ASSERT_TRUE(cert);
    EXPECT_EQ(verify_as_own_ca(cert.get(), "192.0.2.7"), "ok");
    names.dns.front() = "mx.other.test";
    EXPECT_EQ(ensure_self_signed(dir.path(), names).made, "no subjectAltName DNS:mx.other.test");
}

// A certificate written as posthorn wrote it before subjectAltName: v1, CN only.
void write_old_style(const std::string& dir, const std::string& cn, X509* issuer,
                     EVP_PKEY* issuer_key) {
    PkeyPtr key(EVP_RSA_gen(2048));
    X509Ptr cert(X509_new());
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert.get()), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer)
                                                       : X509_get_subject_name(cert.get()));
    X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key.get(), EVP_sha256());
    std::FILE* c = std::fopen((dir + "/tls.crt").c_str(), "w");
    std::FILE* k = std::fopen((dir + "/tls.key").c_str(), "w");
    PEM_write_X509(c, cert.get());
    PEM_write_PrivateKey(k, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(c);
    std::fclose(k);
}

TEST(EnsureSelfSigned, ReplacesTheCnOnlyCertificateOfEarlierVersions) {
    TempDir dir;
    write_old_style(dir.path(), "localhost", nullptr, nullptr);
    const auto again = ensure_self_signed(dir.path(), kNames);
    EXPECT_EQ(again.made, "no subjectAltName DNS:mail.test");
    auto cert = read_cert(again.cert_path);
    ASSERT_TRUE(cert);
    EXPECT_EQ(verify_as_own_ca(cert.get(), "127.0.0.1"), "ok");
}

TEST(EnsureSelfSigned, NeverReplacesACertificateACaIssued) {
    TempDir ca_dir, dir;
    ensure_self_signed(ca_dir.path(), {.dns = {"ca.test"}});
    auto ca = read_cert(ca_dir.path() + "/tls.crt");
    std::FILE* f = std::fopen((ca_dir.path() + "/tls.key").c_str(), "r");
    PkeyPtr ca_key(PEM_read_PrivateKey(f, nullptr, nullptr, nullptr));
    std::fclose(f);
    write_old_style(dir.path(), "mail.test", ca.get(), ca_key.get());
    const auto before = slurp(dir.path() + "/tls.crt");
    EXPECT_EQ(ensure_self_signed(dir.path(), kNames).made, "");
    EXPECT_EQ(slurp(dir.path() + "/tls.crt"), before);
}

TEST(ServerCertificate, ReloadServesTheNewPairFromTheNextHandshake) {
    TempDir a, b, live;
    ensure_self_signed(a.path(), kNames);
    ensure_self_signed(b.path(), kNames);
    const auto cert = live.path() + "/tls.crt", key = live.path() + "/tls.key";
    const auto put = [&](const std::string& from_cert, const std::string& from_key) {
        fs::copy_file(from_cert, cert, fs::copy_options::overwrite_existing);
        fs::copy_file(from_key, key, fs::copy_options::overwrite_existing);
    };
    put(a.path() + "/tls.crt", a.path() + "/tls.key");
    auto tls = ServerCertificate::load(cert, key);
    auto ctx = tls->context();
    const auto fp_a = sha256(read_cert(a.path() + "/tls.crt").get());
    const auto fp_b = sha256(read_cert(b.path() + "/tls.crt").get());
    EXPECT_EQ(presented(*ctx), fp_a);
    EXPECT_NE(tls->describe().find(", CN=mail.test, valid until "), std::string::npos)
        << tls->describe();

    put(b.path() + "/tls.crt", b.path() + "/tls.key");
    EXPECT_EQ(presented(*ctx), fp_a) << "the files alone change nothing";
    EXPECT_EQ(tls->reload(), "");
    EXPECT_EQ(presented(*ctx), fp_b);

    // A key that is not the certificate's: refused, B stays.
    put(a.path() + "/tls.crt", b.path() + "/tls.key");
    const auto mismatch = tls->reload();
    EXPECT_NE(mismatch.find("key values mismatch"), std::string::npos) << mismatch;
    EXPECT_EQ(presented(*ctx), fp_b);
    // Unreadable: refused, B stays.
    fs::remove(cert);
    const auto gone = tls->reload();
    EXPECT_EQ(gone, "cannot read " + cert + ": No such file or directory");
    EXPECT_EQ(presented(*ctx), fp_b);
    // Not PEM: refused.
    std::ofstream(cert) << "not a certificate\n";
    EXPECT_NE(tls->reload(), "");
    EXPECT_EQ(presented(*ctx), fp_b);
}

TEST(ServerCertificate, LoadThrowsWithTheReason) {
    TempDir dir;
    try {
        ServerCertificate::load(dir.path() + "/none.crt", dir.path() + "/none.key");
        FAIL() << "loaded a missing pair";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot read " + dir.path() + "/none.crt: No such file or directory");
    }
}

}  // namespace
}  // namespace posthorn::crypto
