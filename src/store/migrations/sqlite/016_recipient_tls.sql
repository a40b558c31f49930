-- Version 16: the TLS of each recipient's last attempt (domain::TlsOutcome): the policy that
-- applied (none, opportunistic, required, verify, mta-sts, dane), the TLS version, whether
-- the certificate verified, and why not. NULL until an attempt gets that far.

ALTER TABLE recipients ADD COLUMN tls_policy TEXT;
ALTER TABLE recipients ADD COLUMN tls_version TEXT;
ALTER TABLE recipients ADD COLUMN tls_verified INTEGER;
ALTER TABLE recipients ADD COLUMN tls_failure TEXT;
