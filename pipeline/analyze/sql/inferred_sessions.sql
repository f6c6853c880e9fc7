-- inferred_sessions: the pieces of job output that attempts are inferred from
-- (attempts_inferred.sql reads them). Input: inference_files (the job-output files to read).
-- * Each output file (per job id) is cut into incarnations where a start shows: a checkpoint
--   load (or Megatron's "will not load any checkpoints"), cut at that line; or, with no load
--   since the last progress line, Megatron's "[before the start of training step]", cut at
--   the largest time gap after the last progress line (the time the job was down), else right
--   after that line. Error lines of the previous incarnation stay with it.
-- * An incarnation is cut again, in time order, where its stamped lines fall silent for more
--   than a day (86400 s): no training step, collective watchdog (PyTorch's and Megatron's
--   default 10 min) or checkpoint save is silent that long, so what comes after is another
--   program's lines or a later execution. Not where the line after the silence is
--   slurmstepd's "*** JOB N ... CANCELLED AT ..." of the same job: the job was held, hung,
--   until its time limit. Each piece is a session; a session with progress becomes an
--   attempt, one without is left out, and quality.py warns of every such cut.
-- * Lines without a stamp count with the first session (they can hold progress only).
-- * A checkpoint load with no stamp of its own takes the time of the next stamped line of its
--   file, as in attempt_events.sql (the previous line's stamp it inherited is the previous
--   incarnation's: the attempt would start on its predecessor's last line).
WITH ev AS (
    SELECT file, line_no, kind, coalesce(job_id, file) AS job_id,
           CASE WHEN kind = 'ckpt_load' AND ts_flag IN ('inherited', 'missing')
                THEN first_value(CASE WHEN ts_flag NOT IN ('inherited', 'missing') THEN ts END
                                 IGNORE NULLS)
                     OVER (PARTITION BY file ORDER BY line_no
                           ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
                ELSE ts END AS ts
    FROM events
    WHERE file IN (SELECT file FROM inference_files)
),
marks AS (
    -- every checkpoint load opens a start (each start loads once, also one that dies before
    -- training); a "[before the start of training step]" does when no load came since the
    -- last progress line (a run that starts from scratch prints none)
    SELECT m.file, m.line_no, m.kind,
           coalesce((SELECT max(p.line_no) FROM ev p WHERE p.file = m.file
                     AND p.kind = 'iteration' AND p.line_no < m.line_no), 0) AS last_iter,
           (SELECT max(l.line_no) FROM ev l WHERE l.file = m.file AND l.kind = 'ckpt_load'
                     AND l.line_no < m.line_no) AS last_load
    FROM ev m
    WHERE m.kind IN ('train_start', 'ckpt_load')
),
opens AS (
    SELECT * FROM marks
    WHERE kind = 'ckpt_load' OR last_load IS NULL OR last_load < last_iter
),
gaps AS (
    SELECT file, line_no, ts,
           epoch(ts) - epoch(lag(ts) OVER (PARTITION BY file ORDER BY line_no)) AS gap
    FROM ev
    WHERE ts IS NOT NULL
),
starts AS (
    -- a load is cut at itself; a bare training-start mark at the largest time gap since the
    -- last progress line (the time the job was down), else right after that line
    SELECT o.file,
           CASE WHEN o.kind = 'ckpt_load' THEN any_value(o.line_no)
                ELSE coalesce(arg_max(g.line_no, g.gap) FILTER (g.gap IS NOT NULL),
                              any_value(o.last_iter) + 1) END AS start_line
    FROM opens o
    LEFT JOIN gaps g ON g.file = o.file AND g.line_no > o.last_iter AND g.line_no <= o.line_no
    GROUP BY o.file, o.line_no, o.kind
),
bounds AS (
    SELECT DISTINCT file, start_line FROM starts
    UNION
    SELECT DISTINCT file, 1 FROM ev
),
seg AS (
    SELECT e.*, b.start_line AS incarnation
    FROM ev e ASOF JOIN bounds b ON e.file = b.file AND e.line_no >= b.start_line
),
timed AS (
    SELECT job_id, file, incarnation, line_no, ts, kind,
           epoch(ts) - epoch(lag(ts) OVER w) AS silence
    FROM seg
    WHERE ts IS NOT NULL
    WINDOW w AS (PARTITION BY job_id, file, incarnation ORDER BY ts, line_no)
),
cut AS (
    SELECT *, sum(CASE WHEN silence > 86400 AND kind <> 'slurm_job_cancelled' THEN 1 ELSE 0
                  END) OVER (PARTITION BY job_id, file, incarnation ORDER BY ts, line_no
                             ROWS UNBOUNDED PRECEDING) AS session
    FROM timed
),
untimed AS (
    SELECT job_id, file, incarnation, bool_or(kind = 'iteration') AS progress
    FROM seg
    WHERE ts IS NULL
    GROUP BY job_id, file, incarnation
)
SELECT c.job_id, c.file, c.incarnation, c.session, min(c.ts) AS start, max(c.ts) AS "end",
       bool_or(c.kind = 'iteration') OR (c.session = 0 AND coalesce(any_value(u.progress),
                                                                     false)) AS has_progress,
       count(DISTINCT c.line_no) AS lines,
       max(c.silence) FILTER (c.silence > 86400 AND c.kind <> 'slurm_job_cancelled')
           AS silence_before
FROM cut c
LEFT JOIN untimed u USING (job_id, file, incarnation)
GROUP BY c.job_id, c.file, c.incarnation, c.session
