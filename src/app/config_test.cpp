#include "app/config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace posthorn::app {
namespace {

struct Env {
    std::map<std::string, std::string> vars;
    Getenv getenv() const {
        return [this](const char* n) -> const char* {
            auto it = vars.find(n);
            return it == vars.end() ? nullptr : it->second.c_str();
        };
    }
};

std::string write_toml(const std::string& text) {
    static int n = 0;
    auto path = std::filesystem::temp_directory_path() /
                ("ph_cfg_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".toml");
    std::ofstream(path) << text;
    return path.string();
}

std::string error_of(const std::string& toml, const Env& env = {}) {
    try {
        load_config(toml.empty() ? "" : write_toml(toml), env.getenv());
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

TEST(Config, DefaultsMatchDesign) {
    auto c = load_config("", Env{}.getenv());
    EXPECT_EQ(c.server.data_dir, "./data");
    EXPECT_EQ(c.http.listen.to_string(), "127.0.0.1:8080");
    EXPECT_EQ(c.smtp.submission_listen.port, 587);
    EXPECT_EQ(c.smtp.inbound_listen.port, 25);
    EXPECT_EQ(c.database.url, "sqlite://./data/posthorn.db");
    EXPECT_EQ(c.delivery.retry_schedule_s, (std::vector<int>{60, 300, 1800, 7200, 21600}));
    EXPECT_EQ(c.webhooks.retry_schedule_s.size(), 6u);
    EXPECT_EQ(c.limits.max_attachment_bytes, 26214400);
    EXPECT_EQ(c.retention.logs_days, 90);
    EXPECT_EQ(c.delivery.tls, TlsMode::opportunistic);
    EXPECT_EQ(c.delivery.tls_ca_file, "");
    EXPECT_EQ(c.delivery.mta_sts_port, 443);
    EXPECT_FALSE(c.delivery.mta_sts_allow_private);
}

TEST(Config, DeliveryTlsVerify) {
    auto c = load_config(
        "", Env{{{"POSTHORN_DELIVERY_TLS", "verify"}, {"POSTHORN_DELIVERY_MTA_STS_PORT", "8443"}}}
                .getenv());
    EXPECT_EQ(c.delivery.tls, TlsMode::verify);
    EXPECT_EQ(c.delivery.mta_sts_port, 8443);
    EXPECT_NE(
        error_of("[delivery]\ntls_ca_file = \"/nonexistent.pem\"\n").find("delivery.tls_ca_file"),
        std::string::npos);
}

TEST(Config, FileThenEnvironment) {
    Env env{{{"POSTHORN_HTTP_LISTEN", "127.0.0.1:18080"},
             {"POSTHORN_DNS_SERVERS", "127.0.0.1:5353, 127.0.0.2"},
             {"POSTHORN_DELIVERY_RETRY_SCHEDULE_S", "1,2,3"},
             {"POSTHORN_SMTP_ALLOW_AUTH_WITHOUT_TLS", "true"}}};
    auto path = write_toml(R"(
[server]
data_dir = "/tmp/x"
[http]
listen = "127.0.0.1:9000"
[limits]
max_recipients = 50
[delivery]
relay = "smarthost.example:2525"
)");
    auto c = load_config(path, env.getenv());
    EXPECT_EQ(c.http.listen.port, 18080);  // env beats the file
    EXPECT_EQ(c.server.data_dir, "/tmp/x");
    EXPECT_EQ(c.database.url, "sqlite:///tmp/x/posthorn.db");
    EXPECT_EQ(c.limits.max_recipients, 50);
    ASSERT_EQ(c.dns.servers.size(), 2u);
    EXPECT_EQ(c.dns.servers[1].port, 53);
    EXPECT_EQ(c.delivery.retry_schedule_s, (std::vector<int>{1, 2, 3}));
    EXPECT_TRUE(c.smtp.allow_auth_without_tls);
    ASSERT_TRUE(c.delivery.relay);
    EXPECT_EQ(c.delivery.relay->to_string(), "smarthost.example:2525");
}

TEST(Config, ErrorsNameTheKey) {
    EXPECT_NE(error_of("[http]\nlisten = 8080\n").find("http.listen"), std::string::npos);
    EXPECT_NE(error_of("[http]\nlisten = \"nowhere\"\n").find("http.listen"), std::string::npos);
    EXPECT_NE(error_of("[http]\nlisten = \"1.2.3.4:99999\"\n").find("http.listen"),
              std::string::npos);
    EXPECT_NE(error_of("[http]\nlisen = \"127.0.0.1:1\"\n").find("http.lisen"), std::string::npos);
    EXPECT_NE(error_of("[nope]\nx = 1\n").find("[nope]"), std::string::npos);
    EXPECT_NE(error_of("[delivery]\ntls = \"maybe\"\n").find("delivery.tls"), std::string::npos);
    EXPECT_NE(error_of("[delivery]\nretry_schedule_s = []\n").find("delivery.retry_schedule_s"),
              std::string::npos);
    EXPECT_NE(error_of("[retention]\nlogs_days = \"90\"\n").find("retention.logs_days"),
              std::string::npos);
    EXPECT_NE(error_of("[database]\nurl = \"mysql://x\"\n").find("database.url"),
              std::string::npos);
    EXPECT_NE(error_of("this is not toml").find("line 1"), std::string::npos);
    EXPECT_NE(error_of("", Env{{{"POSTHORN_LIMITS_MAX_RECIPIENTS", "many"}}})
                  .find("POSTHORN_LIMITS_MAX_RECIPIENTS"),
              std::string::npos);
    EXPECT_NE(error_of("[smtp]\ntls_cert = \"/nonexistent.pem\"\ntls_key = \"/nonexistent.key\"\n")
                  .find("smtp.tls_cert"),
              std::string::npos);
}

TEST(Config, Dashboard) {
    const auto d = load_config("", Env{}.getenv());
    EXPECT_TRUE(d.dashboard.enabled) << "on by default";
    EXPECT_EQ(d.dashboard.session_ttl_s, 43200);
    EXPECT_FALSE(d.dashboard_secure_cookie()) << "auto, and public_url is http://";
    EXPECT_FALSE(
        load_config("", Env{{{"POSTHORN_DASHBOARD_ENABLED", "false"}}}.getenv()).dashboard.enabled);
    EXPECT_EQ(load_config(write_toml("[dashboard]\nsession_ttl_s = 600\n"), Env{}.getenv())
                  .dashboard.session_ttl_s,
              600);
    EXPECT_TRUE(
        load_config("", Env{{{"POSTHORN_SERVER_PUBLIC_URL", "https://mail.example.net"}}}.getenv())
            .dashboard_secure_cookie())
        << "auto under an https public_url";
    EXPECT_TRUE(load_config("", Env{{{"POSTHORN_DASHBOARD_SECURE_COOKIE", "always"}}}.getenv())
                    .dashboard_secure_cookie());
    EXPECT_FALSE(load_config("", Env{{{"POSTHORN_SERVER_PUBLIC_URL", "https://mail.example.net"},
                                      {"POSTHORN_DASHBOARD_SECURE_COOKIE", "never"}}}
                                     .getenv())
                     .dashboard_secure_cookie());
    EXPECT_NE(error_of("[dashboard]\nsecure_cookie = \"maybe\"\n").find("dashboard.secure_cookie"),
              std::string::npos);
    EXPECT_NE(error_of("[dashboard]\nsession_ttl_s = 5\n").find("dashboard.session_ttl_s"),
              std::string::npos);
    EXPECT_NE(error_of("[dashboard]\nenabled = \"yes\"\n").find("dashboard.enabled"),
              std::string::npos);
}

TEST(Config, DkimRotateDays) {
    EXPECT_EQ(load_config("", Env{}.getenv()).dkim.rotate_days, 0) << "off by default";
    EXPECT_EQ(
        load_config(write_toml("[dkim]\nrotate_days = 90\n"), Env{}.getenv()).dkim.rotate_days, 90);
    EXPECT_EQ(load_config("", Env{{{"POSTHORN_DKIM_ROTATE_DAYS", "30"}}}.getenv()).dkim.rotate_days,
              30);
    EXPECT_NE(error_of("[dkim]\nrotate_days = -1\n").find("dkim.rotate_days"), std::string::npos);
    EXPECT_NE(error_of("[dkim]\nrotate_days = \"x\"\n").find("dkim.rotate_days"),
              std::string::npos);
}

TEST(Config, TrackingCnameTarget) {
    EXPECT_EQ(load_config("", Env{}.getenv()).tracking_cname_target(), "localhost")
        << "the host of the default public_url";
    EXPECT_EQ(
        load_config(
            "", Env{{{"POSTHORN_SERVER_PUBLIC_URL", "https://Mail.Example.net:8443/x"}}}.getenv())
            .tracking_cname_target(),
        "Mail.Example.net");
    EXPECT_EQ(
        load_config("", Env{{{"POSTHORN_TRACKING_CNAME_TARGET", "track.example.net"}}}.getenv())
            .tracking_cname_target(),
        "track.example.net");
    EXPECT_NE(error_of("[tracking]\ncname_target = \"not a host\"\n").find("tracking.cname_target"),
              std::string::npos);
}

// dns.return_path_target: empty by default (serve takes dns.inbound_mx), a host name
// otherwise (docs/configuration.md).
TEST(Config, ReturnPathTarget) {
    EXPECT_EQ(load_config("", Env{}.getenv()).dns.return_path_target, "");
    auto c =
        load_config("", Env{{{"POSTHORN_DNS_RETURN_PATH_TARGET", "rp.posthorn.example"}}}.getenv());
    EXPECT_EQ(c.dns.return_path_target, "rp.posthorn.example");
    EXPECT_EQ(load_config(write_toml("[dns]\nreturn_path_target = \"\"\n"), Env{}.getenv())
                  .dns.return_path_target,
              "");
    EXPECT_NE(
        error_of("[dns]\nreturn_path_target = \"not a host\"\n").find("dns.return_path_target"),
        std::string::npos);
}

TEST(Config, UnreadableFile) {
    try {
        load_config("/nonexistent/posthorn.toml", Env{}.getenv());
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/posthorn.toml"), std::string::npos);
    }
}

TEST(HostPort, Parses) {
    EXPECT_EQ(parse_host_port("127.0.0.1:25")->port, 25);
    EXPECT_EQ(parse_host_port("[::1]:8080")->host, "::1");
    EXPECT_EQ(parse_host_port("::1", 53)->host, "::1");
    EXPECT_FALSE(parse_host_port("127.0.0.1"));
    EXPECT_FALSE(parse_host_port("127.0.0.1:"));
    EXPECT_FALSE(parse_host_port(":80"));
    EXPECT_FALSE(parse_host_port("[::1"));
    EXPECT_FALSE(parse_host_port("h:-1"));
}

}  // namespace
}  // namespace posthorn::app
