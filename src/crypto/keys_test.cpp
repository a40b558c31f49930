#include "crypto/keys.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "crypto/errors.hpp"

namespace posthorn::crypto {
namespace {

TEST(Base64, Rfc4648Vectors) {
    EXPECT_EQ(base64_encode(""), "");
    EXPECT_EQ(base64_encode("f"), "Zg==");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
    EXPECT_EQ(*base64_decode("Zm9vYg=="), "foob");
    EXPECT_EQ(*base64_decode("Zm9vYmE="), "fooba");
    EXPECT_EQ(*base64_decode(""), "");
    for (const char* bad : {"Zg=", "Zm9v YmFy", "Zm9v*mFy", "Z=9v", "===="})
        EXPECT_FALSE(base64_decode(bad)) << bad;
}

TEST(Rsa, GeneratesAMatchingPair) {
    auto pair = generate_rsa(2048);
    ASSERT_TRUE(pair);
    EXPECT_NE(pair->private_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
    EXPECT_GT(pair->public_spki_b64.size(), 350u);  // 294 DER bytes for RSA-2048
    EXPECT_EQ(*public_spki_b64_of(pair->private_pem), pair->public_spki_b64);
    EXPECT_FALSE(public_spki_b64_of("not a key"));
}

TEST(Seal, RoundTripsAndRefusesTampering) {
    const auto key = random_string(kMasterKeyBytes);
    const auto sealed = seal(key, "secret", "dkim:dom_1:ph1");
    EXPECT_EQ(sealed.find("secret"), std::string::npos);
    EXPECT_EQ(*open(key, sealed, "dkim:dom_1:ph1"), "secret");
    EXPECT_FALSE(open(key, sealed, "dkim:dom_2:ph1"));                // another context
    EXPECT_FALSE(open(random_string(32), sealed, "dkim:dom_1:ph1"));  // another key
    auto altered = sealed;
    altered[14] ^= 1;
    EXPECT_EQ(open(key, altered, "dkim:dom_1:ph1").error(), errc::auth_failed);
    EXPECT_NE(seal(key, "secret", "c"), seal(key, "secret", "c"));  // fresh nonce each time
}

TEST(MasterKey, IsCreatedOnceWithMode0600) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("ph_master_" + std::to_string(::getpid()) + ".key");
    std::filesystem::remove(path);
    auto first = load_or_create_master_key(path.string());
    ASSERT_TRUE(first);
    EXPECT_EQ(first->size(), kMasterKeyBytes);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(*load_or_create_master_key(path.string()), *first);
    std::ofstream(path, std::ios::trunc) << "short";
    EXPECT_EQ(load_or_create_master_key(path.string()).error(), errc::key_file);
    std::filesystem::remove(path);
}

TEST(MasterKey, NodesStartingTogetherShareOneKey) {
    // Several processes (here threads) creating a key file they share: one makes it, every
    // other reads that key, whole.
    const auto dir =
        std::filesystem::temp_directory_path() / ("ph_master_race_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (int round = 0; round < 20; ++round) {
        const auto path = (dir / ("k" + std::to_string(round))).string();
        std::vector<std::string> keys(8);
        std::vector<std::thread> threads;
        for (auto& k : keys)
            threads.emplace_back([&path, &k] {
                auto r = load_or_create_master_key(path);
                k = r ? *r : "error";
            });
        for (auto& t : threads) t.join();
        for (const auto& k : keys) {
            EXPECT_EQ(k.size(), kMasterKeyBytes);
            EXPECT_EQ(k, keys[0]);
        }
    }
    std::size_t left = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        left += e.path().filename().string().starts_with("k") ? 0 : 1;
    EXPECT_EQ(left, 0u) << "no temporary file is left behind";
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace posthorn::crypto
