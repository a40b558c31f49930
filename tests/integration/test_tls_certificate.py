"""The SMTP listeners' certificate as real clients see it (issue 28, points 5 and 7).

- The self-signed certificate made in the data dir names 127.0.0.1, localhost and the host
  name, and is its own CA: Python's smtplib, nodemailer and swaks verify it when given the
  file as their CA, with their usual checks on (no verify_mode = CERT_NONE, no
  rejectUnauthorized: false). One made by an earlier version, without those names, is made
  again at start.
- SIGHUP re-reads smtp.tls_cert and smtp.tls_key: the next STARTTLS presents the new
  certificate, a session encrypted before keeps going, and a pair that does not load is
  logged and the old one stays."""
from __future__ import annotations

import hashlib
import json
import pathlib
import shutil
import signal
import smtplib
import socket
import ssl
import subprocess

import pytest

from support.posthorn import wait_for

NODE_DIR = pathlib.Path(__file__).resolve().parents[1] / "node"


def strict_context(cafile) -> ssl.SSLContext:
    """Python's default client context trusting only `cafile`, with the strict X.509 checks
    that Python 3.13 turns on by default (so that a later Python accepts it too)."""
    ctx = ssl.create_default_context(cafile=str(cafile))
    ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    return ctx


def starttls(host: str, port: int, ctx: ssl.SSLContext) -> smtplib.SMTP:
    s = smtplib.SMTP(host, port, timeout=10)
    s.ehlo("client.test")
    code, _ = s.starttls(context=ctx)
    assert code == 220
    s.ehlo("client.test")
    return s


def presented(s: smtplib.SMTP) -> str:
    """SHA-256 of the certificate the server presented on this session."""
    return hashlib.sha256(s.sock.getpeercert(binary_form=True)).hexdigest()


def file_fingerprint(cert: pathlib.Path) -> str:
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert.read_text())).hexdigest()


def openssl_pair(directory: pathlib.Path, label: str, cn: str, san: str | None):
    """A self-signed pair made by the openssl command (as an operator would)."""
    cert, key = directory / f"{label}.crt", directory / f"{label}.key"
    args = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", f"/CN={cn}", "-keyout", str(key), "-out", str(cert)]
    if san:
        args += ["-addext", f"subjectAltName={san}"]
    subprocess.run(args, check=True, capture_output=True)
    return cert, key


def test_smtplib_verifies_the_generated_certificate_by_ip_and_by_name(server):
    cert = server.data_dir / "tls.crt"
    assert "made a self-signed certificate for DNS:localhost, IP:127.0.0.1" in server.output()
    assert f"SMTP TLS certificate {cert} (self-signed" in server.output()
    for host in ("127.0.0.1", "localhost"):
        with starttls(host, server.submission_port, strict_context(cert)) as s:
            assert s.sock.version() in ("TLSv1.2", "TLSv1.3")
            assert presented(s) == file_fingerprint(cert)
            assert s.noop()[0] == 250
    # The inbound listener presents the same certificate.
    with starttls("127.0.0.1", server.inbound_port, strict_context(cert)) as s:
        assert presented(s) == file_fingerprint(cert)
    # The checks are real: a name the certificate does not carry is refused, and so is the
    # certificate without the file as CA.
    with socket.create_connection(("127.0.0.1", server.submission_port), timeout=10) as raw:
        raw.recv(1024)
        raw.sendall(b"EHLO client.test\r\n")
        raw.recv(4096)
        raw.sendall(b"STARTTLS\r\n")
        assert raw.recv(1024).startswith(b"220")
        with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
            strict_context(cert).wrap_socket(raw, server_hostname="other.test")
    s = smtplib.SMTP("127.0.0.1", server.submission_port, timeout=10)
    with pytest.raises(ssl.SSLCertVerificationError, match="self.signed"):
        s.starttls(context=ssl.create_default_context())
    s.close()


def test_swaks_verifies_it_given_the_file(server):
    if not shutil.which("swaks"):
        pytest.skip("swaks is not installed (scripts/install-deps.sh installs it)")
    cert = server.data_dir / "tls.crt"

    def swaks(*extra):
        return subprocess.run(
            ["swaks", "--server", f"127.0.0.1:{server.submission_port}", "--tls",
             "--tls-verify", *extra, "--quit-after", "TLS", "--to", "x@example.net",
             "--helo", "client.test"], capture_output=True, text=True, timeout=60)

    ok = swaks("--tls-ca-path", str(cert))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "TLS started" in ok.stdout
    refused = swaks()  # the system's CAs do not know it
    assert refused.returncode != 0, refused.stdout


