-- events_anchored: the rows of `part` (a row group of events.parquet, its rows numbered `rn`)
-- with year-less stamps moved (year_shift) and kernel uptime-only stamps anchored to their
-- host's most recent boot (latest_boot, events_boots.sql), in the same order. Run per row
-- group, so the rewrite holds one row group at a time, not the whole file.
WITH ev AS (
    SELECT e.* REPLACE (CASE WHEN y.years IS NOT NULL AND e.ts_flag = 'inferred_year'
                             THEN e.ts + to_years(y.years) ELSE e.ts END AS ts)
    FROM part e LEFT JOIN year_shift y ON y.file = e.file
),
anchored AS (
    SELECT e.*, l.boot_us,
           e.ts IS NULL AND e.uptime_s IS NOT NULL AND l.boot_us IS NOT NULL AS fix
    FROM ev e LEFT JOIN latest_boot l ON e.host = l.host
)
SELECT
    CASE WHEN fix THEN make_timestamp(boot_us + CAST(round(uptime_s * 1e6) AS BIGINT))::TIMESTAMPTZ
         ELSE ts END AS ts,
    CASE WHEN fix THEN 'uptime_anchored' ELSE ts_flag END AS ts_flag,
    uptime_s, host, host_from, source, format, kind, job_id, rank, code, iteration, value,
    device, message, file, line_no
FROM anchored
ORDER BY rn;
