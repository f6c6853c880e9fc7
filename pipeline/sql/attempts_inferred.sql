-- attempts_inferred: attempts reconstructed from training output when the logs hold no
-- scheduler records (lower fidelity: start = first stamped line, end = last stamped line of
-- the attempt's output). Each output file (per job id) is one attempt, split again wherever a
-- checkpoint load starts a new incarnation (outputs appended across restarts).
WITH ev AS (
    SELECT file, line_no, ts, kind, coalesce(job_id, file) AS job_id
    FROM events
    WHERE source = 'joblog' AND ts IS NOT NULL AND ts_flag NOT IN ('missing')
),
seg AS (
    SELECT *, sum(CASE WHEN kind = 'ckpt_load' THEN 1 ELSE 0 END)
                  OVER (PARTITION BY file ORDER BY line_no) AS incarnation
    FROM ev
),
att AS (
    SELECT job_id, file, incarnation, min(ts) AS start, max(ts) AS "end",
           bool_or(kind = 'iteration') AS has_progress
    FROM seg
    GROUP BY job_id, file, incarnation
),
numbered AS (
    SELECT *, row_number() OVER (PARTITION BY job_id ORDER BY start) - 1 AS execution,
           count(*) OVER (PARTITION BY job_id) AS executions
    FROM att
)
SELECT
    CASE WHEN executions > 1 THEN n.job_id || '#' || execution ELSE n.job_id END AS attempt,
    n.job_id, execution, coalesce(m.run, 'run') AS run, 'inferred' AS source,
    NULL::VARCHAR AS name, NULL::VARCHAR AS state, NULL::VARCHAR AS reason,
    NULL::INTEGER AS exit_code, NULL::INTEGER AS signal, NULL::TIMESTAMPTZ AS submit,
    start, "end", []::VARCHAR[] AS nodes, NULL::INTEGER AS node_count, NULL::INTEGER AS gpus,
    NULL::INTEGER AS restart_count, 'progress' AS fidelity
FROM numbered n
LEFT JOIN run_map m ON m.job_id = n.job_id
WHERE has_progress
ORDER BY run, start, attempt