def nodemailer(host, port, ca) -> dict:
    r = subprocess.run(["node", str(NODE_DIR / "verify_tls.js"), host, str(port), str(ca)],
                       capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_nodemailer_verifies_it_given_the_file_as_ca(server):
    if not shutil.which("node") or not (NODE_DIR / "node_modules" / "nodemailer").exists():
        pytest.skip("nodemailer is not installed (scripts/install-deps.sh installs it)")
    cert = server.data_dir / "tls.crt"
    for host in ("127.0.0.1", "localhost"):
        out = nodemailer(host, server.submission_port, cert)
        assert out["ok"], out
    refused = nodemailer("127.0.0.1", server.submission_port, "-")
    assert not refused["ok"] and "self-signed" in refused["error"], refused


def test_a_certificate_of_an_earlier_version_is_made_again(posthorn_factory, tmp_path):
    ph = posthorn_factory(env={"POSTHORN_SMTP_HOSTNAME": "mail.posthorn.test"})
    ph.data_dir.mkdir()
    # What earlier versions wrote: the host name as CN, no subjectAltName.
    old_cert, old_key = openssl_pair(tmp_path, "old", "localhost", None)
    shutil.copy(old_cert, ph.data_dir / "tls.crt")
    shutil.copy(old_key, ph.data_dir / "tls.key")
    ph.start()
    cert = ph.data_dir / "tls.crt"
    assert file_fingerprint(cert) != file_fingerprint(old_cert)
    assert "made the self-signed certificate again, for DNS:mail.posthorn.test, " \
           "DNS:localhost, IP:127.0.0.1: the earlier one had no subjectAltName " \
           "DNS:mail.posthorn.test" in ph.output()
    assert (ph.data_dir / "tls.key").stat().st_mode & 0o777 == 0o600
    with starttls("127.0.0.1", ph.submission_port, strict_context(cert)) as s:
        assert presented(s) == file_fingerprint(cert)
    with starttls("localhost", ph.submission_port, strict_context(cert)):
        pass
    # A restart keeps the pair that names everything.
    assert ph.stop() == 0
    before = cert.read_bytes()
    ph.start()
    assert cert.read_bytes() == before


def test_sighup_reloads_the_certificate_without_dropping_sessions(posthorn_factory, tmp_path):
    live_cert, live_key = tmp_path / "live.crt", tmp_path / "live.key"
    a_cert, a_key = openssl_pair(tmp_path, "a", "localhost", "DNS:localhost,IP:127.0.0.1")
    b_cert, b_key = openssl_pair(tmp_path, "b", "localhost", "DNS:localhost,IP:127.0.0.1")
    shutil.copy(a_cert, live_cert)
    shutil.copy(a_key, live_key)
    ph = posthorn_factory(env={"POSTHORN_SMTP_TLS_CERT": str(live_cert),
                               "POSTHORN_SMTP_TLS_KEY": str(live_key)}).start()
    assert not (ph.data_dir / "tls.crt").exists(), "no self-signed pair beside a configured one"
    fp_a, fp_b = file_fingerprint(a_cert), file_fingerprint(b_cert)

    encrypted = starttls("127.0.0.1", ph.submission_port, strict_context(a_cert))
    assert presented(encrypted) == fp_a
    plain = smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10)  # STARTTLS comes later
    plain.ehlo("client.test")

    # The operator renews the certificate: the files first, then SIGHUP.
    shutil.copy(b_cert, live_cert)
    shutil.copy(b_key, live_key)
    ph.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "SMTP TLS certificate " + str(live_cert) + " reloaded" in ph.output(),
             what="the reload in the log")
    assert ph.proc.poll() is None, "SIGHUP must not stop the server"

    with starttls("127.0.0.1", ph.submission_port, strict_context(b_cert)) as s:
        assert presented(s) == fp_b
    assert plain.starttls(context=strict_context(b_cert))[0] == 220
    assert presented(plain) == fp_b, "a session opened before, encrypted after: the new one"
    plain.ehlo("client.test")
    assert plain.noop()[0] == 250
    plain.quit()
    # The session encrypted before the reload keeps going, on A.
    assert encrypted.noop()[0] == 250
    encrypted.ehlo("client.test")
    assert "starttls" not in encrypted.esmtp_features
    assert encrypted.rset()[0] == 250
    assert presented(encrypted) == fp_a
    encrypted.quit()

    # A key that is not the certificate's: an error in the log, B stays.
    shutil.copy(a_cert, live_cert)
    ph.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "keeping the SMTP TLS certificate in use: " + str(live_key) + ": "
             "key values mismatch" in ph.output(), what="the refused reload in the log")
    with starttls("127.0.0.1", ph.submission_port, strict_context(b_cert)) as s:
        assert presented(s) == fp_b
    # A file that cannot be read: the same.
    live_cert.unlink()
    ph.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: f"cannot read {live_cert}: No such file or directory" in ph.output(),
             what="the unreadable file in the log")
    with starttls("localhost", ph.submission_port, strict_context(b_cert)) as s:
        assert presented(s) == fp_b
    assert ph.proc.poll() is None
