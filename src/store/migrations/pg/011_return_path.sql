-- Version 11: a custom return path (docs/domains.md#return-path). A domain has the label of
-- its return-path host (<label>.<domain>, a CNAME to the operator's bounce host) and whether
-- that CNAME was last found as published. An email keeps the domain of its envelope sender
-- (bounces+<token>@<return_path>), decided when it is accepted; NULL: smtp.hostname.

ALTER TABLE domains ADD COLUMN return_path_label text NOT NULL DEFAULT 'bounces';
ALTER TABLE domains ADD COLUMN return_path_verified boolean NOT NULL DEFAULT false;
ALTER TABLE emails ADD COLUMN return_path text;
