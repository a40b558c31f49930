"""SMTP submission as a client does it, for the tests (test_headers, test_scheduled,
test_smtp): EHLO, STARTTLS (the node's certificate is self-signed in its data dir, so it is
not verified), EHLO again, AUTH with the API key as user and password, then the message."""
import email.message
import smtplib
import ssl


def tls_context() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the server's certificate is self-signed in the data dir
    return ctx


def submit(ph, key, msg: email.message.EmailMessage, rcpts=None, from_addr=None):
    """Submits `msg` to `ph`'s submission port with `key`; answers smtplib's send_message
    result (the refused recipients). Raises smtplib's errors as they come."""
    with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
        s.ehlo("client.test")
        s.starttls(context=tls_context())
        s.ehlo("client.test")
        s.login(key, key)
        return s.send_message(msg, from_addr=from_addr, to_addrs=rcpts)
