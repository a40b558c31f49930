"""A certificate authority made at test time (python3-cryptography): a root, and leaf
certificates it signs for the names a test asks for, written as PEM files. Also the
digests a DANE TLSA record names (RFC 6698 §2.1: selector 1 = the SubjectPublicKeyInfo,
matching type 1 = SHA-256)."""
from __future__ import annotations

import datetime
import hashlib
import pathlib
import ssl

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


class TestCa:
    __test__ = False  # not a pytest class

    def __init__(self, workdir: pathlib.Path, name: str = "posthorn test CA"):
        self.dir = pathlib.Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(name)).issuer_name(_name(name))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(self.key, hashes.SHA256()))
        self.ca_file = self.dir / "ca.pem"
        self.ca_file.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, label: str, names: list[str]) -> tuple[pathlib.Path, pathlib.Path]:
        """A leaf for `names` (the first is the CN, all are DNS SANs): (cert+chain, key)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(names[0])).issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(self.key, hashes.SHA256()))
        cert_path, key_path = self.dir / f"{label}.crt", self.dir / f"{label}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM) +
                              self.cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return cert_path, key_path

    def server_context(self, label: str, names: list[str]) -> ssl.SSLContext:
        cert, key = self.issue(label, names)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        return ctx

    def ca_spki_sha256(self) -> str:
        return spki_sha256(self.cert)


def spki_sha256(cert: x509.Certificate) -> str:
    spki = cert.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(spki).hexdigest()


def leaf_spki_sha256(cert_path: pathlib.Path) -> str:
    """Of the first certificate in a PEM file (the leaf of cert+chain)."""
    return spki_sha256(x509.load_pem_x509_certificate(pathlib.Path(cert_path).read_bytes()))
