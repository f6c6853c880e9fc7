-- events_boots: per host, its most recent boot (epoch microseconds), for events_anchored.
-- A host's boot time is estimated from its lines that carry both a wall-clock stamp and an
-- uptime stamp (syslog/journal "kernel: [12345.678901] ..."): boot = ts - uptime. Boots are
-- told apart by rounding the estimate to the minute; uptime-only lines (raw dmesg, which shows
-- only the running boot) are anchored to that host's most recent boot.
-- Year-less stamps of the files in year_shift (pipeline/ingest/years.py) move by its years
-- first: their year came from a copied file's mtime, outside every record of the campaign.
CREATE OR REPLACE TEMP TABLE latest_boot AS
WITH est AS (
    SELECT e.host,
           epoch_us(CASE WHEN y.years IS NOT NULL AND e.ts_flag = 'inferred_year'
                         THEN e.ts + to_years(y.years) ELSE e.ts END)
           - CAST(round(e.uptime_s * 1e6) AS BIGINT) AS boot_us
    FROM events e LEFT JOIN year_shift y ON y.file = e.file
    WHERE e.ts IS NOT NULL AND e.uptime_s IS NOT NULL AND e.host IS NOT NULL
),
boots AS (
    SELECT host, CAST(median(boot_us) AS BIGINT) AS boot_us
    FROM est
    GROUP BY host, boot_us // 60000000
)
SELECT host, max(boot_us) AS boot_us FROM boots GROUP BY host;
