-- agentsla's own tables beside the exporter's traces table. Materializer workers own them:
-- each write is an insert of whole rows with a version, and ReplacingMergeTree keeps the
-- newest version of a key, so a replayed batch changes nothing (reads use FINAL).
create table if not exists $database.agentsla_tasks (
    $task_columns,
    version UInt64,
    -- 1 drops the task (FINAL hides it): a trace keyed by its id that joined a declared task
    is_deleted UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY task_id;

-- What materialization adds to each span of the traces table: its task, its failure reason
-- (collector/processing's Python rules, not repeated in SQL) and its logical call and attempt.
create table if not exists $database.agentsla_span_facts (
    trace_id String CODEC(ZSTD(1)),
    span_id String CODEC(ZSTD(1)),
    task_id String CODEC(ZSTD(1)),
    error_type Nullable(String),
    is_error Bool,
    call_id Nullable(String) CODEC(ZSTD(1)),
    attempt Nullable(Int32),
    version UInt64,
    written DateTime DEFAULT now()  -- when: retention's clock (no time of its own)
) ENGINE = ReplacingMergeTree(version)
ORDER BY (trace_id, span_id)
-- A pass looks up thousands of random trace ids, each in its own granule: small granules read
-- ~1/8 of the rows 8192 would (measured: 2.3 -> 0.4 s CPU for 7,000 traces of 10M facts).
SETTINGS index_granularity = 1024;

-- Which traces hold each task (one row per task and trace, written with its span facts), so a
-- task's spans are read by trace id (the `spans` view's join then reads only those facts)
-- instead of by the task id of every span. 1 drops a trace that moved to its declared task.
create table if not exists $database.agentsla_task_traces (
    task_id String CODEC(ZSTD(1)),
    trace_id String CODEC(ZSTD(1)),
    version UInt64,
    is_deleted UInt8 DEFAULT 0,
    written DateTime DEFAULT now()  -- when: retention's clock (no time of its own)
) ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY (task_id, trace_id);
-- (stores created before retention was kept: their rows' `written` is when a merge first
-- writes it, so they expire a retention after that, never earlier)
alter table $database.agentsla_span_facts add column if not exists written DateTime DEFAULT now();
alter table $database.agentsla_task_traces add column if not exists written DateTime DEFAULT now();

-- The columns of `spans` the window questions read (hops, /metrics' hop families, provider
-- calls), copied out of `spans` by the materializer for the spans it judged: sorted by end,
-- typed once, so a 24 h question reads a few columns instead of every span's attribute maps
-- joined with every span's facts. Spans not yet materialized are not in it.
-- (schema.judged_spans_ddl: agentsla_hop_spans and its FINAL view hop_spans)
$hop_spans_table;

-- The columns of `spans` the finding questions read (schema.FINDING_SPAN_COLUMNS), written by
-- the materializer beside hop_spans for the spans it judged: typed once per span and sorted by
-- end, so a window's findings read its granules' columns instead of every span's attribute
-- maps joined with its facts. One task's findings find its spans by trace id (the bloom
-- filter) within its time range (the key); the minmax index serves the ranges on start.
-- Spans not yet materialized are not in it.
-- (agentsla_finding_spans, with those indexes, and its FINAL view finding_spans)
$finding_spans_table;

