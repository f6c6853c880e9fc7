-- attempt_events: the progress and checkpoint events of each attempt's own output.
-- An event belongs to the attempt of its job whose [start, end] holds its time. Its job: the
-- job id the line itself carries (from its file's name, slurm-1234.out) when the scheduler
-- records know that job, else the job(s) its file is linked to (output_links, links.py). Lines
-- with no stamp of their own carry the previous stamp of their file (ts_flag 'inherited'):
-- that places error and checkpoint-save lines with the attempt before them, which is right,
-- but a checkpoint *load* printed at the start of a requeued run (same output file, opened in
-- append mode) would land in the previous attempt, so an inherited load takes the time of the
-- next stamped line of its file instead (so does one printed before any stamp: 'missing').
-- torchrun's restart lines (elastic_restart) come along: restarts.py cuts attempts at them.
--
-- Progress lines without a stamp (Megatron-LM before mid-2023, Megatron-DeepSpeed and GPT-NeoX
-- print ' iteration      100/ 1000 | ... | elapsed time per iteration (ms): 812.3 | ...' with no
-- time) all inherit the stamp before them (e.g. '[before the start of training step] datetime:
-- ...'): days of training at one instant. Their time is *derived*: that stamp plus, line by
-- line, the printed time per iteration times the iterations since the previous progress line
-- (or load; from 0 when there is none) plus the save-checkpoint timers' seconds (Megatron stops
-- its interval timer around a save). Only when every progress line since that stamp has its
-- time per iteration; the derived time never passes the attempt's end ('derived' marks them).
-- Rows that inherit a stamped progress line's own time (Megatron's save lines after a stamped
-- iteration line) share their (file, ts) with that line, whose inc is NULL: not derived.
WITH raw AS (
    SELECT file, line_no, ts, ts_flag, kind, job_id, iteration, value, message,
           last_value(CASE WHEN kind IN ('iteration', 'ckpt_load') THEN iteration END
                      IGNORE NULLS)
               OVER (PARTITION BY file ORDER BY line_no
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_it
    FROM events
    WHERE kind IN ('iteration', 'ckpt_save_start', 'ckpt_save_end', 'ckpt_save_time',
                   'ckpt_load', 'elastic_restart')
),
step AS (
    SELECT *,
           CASE WHEN ts_flag <> 'inherited' THEN NULL
                WHEN kind = 'iteration'
                THEN value / 1000.0 * greatest(iteration - coalesce(prev_it, 0), 0)
                WHEN kind = 'ckpt_save_time' THEN coalesce(value, 0)
                ELSE 0 END AS inc
    FROM raw
),
ev AS (
    SELECT file, line_no, ts, ts_flag, kind, job_id, iteration, value, message,
           CASE WHEN kind = 'ckpt_load' AND ts_flag IN ('inherited', 'missing')
                THEN first_value(CASE WHEN ts_flag NOT IN ('inherited', 'missing') THEN ts END
                                 IGNORE NULLS)
                     OVER (PARTITION BY file ORDER BY line_no
                           ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
                ELSE ts END AS at,
           CASE WHEN ts_flag = 'inherited' AND kind <> 'ckpt_load'
                     AND count(*) FILTER (WHERE kind = 'iteration')
                         OVER (PARTITION BY file, ts) > 0
                     AND count(*) FILTER (WHERE kind = 'iteration' AND inc IS NULL)
                         OVER (PARTITION BY file, ts) = 0
                THEN ts + to_microseconds(CAST(round(1e6 * sum(inc) OVER (
                         PARTITION BY file, ts ORDER BY line_no
                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS BIGINT))
                END AS derived
    FROM step
),
known AS (SELECT DISTINCT job_id FROM attempts_linked),
-- one row per event and linked job (a file linked to several jobs gives several); rid names the
-- row, so that the three ways an event can belong to an attempt (below) are equi-joins whose
-- union is exactly the pairs one join with their OR would give (an OR join is a nested loop)
evj AS MATERIALIZED (
    SELECT ev.*, coalesce(k.job_id, l.job_id) AS link_job, row_number() OVER () AS rid
    FROM ev
    LEFT JOIN known k ON k.job_id = ev.job_id
    LEFT JOIN output_links l ON k.job_id IS NULL AND l.file = ev.file
),
pairs AS (
    SELECT ev.rid, a.attempt FROM evj ev JOIN attempts_linked a ON ev.link_job = a.job_id
    UNION
    -- output saved per pod (kubectl logs POD > .../POD.log): no job id in the lines, the
    -- pod's name in the file's path
    SELECT ev.rid, a.attempt FROM evj ev JOIN attempts_linked a
      ON ev.job_id IS NULL AND a.name IS NOT NULL AND a.source = 'k8s_pod'
         AND contains(ev.file, a.name)
    UNION
    -- attempts inferred from an output file: that file's lines
    SELECT ev.rid, a.attempt FROM evj ev JOIN attempts_linked a
      ON ev.job_id IS NULL AND a.source = 'inferred' AND ev.file = a.job_id
)
SELECT a.attempt, a.run,
       CASE WHEN ev.derived IS NULL THEN ev.at
            ELSE least(ev.derived, coalesce(a."end", ev.derived)) END AS ts,
       ev.kind, ev.iteration, ev.value, ev.file, ev.line_no, ev.derived IS NOT NULL AS derived
FROM pairs p
JOIN evj ev ON ev.rid = p.rid
JOIN attempts_linked a ON a.attempt = p.attempt
WHERE ev.at >= a.start
  AND ev.at <= coalesce(a."end", ev.at)
  -- a piece of an attempt cut at an in-job restart (restarts.py) ends where the next begins
  AND NOT (a.cut_end AND ev.at >= a."end")
ORDER BY a.run, a.start, ev.file, ev.line_no
