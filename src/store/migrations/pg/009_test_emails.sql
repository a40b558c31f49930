-- Version 9: test mode (issue 29, point 3; domain/test_mode.hpp). An email sent with a test
-- key carries test = true: it was never queued (its recipients' outcomes were written with it)
-- and every event of it says so. Every email before this version is a live one.

ALTER TABLE emails ADD COLUMN test boolean NOT NULL DEFAULT false;