-- Start-up backfills of a table added to stores that already hold judged spans
-- (queries.engines.clickhouse.backfill): one row per (table, day of span starts) planned, done
-- = 1 once that day is copied, so a restarted backfill resumes at the first pending day.
create table if not exists $database.agentsla_backfills (
    name String,
    day Date,
    done UInt8,
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (name, day);

-- How the shards' rows were cut (collector.store.clickhouse.rollups.check_shards): rule
-- 'task' once the rollups are kept by shards owning tasks by task id. A store whose N > 1
-- rollups hold no such row was kept by an earlier version whose shards owned traces.
create table if not exists $database.agentsla_shard_rule (
    rule String,
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY tuple();

-- Tasks keyed by the id of a trace not seen yet, joined by a queue consumer's trace whose entry
-- follows a link to it (collector/tasks/links.py): the consumer came first. When that trace
-- arrives declaring another task, the whole task moves; this table is how a pass knows such a
-- task exists without looking up every trace it resolves (materializer._provisional). One row
-- per consumer entry's start and task, written before the task's rows; rare, and a pass reads
-- those started since its oldest span (the linked trace's root started before the entry).
create table if not exists $database.agentsla_provisional_tasks (
    start_ns Int64,
    task_id String CODEC(ZSTD(1))
) ENGINE = ReplacingMergeTree
ORDER BY (start_ns, task_id);

-- Per shard ("K/N"): its tasks in progress after its last pass, with their traces (each pass
-- judges them all again, so the next pass reads this one row instead of every stored task;
-- no row yet: a scan of agentsla_tasks). Written after the task rows, before the watermark.
create table if not exists $database.agentsla_unfinished_tasks (
    shard String,
    tasks Array(Tuple(task_id String, trace_id String)) CODEC(ZSTD(1)),
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY shard;

-- Per shard ("K/N"): spans ending before watermark_ns are materialized.
create table if not exists $database.agentsla_watermarks (
    shard String,
    watermark_ns Int64,
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY shard;

create view if not exists $database.tasks as
select * except (version, is_deleted) from $database.agentsla_tasks final;

-- Each task row again, at the minute it counts in (its end once finished, else its start) and
-- under its shard ("K/N"): the rollups' upkeep and the questions' ragged edges read the tasks
-- of a minute as a range of this table, where agentsla_tasks (keyed by id) would be a lookup
-- of random ids. A pass writes a deleted row where a task no longer counts (it moved minutes,
-- or was dropped), so FINAL holds each task once, at its minute (rollups.index_tasks).
create table if not exists $database.agentsla_minute_tasks (
    minute_ns Int64,
    shard String,
    $task_columns,
    version UInt64,
    is_deleted UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY (minute_ns, shard, task_id);

create view if not exists $database.minute_tasks as
select * except (version, is_deleted) from $database.agentsla_minute_tasks final;

-- The alert lease (alerts/lease.py): claims and renewals appended with a version; FINAL keeps
-- the newest row of each (name, term, holder), and merges collapse renewals to that row, so
-- the table keeps a row per holder and term (terms grow only on takeovers).
create table if not exists $database.agentsla_leases (
    name String,
    term UInt64,
    holder String,
    claimed_ns Int64,
    expires_ns Int64,
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (name, term, holder);

-- Stored per-minute findings evidence (queries/findings/evidence.py, docs/findings.md): the
-- evidence rows of a stored question (its name @ digest) per minute and key, as its evidence
-- query returns them. A refresh writes a deleted row (is_deleted = 1) for every row of the
-- minutes it recomputes, then their new rows at a higher version, so a key that vanished
-- from a minute is gone; readers use FINAL.
create table if not exists $database.agentsla_finding_evidence (
    question String,
    minute_ns Int64,
    hop_kind Nullable(String),
    hop_name Nullable(String),
    task_type Nullable(String),
    label Nullable(String),
    n Map(String, Nullable(Float64)),
    task_ids Array(String) CODEC(ZSTD(1)),
    vals Map(String, Array(Float64)),
    examples Array(Tuple(Float64, String, String)),
    first_ns Nullable(Int64),
    last_ns Nullable(Int64),
    version UInt64,
    is_deleted UInt8 DEFAULT 0
) ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY (question, minute_ns, hop_kind, hop_name, task_type, label)
SETTINGS allow_nullable_key = 1;

-- The minutes whose evidence changed (inclusive minute bounds): marked by materializer passes
-- (before their first insert and again after their finding rows) and by the evidence worker
-- for minutes a round left; each mark has its own id, and the worker deletes (is_deleted = 1)
-- exactly the marks it saw, after it stored their minutes' evidence. marked_ns: when (unix ns, by
-- the marking process's clock); the worker leaves minutes marked within its interval for later.
create table if not exists $database.agentsla_evidence_dirty (
    id String,
    lo_ns Int64,
    hi_ns Int64,
    version UInt8 DEFAULT 0,  -- 0: the mark, 1: its deletion
    is_deleted UInt8 DEFAULT 0,
    marked_ns Int64 DEFAULT 0
) ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;
alter table $database.agentsla_evidence_dirty add column if not exists marked_ns Int64 DEFAULT 0;

-- The questions (name @ digest) agentsla_finding_evidence holds (one row each; version: when
-- registered, the newest registration wins).
create table if not exists $database.agentsla_evidence_questions (
    questions Array(String),
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY tuple();
