"""Configuration: TOML file, POSTHORN_* overrides, and exit code 2 naming the bad key."""
import os
import subprocess

from support.posthorn import BIN, free_port


def run_serve(ph, timeout=10):
    return subprocess.run(ph.args("serve"), env=ph.env, capture_output=True, text=True,
                          timeout=timeout)


def test_env_overrides_choose_the_listen_address(posthorn_factory):
    port = free_port()
    ph = posthorn_factory(env={"POSTHORN_HTTP_LISTEN": f"127.0.0.1:{port}"})
    ph.http_port = port
    ph.start()
    assert ph.get("/healthz").json() == {"status": "ok"}


def test_config_file_is_read_and_env_wins(posthorn_factory, tmp_path):
    file_port, env_port = free_port(), free_port()
    cfg = tmp_path / "p.toml"
    cfg.write_text(f'[http]\nlisten = "127.0.0.1:{file_port}"\n[retention]\nlogs_days = 7\n')
    ph = posthorn_factory(config=cfg)
    ph.env.pop("POSTHORN_HTTP_LISTEN")
    ph.http_port = file_port
    ph.start()
    assert ph.get("/healthz").status == 200
    assert ph.stop() == 0

    ph.env["POSTHORN_HTTP_LISTEN"] = f"127.0.0.1:{env_port}"
    ph.http_port = env_port
    ph.start()
    assert ph.get("/healthz").status == 200


BAD_FILES = [
    ('[http]\nlisten = 8080\n', "http.listen"),                      # wrong type
    ('[http]\nlisten = "not an address"\n', "http.listen"),          # unparsable
    ('[http]\nlisten = "127.0.0.1:70000"\n', "http.listen"),         # port out of range
    ('[http]\nlistn = "127.0.0.1:1"\n', "http.listn"),               # unknown key
    ('[htp]\nlisten = "127.0.0.1:1"\n', "[htp]"),                    # unknown section
    ('[delivery]\ntls = "sometimes"\n', "delivery.tls"),
    ('[delivery]\nretry_schedule_s = [60, "x"]\n', "delivery.retry_schedule_s"),
    ('[limits]\nmax_recipients = 0\n', "limits.max_recipients"),
    ('[webhooks]\nallow_private_targets = "yes"\n', "webhooks.allow_private_targets"),
    ('[dns]\nservers = ["127.0.0.1:notaport"]\n', "dns.servers"),
    ('[server]\npublic_url = "ftp://x"\n', "server.public_url"),
    ('[server]\nnetwork_threads = -1\n', "server.network_threads"),
    ('[http]\nmax_connections = 0\n', "http.max_connections"),
    ('[database]\nurl = "mysql://db"\n', "database.url"),
    ("this is = = not toml\n", "line 1"),
]


def test_bad_config_files_exit_2_naming_the_key(posthorn_factory, tmp_path):
    for i, (text, key) in enumerate(BAD_FILES):
        cfg = tmp_path / f"bad{i}.toml"
        cfg.write_text(text)
        ph = posthorn_factory(config=cfg)
        r = run_serve(ph)
        assert r.returncode == 2, (text, r.stderr)
        assert key in r.stderr, (text, r.stderr)
        assert not ph.db_path.exists(), "a refused config must not touch the data dir"


def test_bad_env_overrides_exit_2_naming_the_variable(posthorn_factory):
    for var, value in [("POSTHORN_HTTP_LISTEN", "localhost"),
                       ("POSTHORN_LIMITS_SEND_RATE_PER_MINUTE", "fast"),
                       ("POSTHORN_SMTP_ALLOW_AUTH_WITHOUT_TLS", "perhaps"),
                       ("POSTHORN_DNS_SERVERS", "127.0.0.1:5353,dns.example"),
                       ("POSTHORN_RETENTION_LOGS_DAYS", "0"),
                       ("POSTHORN_SERVER_NETWORK_THREADS", "257"),
                       ("POSTHORN_DELIVERY_LEASE_S", "5"),
                       ("POSTHORN_SERVER_MASTER_KEY_FILE", "")]:
        ph = posthorn_factory(env={var: value})
        r = run_serve(ph)
        assert r.returncode == 2, (var, r.stderr)
        assert var in r.stderr, (var, r.stderr)


def test_unreadable_config_file_exits_2(posthorn_factory, tmp_path):
    ph = posthorn_factory(config=tmp_path / "missing.toml")
    r = run_serve(ph)
    assert r.returncode == 2
    assert "missing.toml" in r.stderr


def test_an_unreachable_postgres_fails_the_start_without_showing_the_password(posthorn_factory):
    port = free_port()  # nothing listens there
    ph = posthorn_factory(env={"POSTHORN_DATABASE_URL": f"postgresql://u:s3cretpw@127.0.0.1:{port}/db"})
    r = run_serve(ph, timeout=30)
    out = r.stderr + r.stdout
    assert r.returncode == 1, out
    assert "PostgreSQL" in out
    assert f"postgresql://u:***@127.0.0.1:{port}/db" in out
    assert "s3cretpw" not in out


def test_cli_usage_errors_exit_2():
    for args in ([], ["nonsense"], ["key", "create"], ["account"]):
        r = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=10)
        assert r.returncode == 2, (args, r.stdout, r.stderr)


def test_listen_address_in_use_fails_cleanly(posthorn_factory):
    first = posthorn_factory().start()
    second = posthorn_factory(env={"POSTHORN_HTTP_LISTEN": f"127.0.0.1:{first.http_port}"})
    r = run_serve(second)
    assert r.returncode == 1
    assert "cannot listen" in r.stderr


def test_network_threads_default_to_one_fewer_than_the_cores(posthorn_factory):
    cores = os.cpu_count()
    ph = posthorn_factory()
    ph.start()
    want = max(1, cores - 1)
    assert f"({want} network thread{'' if want == 1 else 's'})" in ph.output(), ph.output()
    assert ph.stop() == 0
    three = posthorn_factory(env={"POSTHORN_SERVER_NETWORK_THREADS": "3"}, name="three")
    three.start()
    assert three.get("/healthz").status == 200
    assert "(3 network threads)" in three.output(), three.output()
