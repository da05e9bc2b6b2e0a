"""PagerDuty Events API v2: trigger and resolve, one dedup_key per alert group."""
