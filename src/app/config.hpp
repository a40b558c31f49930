// app/config.hpp — the configuration of DESIGN §1: a TOML file, then environment
// overrides POSTHORN_<SECTION>_<KEY> (lists comma-separated), then validation.
// Every problem is a ConfigError whose message names the key; main() exits 2 on it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/log.hpp"

namespace posthorn::app {

struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct HostPort {
    std::string host;  // an IP literal, or a name where names are allowed
    std::uint16_t port = 0;
    std::string to_string() const;
};

enum class TlsMode { off, opportunistic, required, verify };
enum class LogFormat { text, json };

struct Config {
    struct {
        std::string data_dir = "./data";
        std::string public_url = "http://localhost:8080";
        int network_threads = 0;  // 0: one fewer than the cores, at least one
        std::string node_id;      // resolved: never empty after load (host name:HTTP port)
        // The key that seals secrets at rest; several nodes share it. Resolved: never empty
        // after load (<data_dir>/master.key).
        std::string master_key_file;
        // Exempt from the per-client bounds of every listener; the only peers a listener
        // with proxy_protocol takes a PROXY header from. Each checked: CIDR or an address.
        std::vector<std::string> trusted_networks{"127.0.0.0/8", "::1"};
        // On SIGTERM: how long SMTP transactions, requests and deliveries in flight have to
        // end before the process stops anyway.
        int shutdown_grace_s = 30;
    } server;
    struct {
        LogFormat format = LogFormat::text;
        log::Level level = log::Level::info;
    } log;
    struct {
        bool enabled = true;
        // GET /metrics answers clients from these networks, or presenting the token.
        std::vector<std::string> trusted_networks{"127.0.0.0/8", "::1"};
        std::string token;  // "": no token opens it
    } metrics;
    struct {
        HostPort listen{"127.0.0.1", 8080};
        int max_connections = 10000;           // open at once; at the cap the longest idle one goes
        int max_connections_per_client = 256;  // 0: no bound
        int connection_rate_per_client = 6000;  // a minute; 0: no bound
        int busy_idle_timeout_s = 5;            // between requests, from 3/4 of the cap
        bool proxy_protocol = false;
    } http;
    struct {
        HostPort submission_listen{"127.0.0.1", 587};
        HostPort inbound_listen{"127.0.0.1", 25};
        std::string hostname = "localhost";
        std::string tls_cert;
        std::string tls_key;
        bool allow_auth_without_tls = false;
        int max_connections = 1000;             // on each listener
        int max_connections_per_client = 50;    // 0: no bound
        int connection_rate_per_client = 1200;  // a minute; 0: no bound
        int busy_idle_timeout_s = 10;           // waiting for a command, from 3/4 of the cap
        bool submission_proxy_protocol = false;
        bool inbound_proxy_protocol = false;
        int auth_max_failures = 10;  // failed AUTH from one client before it is locked out
        int auth_lockout_s = 600;    // how long, and the window failures are counted in
    } smtp;
    struct {
        std::string url;  // resolved: never empty after load
    } database;
    struct {
        std::vector<HostPort> servers;  // empty: /etc/resolv.conf
        std::string dkim_zone = "dkim.localhost";
        std::string spf_include = "spf.localhost";
        std::string inbound_mx = "localhost";
        // The CNAME target of the users' return-path hosts (<label>.<domain>); "": inbound_mx.
        std::string return_path_target;
        int pending_recheck_s = 300;     // re-verify PENDING domains this often
        int verified_recheck_s = 86400;  // re-check VERIFIED domains this often
    } dns;
    struct {
        int rotate_days = 0;  // rotate a VERIFIED domain's DKIM key this old; 0: never
    } dkim;
    struct {
        std::string cname_target;  // of custom tracking hosts; "": the host of public_url
    } tracking;
    struct {
        int mx_port = 25;
        std::optional<HostPort> relay;
        bool allow_private_targets = false;  // MX hosts at private addresses
        TlsMode tls = TlsMode::opportunistic;
        std::string tls_ca_file;  // "": the system's CAs (verify, MTA-STS, DANE-TA chains)
        int mta_sts_port = 443;   // of the MTA-STS policy host (tests only)
        bool mta_sts_allow_private = false;  // fetch policies from private addresses (tests)
        std::vector<int> retry_schedule_s{60, 300, 1800, 7200, 21600};
        int connect_timeout_s = 30;
        int command_timeout_s = 300;
        int max_connections = 64;            // SMTP sessions open at once, in all
        int max_connections_per_domain = 8;  // … to one destination
        int lease_s = 300;  // a claim of mail to deliver lasts this long unless renewed
    } delivery;
    struct {
        int send_rate_per_minute = 1000;
        int max_recipients = 10000;
        std::int64_t max_attachment_bytes = 26214400;
    } limits;
    struct {
        int logs_days = 90;
    } retention;
    struct {
        bool enabled = true;                 // serve the dashboard at / (docs/dashboard.md)
        std::int64_t session_ttl_s = 43200;  // a session's lifetime from its sign-in
        // Whether the session cookie carries Secure: "auto" (when server.public_url is
        // https://: the HTTP listener has no TLS of its own, a proxy in front serves it),
        // "always" or "never".
        std::string secure_cookie = "auto";
    } dashboard;
    struct {
        bool allow_private_targets = false;
        std::vector<int> retry_schedule_s{10, 60, 600, 3600, 21600, 86400};
    } webhooks;

    // dashboard.secure_cookie decided: "always", or "auto" with an https:// public_url.
    bool dashboard_secure_cookie() const;
    // sqlite://PATH → PATH; empty for other schemes.
    std::string sqlite_path() const;
    // tracking.cname_target, or the host of server.public_url when it is not set.
    std::string tracking_cname_target() const;
    // The largest request body the HTTP server reads: the base64 of max_attachment_bytes
    // plus 2 MiB for the rest of the JSON.
    std::size_t http_body_limit() const;
};

using Getenv = std::function<const char*(const char*)>;

// Loads `path` (empty: defaults only), applies the environment, validates.
// `getenv` is injectable for tests. Throws ConfigError.
Config load_config(const std::string& path, const Getenv& getenv);

// "host:port", "[v6]:port"; `default_port` used when there is no port (0: required).
std::optional<HostPort> parse_host_port(std::string_view text, std::uint16_t default_port = 0);

}  // namespace posthorn::app
