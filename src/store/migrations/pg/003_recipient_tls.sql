-- Version 3: the TLS of each recipient's last attempt (domain::TlsOutcome): the policy that
-- applied (none, opportunistic, required, verify, mta-sts, dane), the TLS version, whether
-- the certificate verified, and why not. NULL until an attempt gets that far.

ALTER TABLE recipients ADD COLUMN tls_policy text COLLATE "C";
ALTER TABLE recipients ADD COLUMN tls_version text COLLATE "C";
ALTER TABLE recipients ADD COLUMN tls_verified boolean;
ALTER TABLE recipients ADD COLUMN tls_failure text COLLATE "C";
