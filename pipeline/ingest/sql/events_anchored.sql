-- events_anchored: the view events (EVENTS columns, in file order) with kernel uptime-only
-- stamps anchored to wall time.
-- A host's boot time is estimated from its lines that carry both a wall-clock stamp and an
-- uptime stamp (syslog/journal "kernel: [12345.678901] ..."): boot = ts - uptime. Boots are
-- told apart by rounding the estimate to the minute; uptime-only lines (raw dmesg, which shows
-- only the running boot) are anchored to that host's most recent boot.
-- Year-less stamps of the files in year_shift (pipeline/ingest/years.py) move by its years
-- first: their year came from a copied file's mtime, outside every record of the campaign.
WITH ev AS (
    SELECT e.* REPLACE (CASE WHEN y.years IS NOT NULL AND e.ts_flag = 'inferred_year'
                             THEN e.ts + to_years(y.years) ELSE e.ts END AS ts)
    FROM events e LEFT JOIN year_shift y ON y.file = e.file
),
est AS (
    SELECT host, epoch_us(ts) - CAST(round(uptime_s * 1e6) AS BIGINT) AS boot_us
    FROM ev
    WHERE ts IS NOT NULL AND uptime_s IS NOT NULL AND host IS NOT NULL
),
boots AS (
    SELECT host, CAST(median(boot_us) AS BIGINT) AS boot_us
    FROM est
    GROUP BY host, boot_us // 60000000
),
latest AS (
    SELECT host, max(boot_us) AS boot_us FROM boots GROUP BY host
),
anchored AS (
    SELECT e.*, l.boot_us,
           e.ts IS NULL AND e.uptime_s IS NOT NULL AND l.boot_us IS NOT NULL AS fix
    FROM ev e LEFT JOIN latest l ON e.host = l.host
)
SELECT
    CASE WHEN fix THEN make_timestamp(boot_us + CAST(round(uptime_s * 1e6) AS BIGINT))::TIMESTAMPTZ
         ELSE ts END AS ts,
    CASE WHEN fix THEN 'uptime_anchored' ELSE ts_flag END AS ts_flag,
    uptime_s, host, host_from, source, format, kind, job_id, rank, code, iteration, value,
    device, message, file, line_no
FROM anchored
ORDER BY event_id;
