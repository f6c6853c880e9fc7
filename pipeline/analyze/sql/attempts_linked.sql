-- attempts_linked: one row per attempt (one scheduler execution) with the run it belongs to.
-- Inputs: attempts_scheduled (job-level scheduler records from any source; a scontrol snapshot
-- only for jobs sacct does not cover; attempts_row: the record's rowid in attempts), run_map
-- (job_id -> run, possibly empty: the user's explicit mapping).
-- * The same execution reported by several sources (sacct text and sacct --json) is one
--   attempt; sacct text is preferred for the exit code (Slurm 22.05's JSON reports plain
--   non-zero exits as 0), the other fields are taken from the first source that has them.
-- * Several executions of one job id (sacct --duplicates after a requeue) are attempts
--   "<job_id>#<n>", n = 0, 1, ... in start order; a job id run once keeps its plain id.
-- * Run: the explicit mapping, else run_hint (PyTorchJob name), else the job name, else the id.
-- * Nodes: the list is carried as its record's row (attempts_row, the rowid in attempts) and
--   joined back at the end: node lists of thousands of hosts are slow to group and number.
WITH ranked AS (
    SELECT *,
           CASE source WHEN 'sacct' THEN 0 WHEN 'sacct_json' THEN 1 ELSE 2 END AS pref
    FROM attempts_scheduled
    WHERE start IS NOT NULL AND step IS NULL
),
merged AS (
    SELECT job_id, start,
           arg_min(source, pref) AS source,
           arg_min(name, pref) FILTER (name IS NOT NULL) AS name,
           arg_min(run_hint, pref) FILTER (run_hint IS NOT NULL) AS run_hint,
           arg_min(state, pref) FILTER (state IS NOT NULL) AS state,
           arg_min(reason, pref) FILTER (reason IS NOT NULL) AS reason,
           arg_min(exit_code, pref) FILTER (exit_code IS NOT NULL) AS exit_code,
           arg_min(signal, pref) FILTER (signal IS NOT NULL) AS signal,
           min(submit) AS submit,
           max("end") AS "end",
           arg_min(attempts_row, pref) FILTER (len(nodes) > 0) AS nodes_row,
           max(node_count) AS node_count,
           max(gpus) AS gpus,
           max(restart_count) AS restart_count
    FROM ranked
    GROUP BY job_id, start
),
numbered AS (
    SELECT *,
           row_number() OVER (PARTITION BY job_id ORDER BY start) - 1 AS execution,
           count(*) OVER (PARTITION BY job_id) AS executions
    FROM merged
)
SELECT
    CASE WHEN executions > 1 THEN n.job_id || '#' || execution ELSE n.job_id END AS attempt,
    n.job_id, execution, coalesce(m.run, n.run_hint, n.name, n.job_id) AS run,
    n.source, n.name, n.state, n.reason, n.exit_code, n.signal, n.submit, n.start, n."end",
    coalesce(nd.nodes, []) AS nodes, n.node_count, n.gpus, n.restart_count
FROM numbered n
LEFT JOIN run_map m ON m.job_id = n.job_id
LEFT JOIN attempts nd ON nd.rowid = n.nodes_row
ORDER BY run, start, attempt
