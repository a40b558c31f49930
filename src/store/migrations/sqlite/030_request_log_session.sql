-- Version 30: the request log marks the requests a dashboard session made (docs/api.md, "GET
-- /v1/logs": "source" is "dashboard" for them, "api" for a key given in the request). 1: the
-- session's cookie authenticated the request; 0: a key did (every entry written before).

ALTER TABLE request_logs ADD COLUMN session INTEGER NOT NULL DEFAULT 0;
