-- attempts_linked: one row per attempt (one scheduler execution) with the run it belongs to.
-- Inputs: attempts_scheduled (job-level scheduler records from any source; a scontrol snapshot
-- only for jobs sacct does not cover; attempts_row: the record's rowid in attempts), run_map
-- (job_id -> run, possibly empty: the user's explicit mapping).
-- * The same execution reported by several sources (sacct text and sacct --json) is one
--   attempt; sacct text is preferred for the exit code (Slurm 22.05's JSON reports plain
--   non-zero exits as 0), the other fields are taken from the first source that has them;
--   a record with its end comes before a snapshot of the job still running (daily sacct
--   dumps, or a text dump beside a later --json: the RUNNING row's state and exit 0 won,
--   fault probe M3).
-- * Several executions of one job id (sacct --duplicates after a requeue) are attempts
--   "<job_id>#<n>", n = 0, 1, ... in start order; a job id run once keeps its plain id.
-- * The components of a heterogeneous job (sacct's JobID "<leader>+<offset>", one row each,
--   all starting together) are one execution of job <leader>: its nodes the union, its GPUs and
--   node count the sums, its name the leader's, its state, exit code and signal those of the
--   first component that did not complete (else the leader's).
-- * Run: the explicit mapping, else run_hint (PyTorchJob name), else the job name, else the id.
-- * Nodes: the list is carried as its record's row (attempts_row, the rowid in attempts) and
--   joined back at the end: node lists of thousands of hosts are slow to group and number.
WITH ranked AS (
    SELECT *,
           CASE source WHEN 'sacct' THEN 0 WHEN 'sacct_json' THEN 1 ELSE 2 END
           + CASE WHEN "end" IS NULL OR state IN ('RUNNING', 'PENDING', 'SUSPENDED',
                  'CONFIGURING', 'COMPLETING', 'RESIZING') THEN 10 ELSE 0 END AS pref
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
het AS (
    SELECT *, regexp_extract(job_id, '^(.+)\+[0-9]+$', 1) AS leader,
           TRY_CAST(regexp_extract(job_id, '\+([0-9]+)$', 1) AS INTEGER) AS part,
           coalesce(state, '') NOT IN ('', 'COMPLETED') AS bad
    FROM merged
),
executions AS (
    SELECT * EXCLUDE (leader, part, bad, nodes_row), [nodes_row] AS nodes_rows
    FROM het WHERE leader = ''
    UNION ALL BY NAME
    SELECT leader AS job_id, start,
           arg_min(source, part) AS source, arg_min(name, part) AS name,
           arg_min(run_hint, part) AS run_hint,
           coalesce(arg_min(state, part) FILTER (bad), arg_min(state, part)) AS state,
           coalesce(arg_min(reason, part) FILTER (bad), arg_min(reason, part)) AS reason,
           coalesce(arg_min(exit_code, part) FILTER (bad), arg_min(exit_code, part)) AS exit_code,
           coalesce(arg_min(signal, part) FILTER (bad), arg_min(signal, part)) AS signal,
           min(submit) AS submit, max("end") AS "end",
           list(nodes_row ORDER BY part) FILTER (nodes_row IS NOT NULL) AS nodes_rows,
           sum(node_count) AS node_count, sum(gpus) AS gpus, max(restart_count) AS restart_count
    FROM het WHERE leader <> ''
    GROUP BY leader, start
),
numbered AS (
    SELECT *,
           row_number() OVER (PARTITION BY job_id ORDER BY start) - 1 AS execution,
           count(*) OVER (PARTITION BY job_id) AS executions
    FROM executions
),
-- a heterogeneous job's nodes: the union of its components' lists
het_nodes AS (
    SELECT u.job_id, u.start, list_sort(list_distinct(flatten(list(a.nodes)))) AS nodes
    FROM (SELECT job_id, start, unnest(nodes_rows) AS r FROM numbered
          WHERE len(nodes_rows) > 1) u
    JOIN attempts a ON a.rowid = u.r
    GROUP BY u.job_id, u.start
)
SELECT
    CASE WHEN executions > 1 THEN n.job_id || '#' || execution ELSE n.job_id END AS attempt,
    n.job_id, execution, coalesce(m.run, n.run_hint, n.name, n.job_id) AS run,
    n.source, n.name, n.state, n.reason, n.exit_code, n.signal, n.submit, n.start, n."end",
    coalesce(hn.nodes, nd.nodes, []) AS nodes, n.node_count, n.gpus, n.restart_count
FROM numbered n
LEFT JOIN run_map m ON m.job_id = n.job_id
LEFT JOIN attempts nd ON nd.rowid = n.nodes_rows[1]
LEFT JOIN het_nodes hn ON hn.job_id = n.job_id AND hn.start = n.start
ORDER BY run, start, attempt
